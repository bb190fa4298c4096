package proc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// IsNamespaceInit reports whether this process is PID 1 of its PID namespace, as the instance
// manager is in its container: when it exits, the kernel kills every other process of the
// namespace, so its children need no parent-death signal to die with it.
func IsNamespaceInit() bool { return os.Getpid() == 1 }

// ErrNotAdoptable is returned by Adopt for a process that is not a live child of this process.
var ErrNotAdoptable = errors.New("not a running child of this process")

// Adopt returns the Child of pid, a process this process started before it replaced its own
// program (Reexec): a child stays the child of its parent process across execve. It checks that
// pid is a live child of this process, so that a stale or forged pid is never signalled.
func Adopt(pid int) (*Child, error) {
	ppid, state, err := parentOf(pid)
	if err != nil {
		return nil, fmt.Errorf("process %d: %w: %w", pid, ErrNotAdoptable, err)
	}
	if ppid == os.Getpid() && (state == "Z" || state == "X") {
		// Our child, exited: reaped here, as nothing else waits for it.
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
	}
	if ppid != os.Getpid() || state == "Z" || state == "X" {
		return nil, fmt.Errorf("process %d (parent %d, state %s): %w", pid, ppid, state, ErrNotAdoptable)
	}
	p, err := os.FindProcess(pid) // never fails on Linux
	if err != nil {
		return nil, err
	}
	c := &Child{pid: pid, done: make(chan struct{})}
	go func() {
		st, err := p.Wait()
		c.state = st
		switch {
		case err != nil:
			c.err = err
		case !st.Success():
			c.err = &exec.ExitError{ProcessState: st}
		}
		close(c.done)
	}()
	return c, nil
}

// parentOf reads the parent pid and the state of pid from /proc.
func parentOf(pid int) (ppid int, state string, err error) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, "", err
	}
	// The command name, in parentheses, may hold spaces and parentheses: the fields follow the
	// last closing one.
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 {
		return 0, "", fmt.Errorf("unreadable /proc/%d/stat", pid)
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 2 {
		return 0, "", fmt.Errorf("unreadable /proc/%d/stat", pid)
	}
	ppid, err = strconv.Atoi(fields[1])
	return ppid, fields[0], err
}

// Reexec replaces this process's program with path, keeping its pid and therefore its children:
// the same arguments, and env as its environment. It returns only when execve fails. Only the
// init of a PID namespace may do it: elsewhere the children StartTied started carry a
// parent-death signal, which the kernel sends when execve ends the thread that forked them.
func Reexec(path string, env []string) error {
	if !IsNamespaceInit() {
		return errors.New("only the init process of a PID namespace replaces itself: its children would be killed")
	}
	args := append([]string{path}, os.Args[1:]...)
	return syscall.Exec(path, args, env)
}

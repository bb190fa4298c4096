package proc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

// helperEnv makes the test binary act as a parent that starts a tied sleep, prints its pid and
// waits to be killed.
const helperEnv = "PROC_TEST_TIED_PARENT"

func TestMain(m *testing.M) {
	reexecHelper()
	if os.Getenv(helperEnv) == "1" {
		c, err := StartTied(exec.Command("sleep", "600"))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Println(c.Pid())
		time.Sleep(time.Hour)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// alive reports whether pid is a process that has not exited (a zombie has).
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses.
	rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
	fields := strings.Fields(rest)
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}

func TestAChildDiesWithItsParentProcess(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	parent := exec.Command(self)
	parent.Env = append(os.Environ(), helperEnv+"=1")
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	parent.Stderr = os.Stderr
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = parent.Process.Kill(); _ = parent.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the child's pid from the parent: %v", err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("parent printed %q", line)
	}
	t.Cleanup(func() { _ = syscall.Kill(child, syscall.SIGKILL) })
	if !alive(child) {
		t.Fatalf("the tied sleep (pid %d) is not running while its parent is", child)
	}
	if err := parent.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	check.Eventually(t, 5*time.Second, fmt.Sprintf("the tied sleep (pid %d) is gone after its parent was killed", child),
		check.True(func() bool { return !alive(child) }))
}

func TestAChildOutlivesTheThreadOfTheGoroutineThatStartedIt(t *testing.T) {
	started := make(chan *Child, 1)
	go func() {
		// Locked and never unlocked: the runtime ends this thread when the goroutine returns.
		runtime.LockOSThread()
		c, err := StartTied(exec.Command("sleep", "600"))
		if err != nil {
			t.Error(err)
		}
		started <- c
	}()
	c := <-started
	if c == nil {
		t.FailNow()
	}
	defer c.Kill()
	time.Sleep(300 * time.Millisecond)
	if c.Exited() || !alive(c.Pid()) {
		t.Fatalf("the child died with the starting goroutine's thread: %v", c.Err())
	}
}

func TestWaitAndDoneReportTheExit(t *testing.T) {
	c, err := StartTied(exec.Command("/bin/sh", "-c", "exit 3"))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Done not closed after the child exited")
	}
	if !c.Exited() {
		t.Error("Exited is false after Done was closed")
	}
	for i := range 2 {
		var exit *exec.ExitError
		if err := c.Wait(); !errors.As(err, &exit) || exit.ExitCode() != 3 {
			t.Errorf("Wait #%d = %v, want exit status 3", i+1, err)
		}
	}
	if err := c.Err(); err == nil || err != c.Wait() {
		t.Errorf("Err = %v, want Wait's error", err)
	}
	if st := c.State(); st == nil || st.ExitCode() != 3 {
		t.Errorf("State = %v, want exit status 3", st)
	}
	if err := c.Signal(syscall.SIGTERM); err != nil {
		t.Errorf("Signal after the exit = %v, want nil", err)
	}
}

func TestErrAndStateAreNilWhileTheChildRuns(t *testing.T) {
	c, err := StartTied(exec.Command("sleep", "600"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Exited() || c.Err() != nil || c.State() != nil {
		t.Errorf("running child: Exited %v, Err %v, State %v", c.Exited(), c.Err(), c.State())
	}
	c.Kill()
	if !c.Exited() || c.Err() == nil {
		t.Errorf("killed child: Exited %v, Err %v", c.Exited(), c.Err())
	}
}

func TestStartTiedReturnsTheStartError(t *testing.T) {
	c, err := StartTied(exec.Command("/nonexistent/program"))
	if err == nil || c != nil {
		t.Fatalf("StartTied = %v, %v; want an error", c, err)
	}
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("error %v, want one that is os.ErrNotExist", err)
	}
}

func TestStartTiedKeepsTheCallersProcessAttributes(t *testing.T) {
	cmd := exec.Command("sleep", "600")
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: "/"}
	c, err := StartTied(cmd)
	if err != nil {
		t.Fatalf("StartTied: %v", err)
	}
	defer c.Kill()
	if cmd.SysProcAttr.Chroot != "/" || !cmd.SysProcAttr.Setpgid || cmd.SysProcAttr.Pdeathsig != syscall.SIGKILL {
		t.Errorf("SysProcAttr %+v: want Chroot kept, Setpgid and Pdeathsig added", cmd.SysProcAttr)
	}
	if pgid, err := syscall.Getpgid(c.Pid()); err != nil || pgid != c.Pid() {
		t.Errorf("process group %d (%v), want the child's own %d", pgid, err, c.Pid())
	}
}

func TestStopEndsAChildThatHonoursSIGTERM(t *testing.T) {
	c, err := StartTied(exec.Command("sleep", "600"))
	if err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	if err := c.Stop(10 * time.Second); err != nil {
		t.Errorf("Stop = %v, want nil", err)
	}
	if took := time.Since(begin); took > 5*time.Second {
		t.Errorf("Stop took %s, want well below the grace period", took)
	}
	var exit *exec.ExitError
	if err := c.Wait(); !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
		t.Errorf("Wait = %v, want terminated by SIGTERM", err)
	}
}

// ignoreTERM runs a shell whose SIGTERM is ignored, as is that of the sleep it starts in its
// process group; it prints the sleep's pid.
func ignoreTERM(t *testing.T) (c *Child, grandchild int) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", "trap '' TERM; sleep 600 & echo $!; wait")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c, err = StartTied(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Kill)
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the grandchild's pid: %v", err)
	}
	grandchild, err = strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("the shell printed %q", line)
	}
	t.Cleanup(func() { _ = syscall.Kill(grandchild, syscall.SIGKILL) })
	return c, grandchild
}

func TestStopKillsTheGroupAfterTheGracePeriod(t *testing.T) {
	c, grandchild := ignoreTERM(t)
	begin := time.Now()
	if err := c.Stop(300 * time.Millisecond); !errors.Is(err, ErrKilled) {
		t.Errorf("Stop = %v, want ErrKilled", err)
	}
	if took := time.Since(begin); took < 300*time.Millisecond || took > 5*time.Second {
		t.Errorf("Stop took %s, want about the 300ms grace period", took)
	}
	check.Eventually(t, 5*time.Second, "the sleep in the child's process group is killed too",
		check.True(func() bool { return !alive(grandchild) }))
}

func TestTerminateWaitsForGiveUp(t *testing.T) {
	c, _ := ignoreTERM(t)
	giveUp := make(chan time.Time)
	result := make(chan error, 1)
	go func() { result <- c.Terminate(giveUp) }()
	select {
	case err := <-result:
		t.Fatalf("Terminate returned %v before giveUp delivered", err)
	case <-time.After(300 * time.Millisecond):
	}
	giveUp <- time.Now()
	if err := <-result; !errors.Is(err, ErrKilled) {
		t.Errorf("Terminate = %v, want ErrKilled", err)
	}
}

func TestStopIsSafeToCallTwice(t *testing.T) {
	t.Run("concurrent calls return the first one's result", func(t *testing.T) {
		c, _ := ignoreTERM(t)
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range errs {
			wg.Go(func() { errs[i] = c.Stop(200 * time.Millisecond) })
		}
		wg.Wait()
		for i, err := range errs {
			if !errors.Is(err, ErrKilled) {
				t.Errorf("call %d = %v, want ErrKilled", i+1, err)
			}
		}
	})
	t.Run("a later call returns at once with the same result", func(t *testing.T) {
		c, err := StartTied(exec.Command("sleep", "600"))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Stop(10 * time.Second); err != nil {
			t.Fatalf("first Stop = %v", err)
		}
		begin := time.Now()
		if err := c.Stop(time.Hour); err != nil || time.Since(begin) > time.Second {
			t.Errorf("second Stop = %v after %s, want nil at once", err, time.Since(begin))
		}
		c.Kill() // and Kill after Stop neither blocks nor fails
	})
	t.Run("stopping an exited child returns nil", func(t *testing.T) {
		c, err := StartTied(exec.Command("true"))
		if err != nil {
			t.Fatal(err)
		}
		<-c.Done()
		if err := c.Stop(time.Second); err != nil {
			t.Errorf("Stop = %v, want nil", err)
		}
	})
}

func TestRunWaitsForTheChild(t *testing.T) {
	var out strings.Builder
	cmd := exec.Command("/bin/sh", "-c", "echo tied; exit 4")
	cmd.Stdout = &out
	var exit *exec.ExitError
	if err := Run(cmd); !errors.As(err, &exit) || exit.ExitCode() != 4 {
		t.Errorf("Run = %v, want exit status 4", err)
	}
	if out.String() != "tied\n" {
		t.Errorf("output %q, want the child's whole output", out.String())
	}
	if cmd.SysProcAttr.Pdeathsig != syscall.SIGKILL {
		t.Error("Run did not tie the child")
	}
}

func TestRunEndsWithTheContextOfTheCommand(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	begin := time.Now()
	if err := Run(exec.CommandContext(ctx, "sleep", "600")); err == nil {
		t.Error("Run = nil, want the error of a killed child")
	}
	if took := time.Since(begin); took > 5*time.Second {
		t.Errorf("Run returned after %s, want soon after the context ended", took)
	}
}

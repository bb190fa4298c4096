package proc

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// reexecEnv makes the test binary, started as the init of a new PID namespace, act out an
// in-place replacement: "start" starts a tied sleep and replaces itself (Reexec) with
// reexecEnv=adopt and the sleep's pid in reexecPidEnv; "adopt" adopts the sleep, checks it runs,
// ends it with SIGTERM and prints what it saw.
const (
	reexecEnv    = "PROC_TEST_REEXEC"
	reexecPidEnv = "PROC_TEST_REEXEC_PID"
)

// reexecHelper runs the helper's part; it returns false when the binary is not the helper.
func reexecHelper() bool {
	switch os.Getenv(reexecEnv) {
	case "start":
		c, err := StartTied(exec.Command("sleep", "600"))
		if err != nil {
			fmt.Println("start:", err)
			os.Exit(2)
		}
		self, _ := os.Executable()
		env := []string{reexecEnv + "=adopt", reexecPidEnv + "=" + strconv.Itoa(c.Pid())}
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, reexecEnv) {
				env = append(env, kv)
			}
		}
		// A goroutine other than the one that forked the sleep replaces the process, as the
		// instance manager's control API does: the sleep must survive it.
		done := make(chan error)
		go func() { done <- Reexec(self, env) }()
		fmt.Println("reexec:", <-done)
		os.Exit(2)
	case "adopt":
		pid, _ := strconv.Atoi(os.Getenv(reexecPidEnv))
		c, err := Adopt(pid)
		if err != nil {
			fmt.Println("adopt:", err)
			os.Exit(2)
		}
		if _, err := Adopt(os.Getpid()); err == nil {
			fmt.Println("adopted itself")
			os.Exit(2)
		}
		time.Sleep(200 * time.Millisecond)
		alive := !c.Exited()
		err = c.Stop(5 * time.Second)
		ws := c.State().Sys().(syscall.WaitStatus)
		fmt.Printf("pid1=%v alive=%v stop=%v signaled=%v signal=%v\n", os.Getpid() == 1, alive, err, ws.Signaled(), ws.Signal())
		os.Exit(0)
	}
	return false
}

func TestAChildSurvivesItsNamespaceInitReplacingItself(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("this test starts a PID namespace (unshare --pid --mount-proc) and needs root, as make test does")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("unshare", "--pid", "--fork", "--mount-proc", "--kill-child", self, "-test.run=^$")
	cmd.Env = append(os.Environ(), reexecEnv+"=start")
	out, err := cmd.CombinedOutput()
	got := strings.TrimSpace(string(out))
	want := "pid1=true alive=true stop=<nil> signaled=true signal=terminated"
	if err != nil || got != want {
		t.Fatalf("the helper printed %q (%v), want %q", got, err, want)
	}
}

func TestAdoptRefusesAProcessThatIsNotAChild(t *testing.T) {
	if _, err := Adopt(os.Getppid()); err == nil {
		t.Fatal("adopted the parent process")
	}
	if _, err := Adopt(1 << 22); err == nil { // above pid_max's default
		t.Fatal("adopted a pid that does not exist")
	}
	c, err := StartTied(exec.Command("true"))
	if err != nil {
		t.Fatal(err)
	}
	_ = c.Wait()
	if _, err := Adopt(c.Pid()); err == nil {
		t.Fatal("adopted a child that has exited and been reaped")
	}
}

func TestReexecRefusedOutsideANamespaceInit(t *testing.T) {
	if IsNamespaceInit() {
		t.Fatal("the test binary runs as PID 1")
	}
	if err := Reexec("/bin/true", nil); err == nil {
		t.Fatal("Reexec replaced a process that is not a namespace's init")
	}
}

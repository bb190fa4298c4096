package instance

import (
	"errors"
	"os"
	"strconv"

	"github.com/go-logr/logr"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/proc"
)

// adoptMysqld takes back the mysqld the previous program of this process started, when an
// in-place update handed it over (MysqldPIDEnv); nil after an ordinary start. A pid that is not a
// live child of this process is logged and ignored: mysqld is then started as usual.
func adoptMysqld(log logr.Logger) *proc.Child {
	v, ok := os.LookupEnv(MysqldPIDEnv)
	if !ok {
		return nil
	}
	_ = os.Unsetenv(MysqldPIDEnv) // mysqld and later programs inherit the environment
	pid, err := strconv.Atoi(v)
	if err != nil {
		log.Info("ignoring an unreadable mysqld pid handed over by the previous program", "value", v)
		return nil
	}
	c, err := proc.Adopt(pid)
	if err != nil {
		log.Info("the mysqld handed over by the previous program is not running; starting one", "pid", pid, "error", err.Error())
		return nil
	}
	log.Info("instance manager replaced in place; mysqld kept running", "pid", pid)
	return c
}

// updateReady says why the instance cannot take an in-place update now, "" when it can: the
// new program takes a running mysqld on a bootstrapped data directory back, nothing else.
func (m *manager) updateReady(state *LocalState) func() string {
	return func() string {
		switch {
		case !state.BootstrapDone():
			return "the instance is still bootstrapping"
		case m.sup == nil || m.sup.PID() == 0:
			return "mysqld is not running"
		}
		return ""
	}
}

// replaceProgram replaces the instance manager's program with the binary at path, handing the
// running mysqld (MysqldPIDEnv) and the listening sockets (listenFDsEnv) over. It holds the primary Lease's gate, so that no self-fence,
// demotion or promotion is cut in two; the new program renews the Lease it finds naming this
// instance and Pod. It returns only when execve failed.
func (m *manager) replaceProgram(lease *PrimaryLease) func(path string) error {
	return func(path string) error {
		pid := m.sup.PID()
		if pid == 0 {
			return errors.New("mysqld is not running")
		}
		fds, closeFDs, err := m.sockets.handOver()
		if err != nil {
			return err
		}
		env := withEnv(withEnv(os.Environ(), MysqldPIDEnv, strconv.Itoa(pid)), listenFDsEnv, fds)
		lease.WhileGated(func() {
			m.deps.Log.Info("replacing the program of the instance manager", "binary", path, "mysqldPid", pid, "sockets", fds)
			err = proc.Reexec(path, env)
		})
		closeFDs()
		return err
	}
}

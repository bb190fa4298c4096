package instance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sys/unix"
	"k8s.io/utils/clock"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/proc"
)

// leaseRenewedEnv hands the primary Lease over to the next program: when the renewal that holds
// it was sent, on CLOCK_MONOTONIC (nanoseconds), which both programs of the process share.
const leaseRenewedEnv = "CNM_LEASE_RENEWED_MONOTONIC_NS"

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

// runningParametersEnv hands the user parameters mysqld runs with (JSON) to the next program.
const runningParametersEnv = "CNM_RUNNING_PARAMETERS"

// inheritedParameters reads the parameters the previous program knew mysqld runs with; nil when
// none were handed over (the next program then takes my.cnf's).
func inheritedParameters(log logr.Logger) map[string]string {
	v, ok := os.LookupEnv(runningParametersEnv)
	_ = os.Unsetenv(runningParametersEnv)
	if !ok {
		return nil
	}
	var params map[string]string
	if err := json.Unmarshal([]byte(v), &params); err != nil {
		log.Info("ignoring unreadable running parameters handed over by the previous program", "error", err.Error())
		return nil
	}
	if params == nil {
		params = map[string]string{}
	}
	return params
}

// handoverEnv are the environment variables one program hands the next (an in-place update).
var handoverEnv = []string{MysqldPIDEnv, managerSHA256Env, listenFDsEnv, leaseRenewedEnv, runningParametersEnv}

// withoutHandover is env without any handoverEnv setting: what the next program gets is only
// what this one hands over now.
func withoutHandover(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		key, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(handoverEnv, key) {
			out = append(out, kv)
		}
	}
	return out
}

// inheritedLease reads when the previous program sent the renewal of the primary Lease it held
// (leaseRenewedEnv), on clk; ok is false when it held none.
func inheritedLease(clk clock.PassiveClock) (sent time.Time, ok bool) {
	v, found := os.LookupEnv(leaseRenewedEnv)
	_ = os.Unsetenv(leaseRenewedEnv)
	mono, err := strconv.ParseInt(v, 10, 64)
	if !found || err != nil {
		return time.Time{}, false
	}
	age := time.Duration(monotonicNow() - mono)
	if age < 0 {
		return time.Time{}, false
	}
	return clk.Now().Add(-age), true
}

// monotonicNow is CLOCK_MONOTONIC in nanoseconds: unlike Go's monotonic readings, it means the
// same in both programs of an in-place update.
func monotonicNow() int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

// updateReady says why the instance cannot take an in-place update now, "" when it can: the
// new program takes a running mysqld on a bootstrapped data directory back, nothing else, and
// never while the instance shuts down, is being demoted, or holds a primary Lease whose last
// renewal is not fresh (the new program starts from it).
func (m *manager) updateReady(state *LocalState, lease *PrimaryLease) func() string {
	return func() string {
		m.replacing.Lock()
		defer m.replacing.Unlock()
		held, sent := lease.HeldSince()
		switch {
		case m.stopping:
			return "the instance is shutting down"
		case !state.BootstrapDone():
			return "the instance is still bootstrapping"
		case m.sup == nil || m.sup.PID() == 0:
			return "mysqld is not running"
		case lease.Demoted():
			return "the instance is being demoted"
		case held && m.deps.Clock.Since(sent) > LeaseRenewInterval+leaseRenewalSlack:
			return fmt.Sprintf("the primary Lease was last renewed %s ago", m.deps.Clock.Since(sent).Round(time.Second))
		}
		return ""
	}
}

// leaseRenewalSlack is how late a renewal of the primary Lease may be (under way, say) before an
// in-place update is refused for it.
const leaseRenewalSlack = 2 * time.Second

// stopReplacing marks the instance shutting down: from then on no in-place update replaces the
// program (the next one would not know the Pod is terminating). It waits for a replacement under
// way, which then ends this program anyway.
func (m *manager) stopReplacing() {
	m.replacing.Lock()
	defer m.replacing.Unlock()
	m.stopping = true
}

// replaceProgram replaces the instance manager's program with the binary at path, handing the
// running mysqld (MysqldPIDEnv), the listening sockets (listenFDsEnv), the primary Lease
// (leaseRenewedEnv) and the parameters mysqld runs with (runningParametersEnv) over. It holds, until execve: the shutdown's exclusion (never during a
// shutdown), the primary Lease's gate (no self-fence, demotion or promotion cut in two), the
// supervisor (no mysqld started after its pid was read) and the fork lock (no child inherits the
// handed-over sockets). It returns only when execve failed.
func (m *manager) replaceProgram(ctx context.Context, lease *PrimaryLease) func(path, sum string) error {
	return func(path, sum string) error {
		m.replacing.Lock()
		defer m.replacing.Unlock()
		if m.stopping {
			return errors.New("the instance is shutting down")
		}
		var err error
		lease.WhileGated(func() {
			m.sup.Frozen(func(pid int) {
				if pid == 0 {
					err = errors.New("mysqld is not running")
					return
				}
				env := withEnv(withEnv(withoutHandover(os.Environ()), MysqldPIDEnv, strconv.Itoa(pid)), managerSHA256Env, sum)
				if running := m.params.Running(); running != nil {
					data, _ := json.Marshal(running) // a map of strings always marshals
					env = withEnv(env, runningParametersEnv, string(data))
				}
				if held, sent := lease.HeldSince(); held {
					env = withEnv(env, leaseRenewedEnv, strconv.FormatInt(monotonicNow()-int64(m.deps.Clock.Since(sent)), 10))
				}
				syscall.ForkLock.Lock()
				defer syscall.ForkLock.Unlock()
				fds, closeFDs, herr := m.sockets.handOver()
				if herr != nil {
					err = herr
					return
				}
				defer closeFDs() // reached only when execve failed
				if ctx.Err() != nil || m.stopping {
					// SIGTERM arrived while the locks were taken: the next program would not know.
					err = errors.New("the instance is shutting down")
					return
				}
				m.deps.Log.Info("replacing the program of the instance manager", "binary", path, "mysqldPid", pid, "sockets", fds)
				err = proc.Reexec(path, withEnv(env, listenFDsEnv, fds))
			})
		})
		return err
	}
}

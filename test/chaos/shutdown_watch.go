package chaos

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
)

// The shutdown budget: a restart must never end in a SIGKILL of a healthy mysqld. A
// shutdownWatch follows the instance container's log of each Pod while a rollout restarts them
// (kubectl logs -f ends when the container exits) and reads, from the instance manager's lines,
// when the shutdown began (SIGTERM: "shutting down"), when mysqld stopped and how long its own
// stop took, or that the manager had to kill it after its grace period.

// Shutdown is what one Pod's log says of its shutdown.
type Shutdown struct {
	Pod string `json:"pod"`
	// Seen: the log showed the start of a shutdown (the Pod was restarted while watched).
	Seen bool `json:"seen"`
	// Total is from SIGTERM to mysqld stopped; Mysqld is mysqld's own stop (SIGTERM to exit).
	Total  time.Duration `json:"total"`
	Mysqld time.Duration `json:"mysqld"`
	// Killed: the manager killed mysqld after its grace period (not a clean stop).
	Killed bool `json:"killed"`
	// Clean: mysqld logged the end of its own shutdown.
	Clean bool `json:"clean"`
	// Lines are mysqld's own log lines from the start of the shutdown on (what it waited for).
	Lines []string `json:"lines,omitempty"`
	// Replaced: when the watch ended, the Pod was gone or another Pod had its name.
	Replaced bool `json:"replaced"`
	// InPlace: the instance manager replaced its program in place, keeping mysqld running;
	// Started: the manager started a mysqld while watched.
	InPlace bool `json:"inPlace,omitempty"`
	Started bool `json:"started,omitempty"`
	// TurnedReadOnly: the manager found the server writable without holding the primary Lease
	// and turned it read-only to take the Lease (a write outage of its own).
	TurnedReadOnly bool `json:"turnedReadOnly,omitempty"`
}

func (s Shutdown) String() string {
	switch {
	case !s.Seen:
		return s.Pod + " not restarted"
	case s.Killed:
		return fmt.Sprintf("%s KILLED after %s", s.Pod, s.Total.Round(10*time.Millisecond))
	default:
		return fmt.Sprintf("%s %s (mysqld %s, clean %t)", s.Pod, s.Total.Round(10*time.Millisecond),
			s.Mysqld.Round(10*time.Millisecond), s.Clean)
	}
}

// shutdownWatch follows the logs of a set of Pods.
type shutdownWatch struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	logs   map[string]*strings.Builder
	uids   map[string]string
}

// watchShutdowns starts following the instance container of every Pod of the Cluster.
func (e *Env) watchShutdowns(ctx context.Context, t Target) (*shutdownWatch, error) {
	pods, err := e.Pods(ctx, t)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &shutdownWatch{cancel: cancel, logs: map[string]*strings.Builder{}, uids: map[string]string{}}
	for _, p := range pods {
		w.uids[p.Name] = string(p.UID)
		cmd := exec.CommandContext(ctx, e.Kubectl, "--kubeconfig", e.Kubeconfig, "-n", t.Namespace,
			"logs", "-f", "--since=1s", p.Name, "-c", "mysql")
		out, err := cmd.StdoutPipe()
		if err != nil {
			cancel()
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			cancel()
			return nil, fmt.Errorf("following the log of %s: %w", p.Name, err)
		}
		b := &strings.Builder{}
		w.logs[p.Name] = b
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			w.copy(b, out)
			_ = cmd.Wait()
		}()
	}
	return w, nil
}

func (w *shutdownWatch) copy(b *strings.Builder, r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		w.mu.Lock()
		b.WriteString(sc.Text())
		b.WriteByte('\n')
		w.mu.Unlock()
	}
}

// stop ends the watch and reads each Pod's shutdown from what its log showed.
func (w *shutdownWatch) stop() []Shutdown {
	w.cancel()
	w.wg.Wait()
	var out []Shutdown
	for pod, b := range w.logs {
		out = append(out, parseShutdown(pod, b.String()))
	}
	slices.SortFunc(out, func(a, b Shutdown) int { return strings.Compare(a.Pod, b.Pod) })
	return out
}

// finish ends the watch and marks the Pods replaced since it began, so that a restart whose log
// was not seen fails the check instead of passing unjudged.
func (e *Env) finishShutdownWatch(ctx context.Context, t Target, w *shutdownWatch) ([]Shutdown, error) {
	shutdowns := w.stop()
	pods, err := e.Pods(ctx, t)
	if err != nil {
		return shutdowns, err
	}
	now := map[string]string{}
	for _, p := range pods {
		now[p.Name] = string(p.UID)
	}
	for i := range shutdowns {
		shutdowns[i].Replaced = now[shutdowns[i].Pod] != w.uids[shutdowns[i].Pod]
	}
	return shutdowns, nil
}

// managerLine is the part of an instance manager's JSON log line a shutdown is read from.
type managerLine struct {
	TS  string `json:"ts"`
	Msg string `json:"msg"`
	// Took is a duration as the manager's encoder writes it: seconds as a number, or a string.
	Took any `json:"took"`
}

// duration reads Took.
func (l managerLine) duration() time.Duration {
	switch v := l.Took.(type) {
	case float64:
		return time.Duration(v * float64(time.Second))
	case string:
		d, _ := time.ParseDuration(v)
		return d
	}
	return 0
}

// parseShutdown reads a Pod's shutdown from its container log: the manager's "shutting down"
// (SIGTERM), then "mysqld stopped" (with how long mysqld's stop took) or "mysqld killed after the
// grace period"; mysqld's "Shutdown complete" says it ended its own shutdown.
func parseShutdown(pod, log string) Shutdown {
	s := Shutdown{Pod: pod}
	var began time.Time
	for _, line := range strings.Split(log, "\n") {
		if s.Seen && line != "" && !strings.HasPrefix(line, "{") {
			s.Lines = append(s.Lines, line)
		}
		if strings.Contains(line, "Shutdown complete") {
			s.Clean = true
			continue
		}
		var l managerLine
		if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &l) != nil {
			continue
		}
		at, err := time.Parse("2006-01-02T15:04:05.000Z0700", l.TS)
		if err != nil {
			continue
		}
		switch l.Msg {
		case "shutting down":
			s.Seen, began = true, at
		case "mysqld stopped":
			if !began.IsZero() {
				s.Total = at.Sub(began)
			}
			s.Mysqld = l.duration()
		case "instance manager replaced in place; mysqld kept running":
			s.InPlace = true
		case "started mysqld":
			s.Started = true
		case "writable without the primary Lease; turning read-only until it is held":
			s.TurnedReadOnly = true
		case "mysqld killed after the grace period":
			s.Killed = true
			if !began.IsZero() {
				s.Total = at.Sub(began)
			}
		}
	}
	return s
}

// checkShutdowns is an error when a watched restart ended in a SIGKILL or without mysqld
// reporting the end of its shutdown.
func checkShutdowns(shutdowns []Shutdown) error {
	var bad []string
	for _, s := range shutdowns {
		switch {
		case s.Seen && (s.Killed || !s.Clean):
			bad = append(bad, s.String())
		case s.Replaced && !s.Seen:
			bad = append(bad, s.Pod+" was replaced but its log showed no shutdown")
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("a restart did not stop mysqld cleanly: %s", strings.Join(bad, "; "))
	}
	return nil
}

// recordShutdowns adds the restarts' shutdowns to the fault's detail, and fails the fault when
// one did not stop mysqld cleanly.
func (f *Fault) recordShutdowns(shutdowns []Shutdown, err error) error {
	if err != nil {
		return err
	}
	var seen []string
	for _, s := range shutdowns {
		if s.Seen {
			seen = append(seen, s.String())
		}
	}
	if len(seen) > 0 {
		f.Detail += "; shutdowns: " + strings.Join(seen, ", ")
	}
	f.Shutdowns = shutdowns
	return checkShutdowns(shutdowns)
}

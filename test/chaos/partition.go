package chaos

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/failover"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// podNetns holds a Pod's network namespace open (through a descriptor of the node's process), so
// that rules put in it can be removed even after the container that lent its namespace is gone,
// and nothing is ever applied to another Pod's namespace by mistake.
type podNetns struct {
	f *os.File
}

// openNetns opens the network namespace of the instance Pod named pod.
func (e *Env) openNetns(ctx context.Context, ns, pod string) (*podNetns, error) {
	pid, err := e.containerProcess(ctx, ns, pod, "manager")
	if err != nil {
		return nil, err
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/ns/net", pid))
	if err != nil {
		return nil, fmt.Errorf("the network namespace of %s: %w", pod, err)
	}
	return &podNetns{f: f}, nil
}

// path is what nsenter --net takes: this process's descriptor of the namespace.
func (n *podNetns) path() string { return fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), n.f.Fd()) }

func (n *podNetns) close() { _ = n.f.Close() }

// run runs a command (iptables, tc) inside the namespace.
func (n *podNetns) run(ctx context.Context, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, "nsenter", append([]string{"--net=" + n.path(), "--", name}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %v: %w: %s", name, args, err, out)
	}
	return nil
}

// rules is a set of iptables rules put in a namespace, each removable once.
type rules struct {
	n   *podNetns
	put [][]string
}

// add inserts rule (without the -I) and remembers it.
func (r *rules) add(ctx context.Context, rule ...string) error {
	if err := r.n.run(ctx, "iptables", append([]string{"-w", "-I"}, rule...)...); err != nil {
		return err
	}
	r.put = append(r.put, rule)
	return nil
}

// remove deletes every rule put, in a context of its own (the run's may be over); it returns the
// first error.
func (r *rules) remove() error {
	var first error
	for _, rule := range r.put {
		if err := r.n.run(context.Background(), "iptables", append([]string{"-w", "-D"}, rule...)...); err != nil && first == nil {
			first = err
		}
	}
	r.put = nil
	return first
}

// dropPeers drops every packet between the namespace and each of ips, both ways.
func (r *rules) dropPeers(ctx context.Context, ips []string) error {
	for _, ip := range ips {
		if err := r.add(ctx, "INPUT", "-s", ip, "-j", "DROP"); err != nil {
			return err
		}
		if err := r.add(ctx, "OUTPUT", "-d", ip, "-j", "DROP"); err != nil {
			return err
		}
	}
	return nil
}

// peerIPs are the Pod IPs of the Cluster's instances other than skip.
func peerIPs(pods []corev1.Pod, skip ...string) (names, ips []string, err error) {
next:
	for _, p := range pods {
		for _, s := range skip {
			if p.Name == s {
				continue next
			}
		}
		if p.Status.PodIP == "" {
			return nil, nil, fmt.Errorf("pod %s has no IP", p.Name)
		}
		names, ips = append(names, p.Name), append(ips, p.Status.PodIP)
	}
	return names, ips, nil
}

// crashed is an instance crashed as a node would: its instance manager stopped (SIGSTOP), so that
// nothing in the Pod renews the Lease, answers or restarts mysqld, and mysqld killed (SIGKILL).
type crashed struct{ manager int }

func (e *Env) crash(ctx context.Context, ns, pod string) (crashed, string, error) {
	manager, err := e.containerProcess(ctx, ns, pod, "manager")
	if err != nil {
		return crashed{}, "", err
	}
	mysqld, err := e.containerProcess(ctx, ns, pod, "mysqld")
	if err != nil {
		return crashed{}, "", err
	}
	if err := syscall.Kill(manager, syscall.SIGSTOP); err != nil {
		return crashed{}, "", fmt.Errorf("SIGSTOP %d: %w", manager, err)
	}
	if err := syscall.Kill(mysqld, syscall.SIGKILL); err != nil {
		_ = syscall.Kill(manager, syscall.SIGCONT)
		return crashed{}, "", fmt.Errorf("SIGKILL %d: %w", mysqld, err)
	}
	return crashed{manager: manager}, fmt.Sprintf("SIGSTOP %d (manager), SIGKILL %d (mysqld) of %s", manager, mysqld, pod), nil
}

// restart continues the manager, which starts mysqld again; false when it was gone (its Pod
// deleted by a failover: the kubelet ended the stopped process with it).
func (c crashed) restart() bool { return syscall.Kill(c.manager, syscall.SIGCONT) == nil }

// acknowledgingReplica is the replica that acknowledges commits: rpl_semi_sync_replica_enabled ON
// (the first such in name order).
func (e *Env) acknowledgingReplica(ctx context.Context, t Target, primary string, pods []corev1.Pod) (string, error) {
	for _, p := range pods {
		if p.Name == primary {
			continue
		}
		out, err := e.RootSQL(ctx, t.Namespace, p.Name, "SELECT @@GLOBAL.rpl_semi_sync_replica_enabled;")
		if err != nil {
			return "", fmt.Errorf("reading whether %s acknowledges: %w", p.Name, err)
		}
		if strings.TrimSpace(out) == "1" {
			return p.Name, nil
		}
	}
	return "", fmt.Errorf("no replica of %s acknowledges (rpl_semi_sync_replica_enabled OFF on each)", primary)
}

// waitNoFallbackAtRisk waits until the Lease records no fallback at risk: one left by an earlier
// fault has resumed (the primary re-enables semi-sync after a backoff, and a commit is
// acknowledged), so that the next partition records its own.
func (e *Env) waitNoFallbackAtRisk(ctx context.Context, t Target, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		r, err := e.fallbackRecord(ctx, t)
		if err == nil && (r == nil || r.Resumed) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("a semi-sync fallback is still recorded at risk after %s: %+v, %v", timeout, r, err)
		}
		if err := sleep(ctx, 500*time.Millisecond); err != nil {
			return err
		}
	}
}

// fallbackRecord reads the semi-sync fallback record of the Cluster's primary Lease.
func (e *Env) fallbackRecord(ctx context.Context, t Target) (*failover.FallbackRecord, error) {
	var l coordinationv1.Lease
	if err := e.Client.Get(ctx, client.ObjectKey{Namespace: t.Namespace, Name: specs.PrimaryLeaseName(t.Name)}, &l); err != nil {
		return nil, err
	}
	return failover.ParseFallbackRecord(l.Annotations[failover.FallbackAnnotation])
}

// waitFallbackRecorded waits until the Lease records a fallback of primary, at risk, made after
// since.
func (e *Env) waitFallbackRecorded(ctx context.Context, t Target, primary string, since time.Time, timeout time.Duration) (*failover.FallbackRecord, error) {
	deadline := time.Now().Add(timeout)
	for {
		r, err := e.fallbackRecord(ctx, t)
		if err == nil && r.AtRisk(primary) && r.FellBackAt.After(since) {
			return r, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no semi-sync fallback of %s recorded in the primary Lease within %s (last read: %v, %v)", primary, timeout, r, err)
		}
		if err := sleep(ctx, 250*time.Millisecond); err != nil {
			return nil, err
		}
	}
}

// failoverOutcome watches the Cluster after its primary crashed past a recorded fallback, until
// another instance is promoted, or the failover has been reported blocked for blockedFor, or
// timeout. It returns what it saw.
func (e *Env) failoverOutcome(ctx context.Context, t Target, primary string, blockedFor, timeout time.Duration) (blocked bool, promoted string, err error) {
	deadline := time.Now().Add(timeout)
	var since time.Time
	for time.Now().Before(deadline) {
		c, err := e.Cluster(ctx, t)
		if err == nil {
			if c.Status.CurrentPrimary != primary || (c.Status.TargetPrimary != "" && c.Status.TargetPrimary != primary) {
				return blocked, c.Status.TargetPrimary, nil
			}
			for _, cond := range c.Status.Conditions {
				if cond.Type == "Degraded" && cond.Reason == failover.ReasonAcknowledgedWritesOnPrimaryOnly {
					if !blocked {
						since = time.Now()
					}
					blocked = true
				}
			}
			if blocked && time.Since(since) >= blockedFor {
				return true, "", nil
			}
		}
		if err := sleep(ctx, 250*time.Millisecond); err != nil {
			return blocked, "", err
		}
	}
	return blocked, "", nil
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// cutPeers drops every packet between the primary's namespace and its peers, except the
// instances named in keep; it returns the peers cut and the rules, whose close removes them and
// releases the namespace.
func (e *Env) cutPeers(ctx context.Context, t Target, primary string, keep ...string) ([]string, *rules, error) {
	pods, err := e.Pods(ctx, t)
	if err != nil {
		return nil, nil, err
	}
	names, ips, err := peerIPs(pods, append([]string{primary}, keep...)...)
	if err != nil {
		return nil, nil, err
	}
	n, err := e.openNetns(ctx, t.Namespace, primary)
	if err != nil {
		return nil, nil, err
	}
	cut := &rules{n: n}
	if err := cut.dropPeers(ctx, ips); err != nil {
		cut.close()
		return nil, nil, err
	}
	return names, cut, nil
}

// close removes the rules still in place and releases the namespace.
func (r *rules) close() {
	_ = r.remove()
	r.n.close()
}

// injectReplicaPartition cuts the primary from its replicas only (the API server, the operator and
// the clients still reach it) for hold, then heals. Under required, the commits wait for
// timeoutMillis, the primary records its fallback in the Lease and goes on alone; once healed, the
// replicas catch up and semi-sync resumes. No failover: the primary stays healthy.
func (e *Env) injectReplicaPartition(ctx context.Context, t Target, f *Fault, hold time.Duration) error {
	if err := e.waitNoFallbackAtRisk(ctx, t, 2*time.Minute); err != nil {
		return err
	}
	names, cut, err := e.cutPeers(ctx, t, f.Primary)
	if err != nil {
		return err
	}
	defer cut.close()
	f.At = time.Now()
	f.Detail = fmt.Sprintf("%s cut from %v for %s", f.Primary, names, hold)
	if r, err := e.waitFallbackRecorded(ctx, t, f.Primary, f.At, hold); err == nil {
		f.FallbackGTIDs = r.GTIDExecuted
		f.Detail += fmt.Sprintf("; fallback recorded %s after the cut", r.FellBackAt.Sub(f.At).Round(time.Millisecond))
	}
	_ = sleep(ctx, time.Until(f.At.Add(hold)))
	now := time.Now()
	f.Healed = &now
	return cut.remove()
}

// injectReplicaPartitionThenCrash: the primary cut from its replicas only, until it has recorded
// its semi-sync fallback and acknowledged commits alone for a few seconds, then crashed as a node
// (manager stopped, mysqld killed) with the cut left in place, so that no queued byte reaches a
// replica. It watches what the operator does until hold has passed since the crash (or, blocked,
// for blockedFor), then brings the old primary back (its manager continued, the cut healed).
// Under required the failover must be blocked and the old primary return as primary; under
// preferred a replica is promoted and the old primary comes back diverged.
func (e *Env) injectReplicaPartitionThenCrash(ctx context.Context, t Target, f *Fault, hold time.Duration) error {
	if err := e.waitNoFallbackAtRisk(ctx, t, 2*time.Minute); err != nil {
		return err
	}
	names, cut, err := e.cutPeers(ctx, t, f.Primary)
	if err != nil {
		return err
	}
	defer cut.close()
	f.At = time.Now()
	r, err := e.waitFallbackRecorded(ctx, t, f.Primary, f.At, time.Minute)
	if err != nil {
		return err
	}
	f.FallbackGTIDs = r.GTIDExecuted
	if err := sleep(ctx, 5*time.Second); err != nil { // commits acknowledged by the primary alone
		return err
	}
	c, detail, err := e.crash(ctx, t.Namespace, f.Primary)
	if err != nil {
		return err
	}
	crashedAt := time.Now()
	f.Detail = fmt.Sprintf("%s cut from %v; fallback recorded %s after the cut; crashed %s after the cut (%s)",
		f.Primary, names, r.FellBackAt.Sub(f.At).Round(time.Millisecond), crashedAt.Sub(f.At).Round(time.Millisecond), detail)
	blocked, promoted, werr := e.failoverOutcome(ctx, t, f.Primary, 20*time.Second, hold)
	f.FailoverBlocked, f.PromotedPast = blocked, promoted
	f.Detail += fmt.Sprintf("; %s after the crash: failover blocked %v, promoted %q", time.Since(crashedAt).Round(time.Second), blocked, promoted)
	if promoted != "" {
		// Let the promotion finish before the old primary is continued (its Pod is deleted).
		_ = sleep(ctx, 5*time.Second)
	}
	if !c.restart() {
		f.Detail += "; the old primary's manager was gone before SIGCONT (its container restarted by the liveness probe, or its Pod deleted by the failover)"
	}
	now := time.Now()
	f.Healed = &now
	if err := cut.remove(); err != nil && promoted == "" {
		return err
	}
	return werr
}

// injectCrashWithAckingReplicaDown: A is the replica that acknowledges (rpl_semi_sync_replica_enabled
// ON: the operator makes one of two a participant under maxSyncReplicas 1); every other replica
// (B) is cut from the primary, so that A alone receives; after a few seconds of writes the primary crashes as a node and A's
// mysqld is killed (its manager starts it again). The failover must not promote B, which lacks
// what A acknowledged, while A does not answer: it waits for A, whose relay log still holds the
// acknowledged tail. After hold the old primary's manager is continued and the cut healed.
func (e *Env) injectCrashWithAckingReplicaDown(ctx context.Context, t Target, f *Fault, hold time.Duration) error {
	pods, err := e.Pods(ctx, t)
	if err != nil {
		return err
	}
	acking, err := e.acknowledgingReplica(ctx, t, f.Primary, pods)
	if err != nil {
		return err
	}
	lagging, cut, err := e.cutPeers(ctx, t, f.Primary, acking)
	if err != nil {
		return err
	}
	defer cut.close()
	if err := sleep(ctx, 5*time.Second); err != nil { // commits acknowledged by A alone
		return err
	}
	aMysqld, err := e.containerProcess(ctx, t.Namespace, acking, "mysqld")
	if err != nil {
		return err
	}
	c, detail, err := e.crash(ctx, t.Namespace, f.Primary)
	if err != nil {
		return err
	}
	f.At = time.Now()
	if err := syscall.Kill(aMysqld, syscall.SIGKILL); err != nil {
		c.restart()
		return fmt.Errorf("SIGKILL %d: %w", aMysqld, err)
	}
	f.To = acking
	f.Detail = fmt.Sprintf("%v cut from %s 5 s before; %s; SIGKILL %d (mysqld of %s, the acknowledging replica)",
		lagging, f.Primary, detail, aMysqld, acking)
	_ = sleep(ctx, hold)
	if !c.restart() {
		f.Detail += "; the old primary's manager was gone before SIGCONT (its container restarted by the liveness probe, or its Pod deleted by the failover)"
	}
	now := time.Now()
	f.Healed = &now
	_ = cut.remove() // the namespace went with the deleted Pod: nothing to remove
	return nil
}

// injectSwitchoverLaggingTarget requests a switchover to target while the primary's traffic to it
// is limited to lagRate (an HTB class for its IP on the primary's interface) and target cannot
// reach the old primary's control API (dropped in the target's namespace). The switchover must
// not promote the target short of the old primary's final GTID set: it completes once the target
// holds it, or aborts. Both limits are lifted after hold.
func (e *Env) injectSwitchoverLaggingTarget(ctx context.Context, t Target, f *Fault, target string, hold time.Duration) error {
	pods, err := e.Pods(ctx, t)
	if err != nil {
		return err
	}
	ips := map[string]string{}
	for _, p := range pods {
		ips[p.Name] = p.Status.PodIP
	}
	if ips[f.Primary] == "" || ips[target] == "" {
		return fmt.Errorf("no Pod IP for %s or %s", f.Primary, target)
	}
	pn, err := e.openNetns(ctx, t.Namespace, f.Primary)
	if err != nil {
		return err
	}
	defer pn.close()
	tn, err := e.openNetns(ctx, t.Namespace, target)
	if err != nil {
		return err
	}
	defer tn.close()
	const dev, lagRate = "eth0", "48kbit"
	shaped := false
	unshape := func() error {
		if !shaped {
			return nil
		}
		shaped = false
		return pn.run(context.Background(), "tc", "qdisc", "del", "dev", dev, "root")
	}
	defer unshape() //nolint:errcheck // removed below; this only covers an early return
	for _, args := range [][]string{
		{"qdisc", "add", "dev", dev, "root", "handle", "1:", "htb", "default", "10"},
		{"class", "add", "dev", dev, "parent", "1:", "classid", "1:10", "htb", "rate", "10gbit"},
		{"class", "add", "dev", dev, "parent", "1:", "classid", "1:20", "htb", "rate", lagRate, "ceil", lagRate},
		{"filter", "add", "dev", dev, "parent", "1:", "protocol", "ip", "u32", "match", "ip", "dst", ips[target] + "/32", "flowid", "1:20"},
	} {
		if err := pn.run(ctx, "tc", args...); err != nil {
			return err
		}
		shaped = true
	}
	cut := &rules{n: tn}
	defer cut.remove() //nolint:errcheck // removed below; this only covers an early return
	if err := cut.add(ctx, "OUTPUT", "-d", ips[f.Primary], "-p", "tcp", "--dport", strconv.Itoa(specs.ManagerPort), "-j", "DROP"); err != nil {
		return err
	}
	// Let the target fall behind before the switchover is asked for.
	if err := sleep(ctx, 5*time.Second); err != nil {
		return err
	}
	f.To = target
	if err := e.requestSwitchover(ctx, t, target); err != nil {
		return err
	}
	f.At = time.Now()
	f.Detail = fmt.Sprintf("%s -> %s limited to %s from 5 s before the request; %s cut from %s's control API; both for %s",
		f.Primary, target, lagRate, target, f.Primary, hold)
	_ = sleep(ctx, hold)
	now := time.Now()
	f.Healed = &now
	uerr, cerr := unshape(), cut.remove()
	if uerr != nil {
		f.Detail += "; removing the rate limit: " + uerr.Error() // the Pod may be gone
	}
	if cerr != nil {
		f.Detail += "; removing the cut: " + cerr.Error()
	}
	return nil
}

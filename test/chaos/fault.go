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

	"k8s.io/utils/clock"

	mysqlv1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/plugin"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// Kind is a kind of fault on the primary.
type Kind string

const (
	// PodDelete deletes the primary's Pod with its default grace period (the instance manager's
	// shutdown handler runs).
	PodDelete Kind = "pod-delete"
	// ContainerKill kills every process of the primary's mysql container with SIGKILL through the
	// node's containerd (CRI), as the OOM killer or a crash would.
	ContainerKill Kind = "container-kill"
	// MysqldKill sends SIGKILL to mysqld alone; the instance manager stays.
	MysqldKill Kind = "mysqld-kill"
	// ManagerKill sends SIGKILL to the instance manager, the container's first process (the kernel
	// then ends mysqld, the rest of its PID namespace).
	ManagerKill Kind = "manager-kill"
	// NetworkCut drops every packet in and out of the primary Pod's network namespace except
	// loopback (the API server, the peers, the clients, the kubelet's probes), for the hold time,
	// then heals.
	NetworkCut Kind = "network-cut"
	// Switchover is the planned one: status.targetPrimary set to a replica (the plugin's promote).
	Switchover Kind = "switchover"
	// ManagerFreeze stops the instance manager, the container's first process, with SIGSTOP from
	// the node, for the hold time (past the Lease TTL), then continues it with SIGCONT: mysqld
	// keeps running and taking writes, and nothing in the Pod can fence it, as with a manager
	// starved of CPU, deadlocked or paused by a debugger.
	ManagerFreeze Kind = "manager-freeze"
	// ReplicaPartition cuts the primary from its replicas only, for the hold time: the API server,
	// the operator and the clients still reach it. It falls back to asynchronous replication after
	// timeoutMillis (recorded in the Lease first) and goes on; no failover.
	ReplicaPartition Kind = "replica-partition"
	// ReplicaPartitionThenCrash cuts the primary from its replicas until it has fallen back and
	// acknowledged commits alone, then crashes it as a node, the cut left in place. Under required
	// no failover may happen (blocked, AcknowledgedWritesOnPrimaryOnly) and the old primary, once
	// back, catches the replicas up; under preferred a replica is promoted and the loss is what the
	// fallback record names.
	ReplicaPartitionThenCrash Kind = "replica-partition-then-crash"
	// CrashWithAckingReplicaDown cuts one replica from the primary, so the other alone
	// acknowledges, then crashes the primary as a node and kills the acknowledging replica's
	// mysqld: no promotion may pass it while it is down.
	CrashWithAckingReplicaDown Kind = "crash-with-acking-replica-down"
	// SwitchoverLaggingTarget asks for a switchover to a replica whose traffic from the primary is
	// rate-limited (HTB) and that cannot reach the old primary's control API: it must not be
	// promoted short of the old primary's final GTID set.
	SwitchoverLaggingTarget Kind = "switchover-lagging-target"
)

// RollingUpdate changes the Cluster's Pod annotations, as a person would, with the default
// primaryUpdateMethod switchover: the replicas are replaced, the operator switches over to an
// updated one, then replaces the old primary. RollingUpdateRestart does it with
// primaryUpdateMethod restart: the primary's Pod is restarted in place, no failover.
const (
	RollingUpdate        Kind = "rolling-update"
	RollingUpdateRestart Kind = "rolling-update-restart"
)

// Resize changes the Cluster's CPU and memory requests, as a person would: every instance is
// resized in place, no Pod replaced, mysqld left running, the primary where it is.
const Resize Kind = "resize"

// Kinds lists every kind, in the order the program uses them by default.
var Kinds = []Kind{PodDelete, ContainerKill, MysqldKill, NetworkCut, ManagerKill, ManagerFreeze, Switchover,
	ReplicaPartition, ReplicaPartitionThenCrash, CrashWithAckingReplicaDown, SwitchoverLaggingTarget,
	RollingUpdate, RollingUpdateRestart, Resize, ParameterDynamic, ParameterRestart, Scale, OperatorUpgrade}

// ParseKinds reads a comma-separated list of kinds.
func ParseKinds(s string) ([]Kind, error) {
	var out []Kind
	for _, f := range strings.Split(s, ",") {
		k := Kind(strings.TrimSpace(f))
		ok := false
		for _, known := range Kinds {
			ok = ok || k == known
		}
		if !ok {
			return nil, fmt.Errorf("unknown fault %q (known: %v)", k, Kinds)
		}
		out = append(out, k)
	}
	return out, nil
}

// Fault is one fault as injected.
type Fault struct {
	Kind Kind `json:"kind"`
	// Primary is the instance hit (the primary when the fault began); To the switchover target.
	Primary string `json:"primary"`
	To      string `json:"to,omitempty"`
	// At is when the fault took effect (the kill, the delete request, the first DROP rule, the
	// status patch); Healed when a network cut ended.
	At     time.Time  `json:"at"`
	Healed *time.Time `json:"healed,omitempty"`
	Detail string     `json:"detail,omitempty"`
	// Shutdowns are the instance restarts a rollout made, as their logs show them.
	Shutdowns []Shutdown `json:"shutdowns,omitempty"`
	// FallbackGTIDs is the gtidExecuted of the semi-sync fallback record the primary wrote during
	// a replica partition: the commits after it may have been acknowledged by it alone.
	FallbackGTIDs string `json:"fallbackGTIDs,omitempty"`
	// FailoverBlocked: after a crash past a recorded fallback, the Cluster reported the failover
	// blocked (AcknowledgedWritesOnPrimaryOnly); PromotedPast is the instance promoted instead.
	FailoverBlocked bool   `json:"failoverBlocked,omitempty"`
	PromotedPast    string `json:"promotedPast,omitempty"`
}

// Inject hits the primary of t with a fault of kind k. A network cut is held for hold, then
// healed, before Inject returns. replica names the switchover target.
func (e *Env) Inject(ctx context.Context, t Target, k Kind, primary, replica string, hold time.Duration) (Fault, error) {
	f := Fault{Kind: k, Primary: primary}
	switch k {
	case PodDelete:
		p, err := e.Pod(ctx, t.Namespace, primary)
		if err != nil {
			return f, err
		}
		err = e.Client.Delete(ctx, p)
		f.At = time.Now() // once the API server has accepted it: the termination starts then
		return f, err
	case ContainerKill:
		id, err := e.containerID(ctx, t.Namespace, primary)
		if err != nil {
			return f, err
		}
		f.Detail = "container " + id[:12]
		out, err := exec.CommandContext(ctx, "ctr", "--address", e.CtrSocket, "-n", "k8s.io",
			"tasks", "kill", "-a", "-s", "SIGKILL", id).CombinedOutput()
		// Once ctr has returned, the signal has been sent: a write acknowledged between the two
		// is not counted as a recovery.
		f.At = time.Now()
		if err != nil {
			return f, fmt.Errorf("ctr tasks kill: %w: %s", err, out)
		}
		return f, nil
	case MysqldKill, ManagerKill:
		comm := "mysqld"
		if k == ManagerKill {
			comm = "manager"
		}
		pid, err := e.containerProcess(ctx, t.Namespace, primary, comm)
		if err != nil {
			return f, err
		}
		f.At, f.Detail = time.Now(), fmt.Sprintf("kill -9 %d (%s)", pid, comm)
		return f, syscall.Kill(pid, syscall.SIGKILL)
	case ManagerFreeze:
		pid, err := e.containerProcess(ctx, t.Namespace, primary, "manager")
		if err != nil {
			return f, err
		}
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			return f, fmt.Errorf("SIGSTOP %d: %w", pid, err)
		}
		f.At, f.Detail = time.Now(), fmt.Sprintf("SIGSTOP %d (manager) for %s", pid, hold)
		select {
		case <-ctx.Done():
		case <-time.After(hold):
		}
		now := time.Now()
		f.Healed = &now
		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
			// The failover deleted the Pod: the kubelet killed the stopped process with it.
			f.Detail += "; the manager was gone before SIGCONT (its Pod deleted by the failover)"
		}
		return f, nil
	case NetworkCut:
		pid, err := e.containerProcess(ctx, t.Namespace, primary, "manager")
		if err != nil {
			return f, err
		}
		netns := fmt.Sprintf("/proc/%d/ns/net", pid)
		rules := [][]string{{"INPUT", "!", "-i", "lo", "-j", "DROP"}, {"OUTPUT", "!", "-o", "lo", "-j", "DROP"}}
		for _, r := range rules {
			if err := iptables(ctx, netns, append([]string{"-I"}, r...)); err != nil {
				return f, err
			}
			if f.At.IsZero() {
				f.At = time.Now()
			}
		}
		f.Detail = fmt.Sprintf("DROP in %s for %s", netns, hold)
		select {
		case <-ctx.Done():
		case <-time.After(hold):
		}
		now := time.Now()
		f.Healed = &now
		if _, err := os.Stat(netns); err != nil {
			// A failover during the cut deleted the Pod: its network namespace, rules and all,
			// went with it.
			f.Detail += "; the Pod was gone before the heal (deleted by the failover)"
			return f, nil
		}
		var heal error
		for _, r := range rules {
			if err := iptables(context.Background(), netns, append([]string{"-D"}, r...)); err != nil {
				heal = err
			}
		}
		return f, heal
	case Switchover:
		f.To = replica
		err := e.requestSwitchover(ctx, t, replica)
		f.At = time.Now()
		return f, err
	case ReplicaPartition:
		return f, e.injectReplicaPartition(ctx, t, &f, hold)
	case ReplicaPartitionThenCrash:
		return f, e.injectReplicaPartitionThenCrash(ctx, t, &f, hold)
	case CrashWithAckingReplicaDown:
		return f, e.injectCrashWithAckingReplicaDown(ctx, t, &f, hold)
	case SwitchoverLaggingTarget:
		return f, e.injectSwitchoverLaggingTarget(ctx, t, &f, replica, hold)
	case RollingUpdate:
		return f, e.injectRollingUpdate(ctx, t, &f, mysqlv1.PrimaryUpdateSwitchover)
	case RollingUpdateRestart:
		return f, e.injectRollingUpdate(ctx, t, &f, mysqlv1.PrimaryUpdateRestart)
	case Resize:
		return f, e.injectResize(ctx, t, &f)
	case ParameterDynamic, ParameterRestart:
		return f, e.injectParameterChange(ctx, t, &f, k)
	case Scale:
		return f, e.injectScale(ctx, t, &f)
	case OperatorUpgrade:
		return f, e.injectOperatorUpgrade(ctx, t, &f)
	}
	return f, fmt.Errorf("unknown fault %q", k)
}

// requestSwitchover asks for a switchover to target, as the plugin's promote --force does: the
// run tests the operator's switchover under writes, so the plugin's advisory check that the target
// has caught up (which writes in flight often fail) is skipped; the operator's is not.
func (e *Env) requestSwitchover(ctx context.Context, t Target, target string) error {
	return plugin.Promote(ctx, e.Client, clock.RealClock{}, t.Namespace, t.Name, target, true)
}

func iptables(ctx context.Context, netns string, args []string) error {
	cmd := exec.CommandContext(ctx, "nsenter", append([]string{"--net=" + netns, "--", "iptables", "-w"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("iptables %v in %s: %w: %s", args, netns, err, out)
	}
	return nil
}

// containerID is the runtime ID of the instance's mysql container.
func (e *Env) containerID(ctx context.Context, ns, pod string) (string, error) {
	p, err := e.Pod(ctx, ns, pod)
	if err != nil {
		return "", err
	}
	for _, s := range p.Status.ContainerStatuses {
		if s.Name == specs.MySQLContainerName && s.ContainerID != "" && s.State.Running != nil {
			_, id, _ := strings.Cut(s.ContainerID, "://")
			return id, nil
		}
	}
	return "", fmt.Errorf("pod %s/%s has no running %s container", ns, pod, specs.MySQLContainerName)
}

// containerProcess finds the node PID of the process named comm in the instance's mysql
// container: containerd lists the container's PIDs (its cgroup), /proc names them.
func (e *Env) containerProcess(ctx context.Context, ns, pod, comm string) (int, error) {
	id, err := e.containerID(ctx, ns, pod)
	if err != nil {
		return 0, err
	}
	out, err := exec.CommandContext(ctx, "ctr", "--address", e.CtrSocket, "-n", "k8s.io", "tasks", "ps", id).Output()
	if err != nil {
		return 0, fmt.Errorf("ctr tasks ps %s: %w", id, err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		pid, err := strconv.Atoi(fields[0])
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		if err == nil && strings.TrimSpace(string(b)) == comm {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no %s process in container %s of %s/%s", comm, id[:12], ns, pod)
}

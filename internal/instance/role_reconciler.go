package instance

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/semisync"
)

// Peers is what an instance knows of the others.
type Peers interface {
	// InstanceAt names the instance a replication source address belongs to, "" if none.
	InstanceAt(host string, port int) string
	// State reads an instance's gtid_executed and whether it accepts writes, now.
	State(ctx context.Context, instance string) (PeerState, error)
}

// PeerState is another instance's state as the role decision needs it.
type PeerState struct {
	Executed gtid.Set
	// InFlight are the GTIDs it has written to its binary log, or is writing, without having
	// committed them yet (mysql.Status.GTIDInFlight), read before Executed.
	InFlight gtid.Set
	Writable bool
	// AckWaiters is the number of its sessions whose commit waits for a semi-sync
	// acknowledgement: their transactions are in its binary log but not yet in Executed.
	AckWaiters int
}

// RoleReconciler converges the local mysqld to its Cluster's status.targetPrimary: gather (the
// Cluster, the local status, the primary's GTID set), DecideRole, RoleActor.Apply, and record
// status.currentPrimary once this instance has become the primary.
type RoleReconciler struct {
	Client   client.Client
	Cluster  types.NamespacedName
	Instance string
	Actor    *RoleActor
	Peers    Peers
	Clock    clock.PassiveClock
	Log      logr.Logger
	// Wake, if set, runs a pass at once between two periods (ClusterWatch: the Cluster changed).
	Wake <-chan struct{}
	// OfferParameters, if set, receives the Cluster at every read, for its spec.mysql.parameters
	// (ParameterApplier.Offer: they are applied apart from the role passes).
	OfferParameters func(*v1alpha1.Cluster)
	// Isolation, if set, is told of every successful read of the Cluster.
	Isolation *IsolationDetector
	// OnPrimary, if set, runs on every pass that leaves this instance the primary and recorded as
	// status.currentPrimary, and on the first primary's passes before it is recorded (it creates
	// the accounts there, so that no replica tries to clone before they exist; first is true
	// then); an error fails the pass.
	OnPrimary func(ctx context.Context, first bool) error
	// ManageSemiSync converges the local semi-sync settings to the spec after each pass (see
	// semisync.Desired), and a promotion applies the primary's before it clears read-only.
	ManageSemiSync bool
	// Fallback, if set, is the primary's semi-sync fallback: told the spec on every pass; while
	// it has fallen back, the pass leaves the source side off.
	Fallback *SemiSyncFallback
	// Participation, if set, is what the operator told this instance about acknowledging as a
	// replica: the pass applies it, and forgets it when the instance is the primary.
	Participation *SemiSyncParticipation
	// Lease, if set, is the primary Lease (Actor.Lease should be the same): configured from the
	// spec on every pass, and read by the target of a switchover whose old primary does not
	// answer.
	Lease *PrimaryLease
	// State, if set, is told whether the instance is diverged (readiness reports it) and which
	// instances the Cluster has.
	State *LocalState

	// unanswered is the primary whose last call did not answer (askPrimary). Passes run one at
	// a time.
	unanswered string
}

// LeaseEnabled is spec.enablePrimaryLease, true unless set to false.
func LeaseEnabled(spec *v1alpha1.ClusterSpec) bool { return ptr.Deref(spec.EnablePrimaryLease, true) }

// ReconcileOnce performs one pass and returns the decision it applied.
func (r *RoleReconciler) ReconcileOnce(ctx context.Context) (RoleDecision, error) {
	mark := 0
	if r.Lease != nil {
		mark = r.Lease.DemotionMark()
	}
	cluster, err := r.readCluster(ctx, mark)
	if err != nil {
		return RoleDecision{}, err
	}
	local, err := r.Actor.Op.Status(ctx)
	if err != nil {
		return RoleDecision{}, err
	}
	in := RoleInput{Instance: r.Instance, Executed: local.GTIDExecuted}
	if local.Replication != nil {
		in.ReplicatingFrom = r.Peers.InstanceAt(local.Replication.SourceHost, local.Replication.SourcePort)
		in.Received = local.Replication.RetrievedGTIDSet
	}
	for asked := ""; ; {
		p := cluster.Status.CurrentPrimary
		if p == "" || p == r.Instance || p == asked {
			break
		}
		// Read after the local status: see RoleInput.PrimaryExecuted.
		ps, err := r.askPrimary(ctx, p, cluster.Status.TargetPrimary == r.Instance)
		if err == nil {
			in.PrimaryExecuted, in.PrimaryWritable, in.PrimaryAckWaiters = &ps.Executed, ps.Writable, ps.AckWaiters
			in.PrimaryInFlight = ps.InFlight
			break
		}
		r.Log.Info("primary's state unavailable", "primary", p, "error", err.Error())
		if asked != "" {
			break
		}
		// The call waited for its timeout: decide on the Cluster as it is now, so that a
		// failover target named meanwhile is not left for the next pass, and ask a new primary
		// recorded meanwhile (a replica follows it in this pass). The state of the primary that
		// did not answer stays unknown.
		again, err := r.readCluster(ctx, mark)
		if err != nil {
			break
		}
		cluster, asked = again, p
	}
	if r.OfferParameters != nil {
		r.OfferParameters(cluster)
	}
	in.Status = &cluster.Status
	if r.Lease != nil {
		in.LeaseEnabled = LeaseEnabled(&cluster.Spec)
		r.Lease.Configure(in.LeaseEnabled, ownerReference(cluster))
	}
	if r.needsProofOfStop(&cluster.Status, in) {
		r.gatherProofOfStop(ctx, &in)
	}
	d := DecideRole(in)
	if r.Fallback != nil {
		r.Fallback.Configure(&cluster.Spec)
	}
	if r.ManageSemiSync && d.Action == ActPrimary {
		d.SemiSync = r.primarySemiSync(&cluster.Spec, local)
		r.Participation.Forget()
	}
	if r.ManageSemiSync && d.Action == ActFollow && d.Source != in.ReplicatingFrom {
		// A new source (a failover or switchover): what the operator told for the previous
		// primary's plan no longer holds. Until it tells again this replica acknowledges
		// (semisync.NotTold), so the new primary's commits do not wait, under required until the
		// fallback, for a participant nobody has named yet.
		r.Participation.Forget()
	}
	if r.State != nil {
		r.State.SetDiverged(d.Action == ActDiverged)
		// The primary is the one the Cluster records, also while it is held read-only (fenced,
		// or waiting for a switchover's target), and the one promoting before the Cluster records
		// it: a rule must not take either for a replica.
		r.State.SetRoleFacts(RoleFacts{Known: true, Primary: cluster.Status.CurrentPrimary == r.Instance || d.Action == ActPrimary,
			Fenced: slices.Contains(cluster.Status.FencedInstances, r.Instance)})
	}
	var out RoleOutcome
	// Every change of replication on this server, here and through the control API (what the
	// operator tells about acknowledging, which restarts the receiver; the failover's stop of the
	// receiver), runs under the participation's lock: mysqld's replication statements from two
	// sessions at once (START REPLICA here, STOP and START REPLICA IO_THREAD there) left the
	// relay log index naming "." and the channel unable to start again (error 1872), for good.
	err = r.Participation.Converge(func(told semisync.Participation) error {
		followSemiSync := r.ManageSemiSync && d.Action == ActFollow
		if followSemiSync && !local.Writable() {
			// A replica that is read-only when the pass begins gets its semi-sync settings before
			// it connects to its source: a server that was primary has the replica side off, and
			// its first connection to the new primary would receive, without acknowledging, the
			// commit that primary waits on; the restart of the receiver that turns the replica
			// side on then starts after it, so that commit would wait until a later one is
			// acknowledged (seconds of write unavailability after a switchover). A failure here
			// must not keep the replica from following: the settings are then tried again after
			// Apply, as for a replica that was writable when the pass began.
			if err := r.convergeSemiSyncTold(ctx, cluster, false, local, told); err != nil {
				r.Log.Info("semi-sync settings not applied before following; trying again after", "error", err.Error())
			} else {
				followSemiSync = false
			}
		}
		var err error
		if out, err = r.Actor.Apply(ctx, d, local); err != nil {
			return err
		}
		if followSemiSync {
			return r.convergeSemiSyncTold(ctx, cluster, false, local, told)
		}
		return nil
	})
	if err != nil {
		return d, err
	}
	return d, r.report(ctx, cluster, d, out, local)
}

// primarySemiSync is what a promotion applies before it clears read-only: the primary's
// settings, from a server that is read-only now, so no fallback applies (nil: nothing to change).
func (r *RoleReconciler) primarySemiSync(spec *v1alpha1.ClusterSpec, local *mysql.Status) *mysql.SemiSyncSettings {
	want, change := semisync.Desired(spec, true, local.SemiSync, false, semisync.NotTold)
	if !change {
		return nil
	}
	return &want
}

// convergeSemiSync brings the semi-sync settings in line with the spec for the role and, on a
// replica, with what the operator told it about acknowledging. Only a
// primary that was writable when the pass began keeps a fallback: one that was read-only has
// just been promoted with the source side on.
func (r *RoleReconciler) convergeSemiSync(ctx context.Context, cluster *v1alpha1.Cluster, primary bool, local *mysql.Status) error {
	return r.Participation.Converge(func(told semisync.Participation) error {
		return r.convergeSemiSyncTold(ctx, cluster, primary, local, told)
	})
}

// convergeSemiSyncTold is convergeSemiSync for a caller that holds the participation's lock and
// read what the operator told.
func (r *RoleReconciler) convergeSemiSyncTold(ctx context.Context, cluster *v1alpha1.Cluster, primary bool, local *mysql.Status,
	told semisync.Participation) error {
	fallenBack, _ := r.Fallback.FallenBack()
	fallenBack = fallenBack && primary && local.Writable()
	changed, err := ConvergeSemiSync(ctx, r.Actor.Op, &cluster.Spec, primary, local.SemiSync, fallenBack, told)
	if err != nil {
		return fmt.Errorf("converging semi-sync: %w", err)
	}
	if changed {
		r.Log.Info("semi-sync settings applied", "primary", primary)
	}
	return nil
}

// StillTarget reads the Cluster from the API server and reports whether its status still names
// this instance as the target primary (RoleActor.StillTarget).
func (r *RoleReconciler) StillTarget(ctx context.Context) (bool, error) {
	var cluster v1alpha1.Cluster
	if err := r.Client.Get(ctx, r.Cluster, &cluster); err != nil {
		return false, fmt.Errorf("reading Cluster %s: %w", r.Cluster, err)
	}
	return cluster.Status.TargetPrimary == r.Instance, nil
}

// PeerSuspectTimeout bounds the call to a primary that did not answer the previous one, on an
// instance that is not the target primary: a replica following a primary cut off from the network
// asks it every pass, and with the full timeout it would notice the failover's new primary a
// pass later. Its answer only checks that the replica holds nothing the primary lacks; while it
// does not come, a replica keeps following the primary it follows, and one that does not follow
// it yet waits. The target of a switchover, which needs the old primary's final GTID set, always
// asks with the full timeout.
const PeerSuspectTimeout = time.Second

// askPrimary asks the primary p for its state; with PeerSuspectTimeout when p did not answer the
// previous call and this instance is not the target.
func (r *RoleReconciler) askPrimary(ctx context.Context, p string, target bool) (PeerState, error) {
	if p == r.unanswered && !target {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, PeerSuspectTimeout)
		defer cancel()
	}
	ps, err := r.Peers.State(ctx, p)
	switch {
	case err != nil:
		r.unanswered = p
	case r.unanswered == p:
		r.unanswered = ""
	}
	return ps, err
}

// readCluster reads the Cluster, and settles what a read of it settles: a demotion taken before
// mark, the isolation detector's contact with the API server, the members of the Cluster.
func (r *RoleReconciler) readCluster(ctx context.Context, mark int) (*v1alpha1.Cluster, error) {
	var cluster v1alpha1.Cluster
	if err := r.Client.Get(ctx, r.Cluster, &cluster); err != nil {
		return nil, fmt.Errorf("reading Cluster %s: %w", r.Cluster, err)
	}
	if r.Lease != nil && cluster.Status.TargetPrimary != r.Instance {
		// A demotion before this read is settled: the Cluster no longer names this instance.
		r.Lease.EndDemotion(mark)
	}
	if r.Isolation != nil {
		r.Isolation.ContactAPIServer()
	}
	if r.State != nil {
		r.State.SetMembers(ClusterMembers(&cluster, nil))
	}
	return &cluster, nil
}

// LeaseWaitInPass is how long a target whose old primary does not answer waits within one pass
// for the Lease to expire on its clock, instead of leaving it to the next pass.
const LeaseWaitInPass = 2 * time.Second

// needsProofOfStop: this instance is the target of a switchover and the old primary did not
// answer, so the decision needs its Lease (or, with the Lease disabled, its Pod).
func (r *RoleReconciler) needsProofOfStop(st *v1alpha1.ClusterStatus, in RoleInput) bool {
	return st.TargetPrimary == r.Instance && st.CurrentPrimary != "" && st.CurrentPrimary != r.Instance &&
		in.PrimaryExecuted == nil
}

// gatherProofOfStop reads the primary Lease, or the old primary's Pod when the Lease is
// disabled; what cannot be read stays unknown, which the decision treats as "still writing".
func (r *RoleReconciler) gatherProofOfStop(ctx context.Context, in *RoleInput) {
	old := in.Status.CurrentPrimary
	if in.LeaseEnabled {
		rec, err := r.Lease.Observe(ctx)
		if err != nil {
			r.Log.Info("primary Lease unavailable", "error", err.Error())
			return
		}
		take := MayTakeLease(rec, r.Lease.Holder, r.Lease.Clock.Now())
		if wait := take.Until.Sub(r.Lease.Clock.Now()); !take.Allowed && !take.Until.IsZero() && wait <= LeaseWaitInPass {
			// About to expire on this instance's clock (it first saw the last renewal a little
			// after the operator did): wait here rather than for the next pass, which would
			// spend its first seconds on the old primary that does not answer. Then read the
			// Lease again: only a fresh read may let it be taken.
			select {
			case <-ctx.Done():
				return
			case <-r.Lease.Clock.After(wait):
			}
			if rec, err = r.Lease.Observe(ctx); err != nil {
				r.Log.Info("primary Lease unavailable", "error", err.Error())
				return
			}
			take = MayTakeLease(rec, r.Lease.Holder, r.Lease.Clock.Now())
		}
		in.Lease = &take
		return
	}
	var pod corev1.Pod
	err := r.Client.Get(ctx, types.NamespacedName{Namespace: r.Cluster.Namespace, Name: old}, &pod)
	switch {
	case apierrors.IsNotFound(err):
		in.PrimaryPodGone = true
	case err != nil:
		r.Log.Info("old primary's Pod unavailable", "primary", old, "error", err.Error())
	}
}

// ownerReference makes the Cluster own the Lease, so that deleting the Cluster deletes it.
func ownerReference(c *v1alpha1.Cluster) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: v1alpha1.GroupVersion.String(), Kind: "Cluster", Name: c.Name, UID: c.UID}
}

// report runs the hooks of the outcome and records it on the Cluster.
// A replica's semi-sync settings are converged by ReconcileOnce, around Apply.
func (r *RoleReconciler) report(ctx context.Context, cluster *v1alpha1.Cluster, d RoleDecision, out RoleOutcome, local *mysql.Status) error {
	// The first primary runs the hook before it records itself (no replica clones before the
	// accounts exist). A promoted replica records itself first and runs the hook on its next pass:
	// the accounts exist already, and its statements wait for a semi-sync acknowledgement, which
	// only replicas that follow it, once it is recorded, can send.
	promoted := cluster.Status.CurrentPrimary != "" && cluster.Status.CurrentPrimary != r.Instance
	if out.Primary && r.OnPrimary != nil && !promoted {
		if err := r.OnPrimary(ctx, cluster.Status.CurrentPrimary == ""); err != nil {
			return err
		}
	}
	if r.ManageSemiSync && out.Primary {
		if err := r.convergeSemiSync(ctx, cluster, true, local); err != nil {
			return err
		}
	}
	switch {
	case out.Primary && cluster.Status.CurrentPrimary != r.Instance:
		return r.recordPrimary(ctx, cluster)
	case out.Diverged && !slices.Contains(cluster.Status.DivergedInstances, r.Instance):
		return r.recordDiverged(ctx, cluster, d.Errant)
	}
	return nil
}

// recordDiverged adds this instance to status.divergedInstances with an optimistic lock: the
// operator keeps it out of service and never promotes it; a human decides what to do with it.
func (r *RoleReconciler) recordDiverged(ctx context.Context, cluster *v1alpha1.Cluster, errant gtid.Set) error {
	patch := client.MergeFromWithOptions(cluster.DeepCopy(), client.MergeFromWithOptimisticLock{})
	cluster.Status.DivergedInstances = append(cluster.Status.DivergedInstances, r.Instance)
	if err := r.Client.Status().Patch(ctx, cluster, patch); err != nil {
		return fmt.Errorf("recording %s as diverged: %w", r.Instance, err)
	}
	r.Log.Info("recorded as diverged", "errant", errant.String())
	return nil
}

// recordPrimary writes status.currentPrimary with an optimistic lock, so that a concurrent change
// of targetPrimary makes the write fail rather than be overwritten. On a conflict it reads the
// Cluster again and writes again while targetPrimary still names this instance: the operator
// writes the status every few seconds during a primary change, and a pass that took longer (a
// peer that does not answer) would otherwise never land its write.
func (r *RoleReconciler) recordPrimary(ctx context.Context, cluster *v1alpha1.Cluster) error {
	first := true
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if !first {
			if err := r.Client.Get(ctx, client.ObjectKeyFromObject(cluster), cluster); err != nil {
				return err
			}
			if cluster.Status.TargetPrimary != r.Instance {
				return fmt.Errorf("targetPrimary moved to %q meanwhile", cluster.Status.TargetPrimary)
			}
		}
		first = false
		patch := client.MergeFromWithOptions(cluster.DeepCopy(), client.MergeFromWithOptimisticLock{})
		now := metav1.NewTime(r.Clock.Now())
		cluster.Status.CurrentPrimary, cluster.Status.CurrentPrimaryTimestamp = r.Instance, &now
		return r.Client.Status().Patch(ctx, cluster, patch)
	})
	if err != nil {
		return fmt.Errorf("recording %s as the current primary: %w", r.Instance, err)
	}
	r.Log.Info("recorded as the current primary")
	return nil
}

// Run reconciles every interval until ctx ends, logging failed passes.
func (r *RoleReconciler) Run(ctx context.Context, interval time.Duration) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	var last RoleAction = -1
	for {
		d, err := r.ReconcileOnce(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			r.Log.Error(err, "role reconciliation failed", "action", d.Action.String())
		case err == nil && d.Action != last:
			r.Log.Info("role decision", "action", d.Action.String(), "source", d.Source, "reason", d.Reason)
			last = d.Action
		}
		var soon <-chan time.Time
		if err == nil && d.Soon {
			soon = time.After(SoonInterval)
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		case <-soon:
		case <-r.Wake:
			// Woken by a change of the Cluster: at most one pass per wakeGap, however often the
			// operator patches its status.
			select {
			case <-ctx.Done():
				return
			case <-time.After(wakeGap):
			}
		}
	}
}

// SoonInterval is the time to the next pass after a decision that waits for a step of a
// switchover that takes a fraction of a second (RoleDecision.Soon).
const SoonInterval = 100 * time.Millisecond

// wakeGap is how long a pass woken by a change of the Cluster waits first: the changes that
// come together (a promotion recorded, the labels, the conditions) are read in one pass.
const wakeGap = 100 * time.Millisecond

package cluster

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/instances"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/failover"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// FailoverWork is the switchover or failover step of one reconcile: the decision of the failover
// engine, and what act performs of it outside the status (stepFailover). The status changes of
// the step (primaryFailingSince, targetPrimary and their timestamps) are in Decision.Status.
type FailoverWork struct {
	// Decision is failover.Decide's answer for this reconcile.
	Decision failover.Decision
	// StopIO are the Pods whose replication IO thread stops (failover.StepStopIOThreads).
	StopIO []*corev1.Pod
	// Demote is the old primary's Pod, turned read-only through its control API
	// (failover.StepDemote).
	Demote *corev1.Pod
	// Fence is the old primary's Pod whose mysqld the operator fences itself, over its
	// administrative interface (instances.MySQLFencer), after the IO threads stop and the
	// demotion, before the Pod is deleted and before the status names a new target: a failover
	// never promotes past, nor deletes the Pod of, a primary whose mysqld answers and is not
	// fenced. One that cannot be reached is left to its Pod's deletion and to the acknowledgements
	// it can no longer collect.
	Fence *corev1.Pod
	// DeletePod is the old primary's Pod to delete; its PVC stays (failover.StepDeletePod, and
	// after a failover's demotion).
	DeletePod string
	// QuickDelete deletes DeletePod with failoverDeleteGrace instead of the Pod's own grace
	// period: its instance manager does not answer (it may be frozen while mysqld runs), so
	// nothing would use the time for a clean shutdown.
	QuickDelete bool
	// HoldPod is an instance whose missing Pod is not recreated: the failing primary while a
	// failover that can proceed replaces it. Recreated, it would promote itself again before
	// the candidate does.
	HoldPod string
}

// observeFailover builds what the failover engine reads: c's spec and status (this reconcile's
// fenced list included), the primary Lease, and each active instance's Pod and report. An
// instance that did not answer, or still bootstraps, or whose GTID sets cannot be parsed, is
// unreachable: nothing is known of it.
func observeFailover(c *v1.Cluster, o Observation, active []observedInstance) failover.Observation {
	spec, st := failover.ObserveCluster(c)
	fo := failover.Observation{Now: o.Now, Spec: spec, Status: st, Lease: o.Lease}
	for _, in := range active {
		fi := failover.Instance{Name: in.Name}
		if p := in.Pod; p != nil {
			fi.PodExists, fi.PodReady, fi.PodDeleting = true, instances.PodReady(p), p.DeletionTimestamp != nil
			fi.PodUID = string(p.UID)
			fi.LabelRole, fi.LabelRoutable = p.Labels[v1.RoleLabel], p.Labels[v1.RoutableLabel] == specs.RoutableTrue
		}
		if r := o.Reports[in.Name]; r != nil && r.BootstrapDone() {
			observeReport(&fi, r)
		}
		fo.Instances = append(fo.Instances, fi)
	}
	return fo
}

// observeReport fills the reachable part of fi from the instance's answer.
func observeReport(fi *failover.Instance, r *instanceclient.Status) {
	executed, err := gtid.Parse(r.GTIDExecuted)
	if err != nil {
		return
	}
	fi.Executed = executed
	if rep := r.Replication; rep != nil {
		retrieved, err := gtid.Parse(rep.GTIDRetrieved)
		if err != nil {
			return
		}
		fi.Retrieved = retrieved
		fi.Replication = &failover.Replication{Source: rep.SourceInstance,
			IORunning: rep.IORunning, IOState: rep.IOState, IOLastError: rep.LastIOError,
			SQLRunning: rep.SQLRunning, SQLLastError: rep.LastSQLError, LagSeconds: rep.LagSeconds}
	}
	if s := r.SemiSync; s != nil {
		fi.SemiSync = &failover.SemiSync{Active: s.Active, WaitForReplicaCount: s.WaitForReplicaCount, Clients: s.Clients,
			LongestAckWait: time.Duration(r.LongestAckWaitMillis) * time.Millisecond}
	}
	fi.AckWaiters = r.AckWaiters
	fi.Reachable, fi.Role, fi.ReadOnly, fi.SuperReadOnly = true, r.Role, r.ReadOnly, r.SuperReadOnly
}

// planFailover asks the failover engine for this reconcile's step and applies it to c's status
// (primaryFailingSince, targetPrimary) or plans it for act (stopping IO threads, demoting or
// deleting the old primary). The steps the instances take themselves (the target promoting, the
// replicas repointing to status.currentPrimary) get their Event only. It runs before the
// instances are planned, so a failing primary whose failover proceeds is not recreated.
func (d *Decision) planFailover(c *v1.Cluster, o Observation, active []observedInstance) {
	fo := observeFailover(c, o, active)
	fd := failover.Decide(fo)
	if o.Reports == nil && o.ReportErrors == nil {
		// No instance was asked (no status source): nothing is known of the roles.
		fd = failover.Decision{Kind: failover.Nothing, Reason: "no instance reports"}
	}
	d.Failover = FailoverWork{Decision: fd, HoldPod: holdPod(fo, fd)}
	d.failoverObservation = fo
	now := metav1.NewTime(o.Now)
	// Judged on the status as observed, before this step changes it: the reconcile that clears a
	// failover's primaryFailingSince must not take the failover for a switchover.
	switchedOver := switchoverCompleted(c, active)
	st := &c.Status
	if failoverOfUnrecordedPrimary(fd, st) {
		// A failover out of a primary that itself replaced the recorded one before it was ever
		// seen healthy (a chained failover), or a failure recorded by an operator that predates
		// failingPrimary: the record names the primary now being replaced, so that its replicas
		// keep the receivers this failover stops stopped, and the promotion that ends it is
		// reported as a failover from it.
		st.FailingPrimary = st.CurrentPrimary
	}
	switch fd.Step {
	case failover.StepRecordFailing:
		st.PrimaryFailingSince, st.FailingPrimary = &now, fd.Instance
	case failover.StepClearFailing:
		st.PrimaryFailingSince, st.FailingPrimary = nil, ""
		if a := st.DataLossAccepted; a != nil && a.PromotedAt == nil {
			// The primary recovered, or the failover ended without it: a loss accepted for
			// this failure must not let a later one promote past commits nobody accepted to lose.
			st.DataLossAccepted = nil
		}
	case failover.StepSetTargetPrimary:
		st.TargetPrimary, st.TargetPrimaryTimestamp = fd.Instance, &now
		st.TargetPrimaryCatchUp = catchUpRecord(fd, st)
		if a := st.DataLossAccepted; fd.AcceptedLoss != "" && a != nil && a.PromotedAt == nil {
			a.Lost, a.PromotedAt = fd.AcceptedLoss, &now
			d.event(stepFailover, evDataLossAccepted.With(a.FormerPrimary, a.Instance, a.Lost))
		}
	case failover.StepAbortSwitchover:
		st.TargetPrimary, st.TargetPrimaryTimestamp, st.TargetPrimaryCatchUp = fd.Instance, &now, nil
	case failover.StepPromote:
		// The target promotes itself; what it must hold first is recorded for it, so that a target
		// that cannot read the old primary (cut off from it, or it is gone) does not promote short.
		st.TargetPrimaryCatchUp = catchUpRecord(fd, st)
	case failover.StepStopIOThreads:
		for _, name := range fd.Instances {
			if p := podOf(active, name); p != nil {
				d.Failover.StopIO = append(d.Failover.StopIO, p)
			}
		}
		// The old primary, not seen accepting writes, loses its Pod in the same act, once the IO
		// threads are stopped (act stops them first).
		d.Failover.DeletePod = fd.DeletePod
	case failover.StepDemote:
		d.Failover.Demote = podOf(active, fd.Instance)
		// A failover's next step, taken at once once the demotion succeeded: the failing
		// primary's own role reconciler makes it writable again while targetPrimary still names
		// it. Not after a semi-sync fallback, whose record of what the demoted primary executed
		// must be written first (fd.DeletePod empty).
		d.Failover.DeletePod = fd.DeletePod
	case failover.StepDeletePod:
		d.Failover.DeletePod = fd.Instance
	}
	recordMissingCatchUp(fo, st)
	if next, keep := failover.NextFallbackCaughtUp(fo); !keep {
		st.FallbackCaughtUp = nil
		if next != nil {
			st.FallbackCaughtUp = &v1.FallbackCaughtUp{FormerPrimary: next.FormerPrimary, FailingSince: metav1.NewTime(next.FailingSince),
				FellBackAt: metav1.NewTime(next.FellBackAt), GTIDSet: next.GTIDSet.String()}
		}
	}
	d.planFence(fo, fd, active)
	if e, ok := failover.EventFor(fo, fd); ok {
		d.event(failoverEventStep(fd.Step), kit.Event{Kind: kit.EventKind{Type: e.Type, Reason: e.Reason, Format: "%s"}, Message: e.Message})
	}
	if fd.Step == failover.StepStopIOThreads && fd.DeletePod != "" {
		del := failover.Decision{Kind: failover.Failover, Operation: failover.FailoverOperation, Step: failover.StepDeletePod,
			Instance: fd.DeletePod, Reason: "failover from " + fd.DeletePod + ": delete its Pod, keep its PVC"}
		if e, ok := failover.EventFor(fo, del); ok {
			d.event(stepFailover, kit.Event{Kind: kit.EventKind{Type: e.Type, Reason: e.Reason, Format: "%s"}, Message: e.Message})
		}
	}
	if switchedOver {
		d.switchedOver = true
		d.event(stepRelabel, evSwitchoverCompleted.With(st.CurrentPrimary))
	}
}

// planFence plans the fence of the old primary's mysqld for the failover steps that act on it or
// promote past it: stopping the IO threads, the demotion, the deletion of its Pod and the naming
// of the target. When its instance manager does not answer, its Pod is deleted too, with a short
// grace period, whether or not a deletion is already under way.
func (d *Decision) planFence(fo failover.Observation, fd failover.Decision, active []observedInstance) {
	if fd.Operation != failover.FailoverOperation || fd.Kind != failover.Failover {
		return
	}
	switch fd.Step {
	case failover.StepStopIOThreads, failover.StepDemote, failover.StepDeletePod, failover.StepSetTargetPrimary:
	default:
		return
	}
	old := fo.Status.CurrentPrimary
	pod := podOf(active, old)
	if pod == nil || mysqldGone(pod) {
		return
	}
	d.Failover.Fence = pod
	answers := slices.ContainsFunc(fo.Instances, func(in failover.Instance) bool { return in.Name == old && in.Reachable })
	if !answers {
		d.Failover.DeletePod, d.Failover.QuickDelete = old, true
	}
}

// catchUpRecord is status.targetPrimaryCatchUp for fd (StepSetTargetPrimary or StepPromote): the
// set its target must have executed, for the primary change st.targetPrimaryTimestamp dates. An
// unchanged record is returned as it is, so the status is not patched again.
func catchUpRecord(fd failover.Decision, st *v1.ClusterStatus) *v1.PrimaryCatchUp {
	rec := &v1.PrimaryCatchUp{Instance: fd.Instance, GTIDSet: fd.CatchUp.String(), TargetPrimaryTimestamp: st.TargetPrimaryTimestamp}
	if old := st.TargetPrimaryCatchUp; old != nil && old.Instance == rec.Instance && old.GTIDSet == rec.GTIDSet &&
		old.TargetPrimaryTimestamp.Equal(rec.TargetPrimaryTimestamp) {
		return old
	}
	return rec
}

// recordMissingCatchUp records, for a failover whose target is named but has no catch-up record
// for this primary change (named by an operator older than the record), the target's own
// history as what it must execute first: the failover chose it as the most advanced replica, so
// that is all it must hold. Without it the target, which cannot read the old primary, would wait
// for ever.
func recordMissingCatchUp(fo failover.Observation, st *v1.ClusterStatus) {
	if st.TargetPrimary == "" || st.TargetPrimary == st.CurrentPrimary || !fo.FailoverUnderWay() {
		return
	}
	if rec := st.TargetPrimaryCatchUp; rec != nil && rec.Instance == st.TargetPrimary && rec.TargetPrimaryTimestamp.Equal(st.TargetPrimaryTimestamp) {
		return
	}
	for _, in := range fo.Instances {
		if in.Name == st.TargetPrimary && in.Reachable {
			st.TargetPrimaryCatchUp = &v1.PrimaryCatchUp{Instance: in.Name, GTIDSet: in.History().String(),
				TargetPrimaryTimestamp: st.TargetPrimaryTimestamp}
		}
	}
}

// failoverOfUnrecordedPrimary: fd is a step of a failover out of the current primary while the
// recorded failure names another instance (its predecessor) or none.
func failoverOfUnrecordedPrimary(fd failover.Decision, st *v1.ClusterStatus) bool {
	if fd.Operation != failover.FailoverOperation || fd.Kind == failover.Blocked || st.PrimaryFailingSince == nil ||
		st.CurrentPrimary == "" || st.FailingPrimary == st.CurrentPrimary {
		return false
	}
	switch fd.Step {
	case failover.StepStopIOThreads, failover.StepDemote, failover.StepDeletePod, failover.StepSetTargetPrimary:
		return true
	}
	return false
}

// holdPod names the failing primary while the failover replacing it proceeds (failoverDelay has
// passed and the failover is not blocked), "" otherwise. During failoverDelay, or when no
// replica can replace it (a single instance, say), its Pod is recreated and it may recover.
func holdPod(fo failover.Observation, fd failover.Decision) string {
	if fo.Status.TargetPrimary != fo.Status.CurrentPrimary && fo.FailoverUnderWay() {
		// The failover has named its target: the old primary stays down until the promotion
		// ends, blocked or not; recreated, it would make the promotion look like a switchover.
		return fo.Status.CurrentPrimary
	}
	if fd.Operation != failover.FailoverOperation || fd.Kind == failover.Blocked {
		return ""
	}
	since := fo.Status.PrimaryFailingSince
	if fd.Step == failover.StepRecordFailing {
		since = fo.Now
	}
	if since.IsZero() || fo.Now.Before(failover.FailoverStart(fo, since)) {
		return ""
	}
	return fo.Status.CurrentPrimary
}

// failoverEventStep is the act step whose success a failover step's Event reports.
func failoverEventStep(s failover.Step) actStep {
	switch s {
	case failover.StepStopIOThreads, failover.StepDemote, failover.StepDeletePod:
		return stepFailover
	}
	return stepStatus
}

// switchoverCompleted: the instance recorded as current primary is also the target, no failover
// is recorded, and another Pod that is not being deleted still carries the primary label: the
// operator sees the promotion for the first time and is about to move the label (planRelabel
// leaves Pods being deleted alone). A failover's completion is reported when primaryFailingSince
// is cleared instead; the old primary's Pod, deleted by the failover, keeps its label until it
// is gone and is no switchover.
func switchoverCompleted(c *v1.Cluster, active []observedInstance) bool {
	st := c.Status
	if st.CurrentPrimary == "" || st.CurrentPrimary != st.TargetPrimary || st.PrimaryFailingSince != nil {
		return false
	}
	for _, in := range active {
		if in.Pod != nil && in.Pod.DeletionTimestamp == nil && in.Name != st.CurrentPrimary && in.Pod.Labels[v1.RoleLabel] == v1.RolePrimary {
			return true
		}
	}
	return false
}

func podOf(active []observedInstance, name string) *corev1.Pod {
	for _, in := range active {
		if in.Name == name && in.Pod != nil {
			return in.Pod
		}
	}
	return nil
}

// mergeFailoverConditions lays the failover engine's conditions over the ones the Cluster
// controller computed: a failing primary, a primary change under way or blocked, and semi-sync
// not protecting commits take precedence over counts of ready instances.
func mergeFailoverConditions(st *v1.ClusterStatus, gen int64, now time.Time, conds []metav1.Condition) {
	for _, cond := range conds {
		cond.ObservedGeneration, cond.LastTransitionTime = gen, metav1.NewTime(now)
		meta.SetStatusCondition(&st.Conditions, cond)
	}
}

// mysqldGone says the kubelet reported the mysql container of a Pod being deleted terminated:
// every process of it, mysqld included, is gone, so there is nothing to fence. A fence of it
// would wait for its dial timeout (the Pod's address no longer answers). A Pod whose kubelet
// reports nothing (its node cut off) is not taken as gone.
func mysqldGone(pod *corev1.Pod) bool {
	if pod.DeletionTimestamp == nil {
		return false
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == specs.MySQLContainerName {
			return cs.State.Terminated != nil && cs.State.Running == nil
		}
	}
	return false
}

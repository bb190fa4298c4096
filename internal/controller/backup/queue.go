package backup

import (
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
)

// One backup per Cluster at a time. A Backup that has not started (no Job name) starts only when
// no other Backup of its Cluster has started and not finished, and no older one waits before it;
// Backups wait in creation order (then name). Among the waiting Backups of one ScheduledBackup only
// the newest runs: the older ones end superseded. The decision reads the Cluster's other Backups
// fresh from the API server under a lock per Cluster (clusterLocks), so two workers never start
// two of them.

// queuePosition says what b, a Backup that has not started, must do given the other Backups of its
// Cluster: superseded by a newer waiting Backup of its own schedule, or wait behind a Backup that
// runs or an older one that waits. Both nil: b may start.
func queuePosition(b *v1.Backup, others []v1.Backup) (supersededBy, behind *v1.Backup) {
	schedule := b.Labels[v1.ScheduledBackupLabel]
	for i := range others {
		o := &others[i]
		if o.Name == b.Name || o.IsDone() || (o.DeletionTimestamp != nil && o.Status.JobName == "") {
			continue // a Backup being deleted after it started still holds the queue until it is gone
		}
		switch {
		case o.Status.JobName != "":
			behind = o // it started: it runs until it ends
		case schedule != "" && o.Labels[v1.ScheduledBackupLabel] == schedule && before(b, o):
			if supersededBy == nil || before(supersededBy, o) {
				supersededBy = o
			}
		case before(o, b) && !supersededIn(o, others) && (behind == nil || behind.Status.JobName == ""):
			behind = o
		}
	}
	if supersededBy != nil {
		return supersededBy, nil
	}
	return nil, behind
}

// supersededIn reports whether o, a waiting Backup, will itself be superseded by a newer waiting
// Backup of its schedule: it is not ahead of anyone in the queue.
func supersededIn(o *v1.Backup, all []v1.Backup) bool {
	schedule := o.Labels[v1.ScheduledBackupLabel]
	if schedule == "" {
		return false
	}
	for i := range all {
		n := &all[i]
		if n.Name != o.Name && !n.IsDone() && n.DeletionTimestamp == nil && n.Status.JobName == "" &&
			n.Labels[v1.ScheduledBackupLabel] == schedule && before(o, n) {
			return true
		}
	}
	return false
}

// before orders Backups by creation, then name.
func before(a, b *v1.Backup) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return a.Name < b.Name
}

// supersede ends a Backup that never started because a newer one of its schedule waits too.
func supersede(o Observation, newer *v1.Backup) Decision {
	st := *o.Backup.Status.DeepCopy()
	now := metav1.NewTime(o.Now)
	st.Phase, st.CompletedAt = v1.BackupPhaseSuperseded, &now
	st.Error = fmt.Sprintf("superseded by %s, a newer Backup of the same ScheduledBackup: only the newest of the waiting ones runs", newer.Name)
	setQueued(&st, o.Backup, metav1.ConditionFalse, string(v1.BackupPhaseSuperseded), st.Error, o.Now)
	return Decision{Action: ActPatchStatus, Status: st, Events: []kit.Event{evSuperseded.With(newer.Name)}}
}

// queued keeps a Backup pending behind another one of its Cluster; the Event comes when it starts
// waiting, or waits behind another Backup than before.
func queued(o Observation, behind *v1.Backup) Decision {
	b := o.Backup
	state := "waits"
	if behind.Status.JobName != "" {
		state = "runs"
	}
	msg := fmt.Sprintf("Backup %s of Cluster %s %s: one backup per Cluster at a time", behind.Name, b.Spec.Cluster.Name, state)
	st := *b.Status.DeepCopy()
	st.Phase = v1.BackupPhasePending
	old := meta.FindStatusCondition(b.Status.Conditions, v1.BackupQueued) // as read, not the copy being changed
	setQueued(&st, b, metav1.ConditionTrue, v1.ReasonQueuedBehind, msg, o.Now)
	d := Decision{RequeueAfter: waitInterval}
	if b.Status.Phase != v1.BackupPhasePending || old == nil || old.Status != metav1.ConditionTrue || old.Message != msg {
		d.Action, d.Status = ActPatchStatus, st
		d.Events = []kit.Event{evQueued.With(msg)}
	}
	return d
}

// started marks a Backup that leaves the queue.
func started(st *v1.BackupStatus, b *v1.Backup, now time.Time) {
	leaveQueue(st, b, v1.ReasonQueuedStarted, "no other backup of the Cluster runs", now)
}

// leaveQueue turns Queued False with reason, when the Backup was queued.
func leaveQueue(st *v1.BackupStatus, b *v1.Backup, reason, msg string, now time.Time) {
	if c := meta.FindStatusCondition(st.Conditions, v1.BackupQueued); c != nil && c.Status == metav1.ConditionTrue {
		setQueued(st, b, metav1.ConditionFalse, reason, msg, now)
	}
}

// setQueued sets the Queued condition.
func setQueued(st *v1.BackupStatus, b *v1.Backup, status metav1.ConditionStatus, reason, msg string, now time.Time) {
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: v1.BackupQueued, Status: status, Reason: reason,
		Message: msg, ObservedGeneration: b.Generation, LastTransitionTime: metav1.NewTime(now)})
}

// startDeadline is when a Backup that has not started fails for not starting: its timeout after
// its creation or, for one that was queued behind another backup, after it left the queue (now,
// while it is still marked queued). Time in the queue does not count.
func startDeadline(b *v1.Backup, now time.Time) time.Time {
	from := b.CreationTimestamp.Time
	if c := meta.FindStatusCondition(b.Status.Conditions, v1.BackupQueued); c != nil {
		from = now
		if c.Status == metav1.ConditionFalse {
			from = c.LastTransitionTime.Time
		}
	}
	return from.Add(b.EffectiveTimeout())
}

// clusterLocks serialises the start of the Backups of one Cluster within the operator.
type clusterLocks struct{ m sync.Map }

// tryLock takes the Cluster's lock, or reports that another worker holds it: the caller looks
// again shortly rather than hold a worker.
func (l *clusterLocks) tryLock(key string) (func(), bool) {
	mu, _ := l.m.LoadOrStore(key, &sync.Mutex{})
	if !mu.(*sync.Mutex).TryLock() {
		return nil, false
	}
	return mu.(*sync.Mutex).Unlock, true
}

// lockBusyRetry is how soon a Backup whose Cluster's lock was busy is looked at again.
const lockBusyRetry = time.Second

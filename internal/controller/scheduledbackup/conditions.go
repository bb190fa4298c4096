package scheduledbackup

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// Reasons of the ScheduledBackup conditions.
const (
	// Ready reasons.
	reasonScheduled       = "Scheduled"
	reasonBackupRunning   = "BackupRunning"
	reasonSuspended       = "Suspended"
	reasonInvalidSchedule = "InvalidSchedule"
	reasonTooFrequent     = "ScheduleTooFrequent"
	reasonClusterNotFound = "ClusterNotFound"
	// Degraded reasons (and ClusterNotFound).
	reasonBackupFailed     = "BackupFailed"
	reasonBackupsSucceed   = "LastBackupCompleted"
	reasonNoBackupFinished = "NoBackupFinished"
)

func (p *planner) setCondition(typ string, ok bool, reason, msg string) {
	status := metav1.ConditionFalse
	if ok {
		status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&p.d.Status.Conditions, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: msg,
		ObservedGeneration: p.sb.Generation, LastTransitionTime: metav1.NewTime(p.now),
	})
}

func (p *planner) setReady(ok bool, reason, msg string) {
	p.setCondition(v1.ConditionReady, ok, reason, msg)
}

// setReadyIdle is Ready for a schedule that is not waiting on a running Backup: false while its
// Cluster is missing, true otherwise.
func (p *planner) setReadyIdle() {
	if p.o.Cluster == nil {
		p.setReady(false, reasonClusterNotFound,
			fmt.Sprintf("Cluster %s not found: no Backup is taken until it exists", p.sb.Spec.Cluster.Name))
		return
	}
	p.setReady(true, reasonScheduled, "Backups are created on schedule; see status.nextScheduleTime")
}

// setDegraded is true while the Cluster is missing or the most recent finished Backup failed.
func (p *planner) setDegraded() {
	last, ok := p.kids.newestDone()
	switch {
	case p.o.Cluster == nil:
		p.setCondition(v1.ConditionDegraded, true, reasonClusterNotFound,
			fmt.Sprintf("Cluster %s not found", p.sb.Spec.Cluster.Name))
	case ok && last.backup.Status.Phase == v1.BackupPhaseFailed:
		p.setCondition(v1.ConditionDegraded, true, reasonBackupFailed,
			fmt.Sprintf("the most recent finished Backup %s failed: %s", last.backup.Name, failure(last.backup)))
	case ok:
		p.setCondition(v1.ConditionDegraded, false, reasonBackupsSucceed,
			fmt.Sprintf("the most recent finished Backup %s completed", last.backup.Name))
	default:
		p.setCondition(v1.ConditionDegraded, false, reasonNoBackupFinished, "no Backup of this schedule has finished yet")
	}
}

// oldCondition is the condition of type typ as it was read.
func (p *planner) oldCondition(typ string) *metav1.Condition {
	return meta.FindStatusCondition(p.sb.Status.Conditions, typ)
}

// transitionEvents emits one Event per condition transition a user should see.
func (p *planner) transitionEvents() {
	oldReady, newReady := p.oldCondition(v1.ConditionReady), meta.FindStatusCondition(p.d.Status.Conditions, v1.ConditionReady)
	if newReady != nil && (oldReady == nil || oldReady.Reason != newReady.Reason) {
		switch newReady.Reason {
		case reasonSuspended:
			p.d.Events = append(p.d.Events, evSuspended.With())
		case reasonInvalidSchedule:
			p.d.Events = append(p.d.Events, evInvalidSchedule.With(newReady.Message))
		case reasonTooFrequent:
			p.d.Events = append(p.d.Events, evTooFrequent.With(newReady.Message))
		case reasonClusterNotFound:
			p.d.Events = append(p.d.Events, evClusterNotFound.With(p.sb.Spec.Cluster.Name))
		}
		if oldReady != nil && oldReady.Reason == reasonSuspended {
			p.d.Events = append(p.d.Events, evResumed.With())
		}
	}
	oldDeg, newDeg := p.oldCondition(v1.ConditionDegraded), meta.FindStatusCondition(p.d.Status.Conditions, v1.ConditionDegraded)
	if newDeg == nil || (oldDeg != nil && oldDeg.Message == newDeg.Message) {
		return
	}
	last, _ := p.kids.newestDone()
	switch {
	case newDeg.Reason == reasonBackupFailed:
		p.d.Events = append(p.d.Events, evBackupFailed.With(last.backup.Name, failure(last.backup)))
	case newDeg.Reason == reasonBackupsSucceed && oldDeg != nil && oldDeg.Status == metav1.ConditionTrue:
		p.d.Events = append(p.d.Events, evRecovered.With(last.backup.Name))
	}
}

// failure is a failed Backup's error, or a placeholder when it recorded none.
func failure(b *v1.Backup) string {
	if b.Status.Error == "" {
		return "no error recorded"
	}
	return b.Status.Error
}

// statusEqual compares two statuses ignoring nothing: times, conditions and all.
func statusEqual(a, b v1.ScheduledBackupStatus) bool {
	return equality.Semantic.DeepEqual(a, b)
}

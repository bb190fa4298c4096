package scheduledbackup

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/schedule"
)

// The runs of each ScheduledBackup, as metrics on the operator's endpoint.
var (
	metricLabels = []string{"namespace", "scheduledbackup"}
	latenessMet  = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "cnm_schedule_lateness_seconds",
		Help: "How long after its slot the schedule's last Backup was created (0 for the immediate Backup)."}, metricLabels)
	missedMet = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cnm_schedule_missed_slots_total",
		Help: "Slots of the schedule that passed without a Backup (the operator down, a Backup still running): counted when the next slot that runs is recorded."},
		metricLabels)
)

func init() {
	metrics.Registry.MustRegister(latenessMet, missedMet)
}

// exportSchedule makes the schedule's counter exist, at 0 until a slot is missed.
func exportSchedule(sb *v1.ScheduledBackup) {
	missedMet.WithLabelValues(sb.Namespace, sb.Name)
}

// forgetSchedule removes the series of a ScheduledBackup that is gone.
func forgetSchedule(key types.NamespacedName) {
	l := prometheus.Labels{"namespace": key.Namespace, "scheduledbackup": key.Name}
	latenessMet.Delete(l)
	missedMet.Delete(l)
}

// observeCreated sets the lateness of the Backup just created for the slot d records, at now.
func observeCreated(sb *v1.ScheduledBackup, d Decision, now time.Time) {
	if slot := d.Status.LastScheduleTime; slot != nil {
		latenessMet.WithLabelValues(sb.Namespace, sb.Name).Set(max(now.Sub(slot.Time), 0).Seconds())
	}
}

// countMissed counts the slots a status write has just recorded as passed without a Backup.
func countMissed(sb *v1.ScheduledBackup, d Decision) {
	if d.MissedSlots > 0 {
		missedMet.WithLabelValues(sb.Namespace, sb.Name).Add(float64(d.MissedSlots))
	}
}

// missedSlots counts the slots of sched that the new status st passes over: those after the
// reference of the recorded status (lastScheduleTime, lastSkipped, or the creation) and before
// the newly recorded lastScheduleTime, whose Backup neither exists nor was created by this process
// (a slot run while its status write waited is no missed slot). The count is the one the status
// write makes true: it is counted once that write succeeds, and the next decision reads it back,
// so each slot is counted once. At most schedule.MissedCountCap per write.
func missedSlots(sched schedule.Schedule, o Observation, st v1.ScheduledBackupStatus) int {
	sb := o.Schedule
	old := sb.Status.LastScheduleTime
	next := st.LastScheduleTime
	if next == nil || (old != nil && !next.After(old.Time)) {
		return 0
	}
	h := schedule.History{Created: sb.CreationTimestamp.UTC()}
	if old != nil {
		h.LastSchedule = old.UTC()
	}
	if t := sb.Status.LastSkipped; t != nil {
		h.LastSkipped = t.UTC()
	}
	ran := map[string]bool{}
	for _, b := range o.Children {
		ran[b.Name] = true
	}
	for name := range o.Unrecorded {
		ran[name] = true
	}
	n := 0
	end := next.UTC()
	for t := sched.Next(h.Reference()); !t.IsZero() && t.Before(end) && n < schedule.MissedCountCap; t = sched.Next(t) {
		if !ran[sb.BackupName(t)] {
			n++
		}
	}
	return n
}

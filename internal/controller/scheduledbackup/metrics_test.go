package scheduledbackup_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/metricstest"
)

// metric is the value of the schedule's series name; -1 when it has none.
func (w *world) metric(schedule, name string) float64 {
	w.T.Helper()
	v, ok := metricstest.Value(w.T, ctrlmetrics.Registry, name, map[string]string{"namespace": w.NS, "scheduledbackup": schedule})
	if !ok {
		return -1
	}
	return v
}

// TestScheduleMetrics: the slots that passed while the operator was down are counted once, when
// the slot that runs is recorded, however many reconcilers (each one new) look afterwards; the
// lateness is how long after its slot the last Backup was created; a slot run on time misses
// nothing; the series go with the schedule.
func TestScheduleMetrics(t *testing.T) {
	t.Parallel()
	w, first := newNightly(t)
	if got := w.metric("nightly", "cnm_schedule_missed_slots_total"); got != 0 {
		t.Errorf("a new schedule: missed %v, want 0", got)
	}
	latest := first.Add(5 * time.Hour)
	w.Clock.SetTime(latest.Add(10 * time.Minute))
	for range 3 {
		w.reconcile("nightly")
	}
	w.wantBackups(childName("nightly", latest))
	if got := w.metric("nightly", "cnm_schedule_missed_slots_total"); got != 5 {
		t.Errorf("after 5 slots passed without a Backup: missed %v, want 5", got)
	}
	if got := w.metric("nightly", "cnm_schedule_lateness_seconds"); got != 600 {
		t.Errorf("lateness %v, want 600 (the Backup created 10 minutes after its slot)", got)
	}

	w.setPhase(childName("nightly", latest), v1.BackupPhaseCompleted)
	next := latest.Add(time.Hour)
	w.Clock.SetTime(next.Add(2 * time.Second))
	w.reconcile("nightly")
	w.reconcile("nightly")
	w.wantBackups(childName("nightly", latest), childName("nightly", next))
	if got := w.metric("nightly", "cnm_schedule_missed_slots_total"); got != 5 {
		t.Errorf("a slot run on time: missed %v, want still 5", got)
	}
	if got := w.metric("nightly", "cnm_schedule_lateness_seconds"); got != 2 {
		t.Errorf("lateness %v, want 2", got)
	}

	sb := w.schedule("nightly")
	check.Must(t, w.Client.Delete(w.Ctx, sb))
	w.Eventually("nightly gone", w.Gone(sb))
	w.reconcile("nightly")
	n, err := testutil.GatherAndCount(metricstest.Of(ctrlmetrics.Registry, map[string]string{"namespace": w.NS}),
		"cnm_schedule_missed_slots_total", "cnm_schedule_lateness_seconds")
	if err != nil || n != 0 {
		t.Errorf("after the schedule's deletion: %d series (%v), want none", n, err)
	}
}

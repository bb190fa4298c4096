package scheduledbackup

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/schedule"
)

// TestMissedSlots has one row per rule of what a status write counts as missed slots.
func TestMissedSlots(t *testing.T) {
	sched, err := schedule.Parse("0 0 * * * *")
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 1, 1, 0, 30, 0, 0, time.UTC) // the schedule's creation
	at := func(h int) *metav1.Time { return &metav1.Time{Time: time.Date(2026, 1, 1, h, 0, 0, 0, time.UTC)} }
	sb := func(last, skipped *metav1.Time) *v1.ScheduledBackup {
		return &v1.ScheduledBackup{ObjectMeta: metav1.ObjectMeta{Name: "nightly", CreationTimestamp: metav1.Time{Time: base}},
			Status: v1.ScheduledBackupStatus{LastScheduleTime: last, LastSkipped: skipped}}
	}
	child := func(h int) v1.Backup {
		return v1.Backup{ObjectMeta: metav1.ObjectMeta{Name: sb(nil, nil).BackupName(at(h).Time)}}
	}
	for _, tc := range []struct {
		rule       string
		o          Observation
		recorded   *metav1.Time
		wantMissed int
	}{
		{"the first slot recorded right after the creation misses nothing", Observation{Schedule: sb(nil, nil)}, at(1), 0},
		{"slots between the creation and the first recorded slot are missed", Observation{Schedule: sb(nil, nil)}, at(4), 3},
		{"slots between the last recorded slot and the new one are missed", Observation{Schedule: sb(at(2), nil)}, at(6), 3},
		{"a later lastSkipped is the reference: the slots before it are not missed again", Observation{Schedule: sb(at(1), at(4))}, at(6), 1},
		{"a status that records no newer slot counts nothing", Observation{Schedule: sb(at(5), nil)}, at(5), 0},
		{"no slot recorded counts nothing", Observation{Schedule: sb(at(5), nil)}, nil, 0},
		{"a slot whose Backup exists ran: not missed", Observation{Schedule: sb(at(1), nil), Children: []v1.Backup{child(2)}}, at(4), 1},
		{"a slot this process created and has not recorded ran: not missed",
			Observation{Schedule: sb(at(1), nil), Unrecorded: map[string]time.Time{child(3).Name: at(3).Time}}, at(4), 1},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			if got := missedSlots(sched, tc.o, v1.ScheduledBackupStatus{LastScheduleTime: tc.recorded}); got != tc.wantMissed {
				t.Errorf("missed %d, want %d", got, tc.wantMissed)
			}
		})
	}
}

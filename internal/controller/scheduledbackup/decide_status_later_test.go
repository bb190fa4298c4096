package scheduledbackup

import (
	"testing"
	"time"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
)

// TestDecideStatusCanWaitOnlyForAPlainSlot: only the status of a decision that creates a slot's
// Backup and does nothing else may be written later.
func TestDecideStatusCanWaitOnlyForAPlainSlot(t *testing.T) {
	sb := testSchedule()
	slot := buildScheduledBackup(sb, nil, hour(1), false)
	immediate := buildScheduledBackup(sb, nil, hour(1), true)
	cases := []struct {
		rule string
		d    Decision
		want bool
	}{
		{rule: "a slot's Backup and nothing else", d: Decision{Create: slot}, want: true},
		{rule: "no create", d: Decision{}},
		{rule: "the immediate Backup", d: Decision{Create: immediate}},
		{rule: "with an Event (missed slots)", d: Decision{Create: slot, Events: []kit.Event{evMissedSlots.With("2", "a", "b")}}},
		{rule: "with history to prune", d: Decision{Create: slot, Prune: []Prune{{Backup: &v1.Backup{}}}}},
		{rule: "with skipImmediately to reset", d: Decision{Create: slot, ResetSkipImmediately: true}},
	}
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			if got := c.d.statusCanWait(); got != c.want {
				t.Fatalf("statusCanWait %v, want %v", got, c.want)
			}
		})
	}
}

// TestDecideCountsAnUnrecordedSlotWhoseBackupIsGone: this process created a slot's Backup and,
// its status write held, the Backup was deleted. The slot counts as run: it is recorded, not
// created again, and not reported as an adoption.
func TestDecideCountsAnUnrecordedSlotWhoseBackupIsGone(t *testing.T) {
	sb := testSchedule()
	scheduledAt(hour(0))(sb)
	d := Decide(Observation{Now: hour(1).Add(3 * time.Second), Schedule: sb, Fresh: true,
		Cluster: &v1.Cluster{}, Unrecorded: map[string]time.Time{"nightly-20260501010000": hour(1)}})
	if d.Create != nil {
		t.Fatalf("the slot is created again: %s", d.Create.Name)
	}
	if got := d.Status.LastScheduleTime; got == nil || !got.Time.Equal(hour(1)) {
		t.Fatalf("lastScheduleTime %v, want %v", got, hour(1))
	}
	for _, e := range d.Events {
		if e.Kind.Reason == evBackupAdopted.Reason {
			t.Fatalf("events %v", d.Events)
		}
	}
}

package scheduledbackup

import (
	"testing"
	"time"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
)

// TestDecideStatusCanWaitForEveryPlainSlot: everything a decision creating a slot's Backup writes
// besides the Backup may wait for a later look, unless the Backup is the immediate one,
// skipImmediately is to be reset, or the status already owes more than maxOwedSlots earlier slots.
func TestDecideStatusCanWaitForEveryPlainSlot(t *testing.T) {
	sb := testSchedule()
	slot := buildScheduledBackup(sb, nil, hour(1), false)
	immediate := buildScheduledBackup(sb, nil, hour(1), true)
	owed := func(slots ...time.Time) Observation {
		o := Observation{Now: hour(1), Unrecorded: map[string]time.Time{}}
		for _, s := range slots {
			o.Unrecorded[sb.BackupName(s)] = s
		}
		return o
	}
	cases := []struct {
		rule string
		d    Decision
		o    Observation
		want bool
	}{
		{rule: "a slot's Backup and nothing else", d: Decision{Create: slot}, want: true},
		{rule: "no create", d: Decision{}},
		{rule: "the immediate Backup", d: Decision{Create: immediate}},
		{rule: "with an Event only this decision knows (missed slots): it waits with the create",
			d: Decision{Create: slot, Events: []kit.Event{evMissedSlots.With("2", "a", "b")}}, want: true},
		{rule: "with a condition transition's Event: the later look derives it again",
			d: Decision{Create: slot, Events: []kit.Event{evBackupFailed.With("nightly-x", "boom")}}, want: true},
		{rule: "with history to prune: the later look prunes what it then finds",
			d: Decision{Create: slot, Prune: []Prune{{Backup: &v1.Backup{}}}}, want: true},
		{rule: "with skipImmediately to reset", d: Decision{Create: slot, ResetSkipImmediately: true}},
		{rule: "with maxOwedSlots earlier slots owed to the status (the previous slot not recorded yet)",
			d: Decision{Create: slot}, o: owed(hour(0)), want: true},
		{rule: "with more than maxOwedSlots earlier slots owed to the status", d: Decision{Create: slot},
			o: owed(hour(-1), hour(0))},
	}
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			if got := c.d.statusCanWait(c.o); got != c.want {
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

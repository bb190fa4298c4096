package scheduledbackup

import (
	"testing"
	"time"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// TestDecideNeedsFreshLookExactlyWhenItWrites: a decision taken on the cache is taken again on a
// fresh read (when the cache may lag this process's writes) if it would write anything, and only
// then.
func TestDecideNeedsFreshLookExactlyWhenItWrites(t *testing.T) {
	settled := func(sb *v1.ScheduledBackup, now time.Time, children ...v1.Backup) *v1.ScheduledBackup {
		// The status a decision at now leaves: deciding again on it writes no status.
		d := Decide(Observation{Now: now, Schedule: sb, Children: children, Fresh: true, Cluster: &v1.Cluster{}})
		out := sb.DeepCopy()
		out.Status = d.Status
		return out
	}
	base := testSchedule()
	scheduledAt(hour(1))(base)
	idle := settled(base, hour(1).Add(time.Minute))
	history := []v1.Backup{
		testChild("nightly-20260501000000", v1.BackupPhaseFailed), testChild("nightly-20260501003000", v1.BackupPhaseFailed),
		testChild("nightly-20260501004000", v1.BackupPhaseFailed), testChild("nightly-20260501010000", v1.BackupPhaseFailed)}
	full := settled(base, hour(1).Add(time.Minute), history...)
	cases := []struct {
		rule     string
		sb       *v1.ScheduledBackup
		children []v1.Backup
		now      time.Time
		fresh    bool
		want     bool
	}{
		{rule: "nothing to write", sb: idle, now: hour(1).Add(2 * time.Minute)},
		{rule: "a slot to create", sb: idle, now: hour(2), want: true},
		{rule: "a status change (a Backup failed)", sb: idle, now: hour(1).Add(2 * time.Minute),
			children: []v1.Backup{testChild("nightly-20260501010000", v1.BackupPhaseFailed)}, want: true},
		{rule: "only history to prune", sb: full, now: hour(1).Add(2 * time.Minute), children: history, want: true},
		{rule: "already fresh", sb: idle, now: hour(2), fresh: true},
	}
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			o := Observation{Now: c.now, Schedule: c.sb, Children: c.children, Fresh: c.fresh, Cluster: &v1.Cluster{}}
			d := Decide(o)
			if got := d.needsFreshLook(o); got != c.want {
				t.Fatalf("needsFreshLook %v, want %v (%+v)", got, c.want, d)
			}
		})
	}
}

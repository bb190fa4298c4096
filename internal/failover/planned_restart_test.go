package failover

import (
	"testing"
	"time"
)

// plannedRestart: a rolling update recorded at t the restart of name's Pod "uid-old".
func plannedRestart(name string, t time.Time) change {
	return func(o *Observation) {
		o.Status.PrimaryRestart, o.Status.PrimaryRestartAt, o.Status.PrimaryRestartPodUID = name, t, "uid-old"
	}
}

// podUID gives the instance's Pod a UID.
func podUID(uid string) func(*Instance) { return func(in *Instance) { in.PodUID = uid } }

// TestDecidePlannedRestart: the rules of a primary restarted in place by a rolling update.
func TestDecidePlannedRestart(t *testing.T) {
	started := t0.Add(-10 * time.Second)
	end := started.Add(PlannedRestartBudget)
	for _, tc := range []struct {
		name    string
		changes []change
		want    want
	}{
		{"the primary's Pod is gone during its planned restart: no failover, wait for the budget's end",
			[]change{plannedRestart("c-1", started), on("c-1", noPod), failoverDelay(0)},
			want{kind: Wait, op: PrimaryRestartOperation, until: end, reason: "restarts in place"}},
		{"its Pod is being deleted during its planned restart: wait",
			[]change{plannedRestart("c-1", started), on("c-1", podDeleting), failoverDelay(0)},
			want{kind: Wait, op: PrimaryRestartOperation, until: end, reason: "restarts in place"}},
		{"past the budget the primary is failing as any other: record it",
			[]change{plannedRestart("c-1", t0.Add(-PlannedRestartBudget)), on("c-1", noPod), failoverDelay(0)},
			want{kind: Failover, step: StepRecordFailing, instance: "c-1", reason: "failing"}},
		{"a planned restart of another instance holds nothing back",
			[]change{plannedRestart("c-2", started), on("c-1", noPod), failoverDelay(0)},
			want{kind: Failover, step: StepRecordFailing, instance: "c-1", reason: "failing"}},
		{"a recorded restart whose Pod still runs undeleted holds nothing back (the deletion may never come)",
			[]change{plannedRestart("c-1", started), on("c-1", podUID("uid-old")), on("c-1", unreachable), failoverDelay(0)},
			want{kind: Failover, step: StepRecordFailing, instance: "c-1", reason: "failing"}},
		{"the new Pod of a planned restart, not ready yet: still held",
			[]change{plannedRestart("c-1", started), on("c-1", podUID("uid-new")), on("c-1", unreachable), failoverDelay(0)},
			want{kind: Wait, op: PrimaryRestartOperation, until: end, reason: "restarts in place"}},
		{"a primary back and healthy during its planned restart: nothing",
			[]change{plannedRestart("c-1", started)},
			want{kind: Nothing, reason: "healthy"}},
		{"a failure recorded after the restart was planned (a cache that had not seen the deletion) is held back",
			[]change{plannedRestart("c-1", started), on("c-1", noPod), failingSince(started.Add(time.Second)), failoverDelay(0)},
			want{kind: Wait, op: PrimaryRestartOperation, until: end, reason: "restarts in place"}},
		{"a failure recorded before the restart is not held back",
			[]change{plannedRestart("c-1", started), on("c-1", noPod), failingSince(t0.Add(-time.Minute)), failoverDelay(time.Hour)},
			want{kind: Wait, op: FailoverOperation, reason: "failoverDelay"}},
	} {
		t.Run(tc.name, func(t *testing.T) { check(t, build(tc.changes...), tc.want) })
	}
}

package failover

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestUpdateTarget: the replica an unsupervised rolling update switches over to, one row per rule.
func TestUpdateTarget(t *testing.T) {
	all := func(string) bool { return true }
	only := func(names ...string) func(string) bool {
		return func(n string) bool { return slices.Contains(names, n) }
	}
	for _, tc := range []struct {
		rule    string
		changes []change
		updated func(string) bool
		want    string
		why     string // a part of the reason when want is ""
	}{
		{"equal histories: the earliest updated replica", nil, all, "c-2", ""},
		{"the most advanced updated replica, not the earliest",
			[]change{on("c-2", history(a("1-8"))), on("c-3", history(a("1-10")))}, all, "c-3", ""},
		{"only an updated replica, even a less advanced one (the switchover waits for it to catch up)",
			[]change{on("c-2", history(a("1-8")))}, only("c-2"), "c-2", ""},
		{"received but not yet applied counts: the history, not the executed set",
			[]change{on("c-2", executed(a("1-8"))), on("c-2", retrieved(a("1-12"))), on("c-3", history(a("1-10")))}, all, "c-2", ""},
		{"no updated replica: none", nil, only(), "", "not updated"},
		{"a fenced replica is never the target", []change{fenced("c-2")}, only("c-2"), "", "fenced"},
		{"a diverged replica is never the target", []change{diverged("c-2")}, only("c-2"), "", "diverged"},
		{"a replica not ready is never the target", []change{on("c-2", notReady)}, only("c-2"), "", "not ready"},
		{"a replica not receiving from the primary is never the target", []change{on("c-2", ioStopped)}, only("c-2"), "", "not receiving"},
		{"a replica that did not answer is never the target", []change{on("c-2", func(in *Instance) { in.Reachable = false })}, only("c-2"), "", "not answering"},
		{"diverged histories among updated replicas: none",
			[]change{on("c-2", history(set(a("1-10"), b("1")))), on("c-3", history(set(a("1-10"), b("2"))))}, all, "", "diverge"},
		{"a replica holding a transaction the primary lacks is never the target, however advanced",
			[]change{on("c-3", executed(set(a("1-10"), b("1"))))}, all, "c-2", ""},
		{"a replica more than the lag bound behind is never the target",
			[]change{on("c-2", func(in *Instance) { in.Replication.LagSeconds = UpdateTargetMaxLagSeconds + 1 })}, only("c-2"), "", "lag"},
		{"a replica whose lag is unknown is never the target",
			[]change{on("c-2", func(in *Instance) { in.Replication.LagSeconds = -1 })}, only("c-2"), "", "lag"},
		{"no switchover while a primary change is under way", []change{target("c-2", t0)}, all, "", "under way"},
		{"no switchover while the primary is recorded failing", []change{failingSince(t0.Add(-time.Second))}, all, "", "recorded failing"},
		{"no switchover from a fenced primary", []change{fenced("c-1")}, all, "", "fenced"},
		{"no switchover from a primary not seen writable", []change{on("c-1", readOnly)}, all, "", "not seen accepting writes"},
	} {
		got, why := UpdateTarget(build(tc.changes...), tc.updated)
		if got != tc.want || (tc.want == "" && !strings.Contains(why, tc.why)) {
			t.Errorf("%s: UpdateTarget = %q (%s), want %q (%s)", tc.rule, got, why, tc.want, tc.why)
		}
	}
}

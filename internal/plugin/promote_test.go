package plugin_test

import (
	"context"
	"strings"
	"testing"

	clocktesting "k8s.io/utils/clock/testing"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/plugin"
)

// TestPromoteVerb runs `promote` against the real API server, one rule a row. db-1 is the primary
// of a three-instance Cluster unless the row says otherwise.
func TestPromoteVerb(t *testing.T) {
	caughtUp := func(c *v1.Cluster) {
		c.Status.GTIDExecutedByInstance = map[string]string{"db-1": "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-9", "db-2": "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-9", "db-3": "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-7"}
	}
	cases := []struct {
		rule     string
		existing func(*v1.Cluster)
		instance string
		force    bool
		wantErr  string // "" when the switchover must be requested
	}{
		{rule: "a replica that has the primary's transactions becomes the target primary", instance: "db-2", existing: caughtUp},
		{rule: "a replica lacking transactions of the primary is refused, with the figures", instance: "db-3", existing: caughtUp,
			wantErr: "db-3 lags the primary db-1: it lacks 2 transaction(s) the primary executed (3e11fa47-71ca-11e1-9e33-c80aa9429562:8-9)"},
		{rule: "--force skips the plugin's check", instance: "db-3", existing: caughtUp, force: true},
		{rule: "a replica whose GTID set was never reported is refused", instance: "db-2",
			wantErr: "cannot tell whether db-2 is as advanced as the primary db-1"},
		{rule: "the current primary is refused", instance: "db-1",
			wantErr: "db-1 is already the primary of db"},
		{rule: "the target of a switchover in progress is refused", instance: "db-2",
			existing: func(c *v1.Cluster) { c.Status.TargetPrimary = "db-2" },
			wantErr:  "db-2 is already the target primary of db: the switchover to it is in progress"},
		{rule: "a switchover or failover in progress is refused", instance: "db-3",
			existing: func(c *v1.Cluster) { c.Status.TargetPrimary = "db-2" },
			wantErr:  `a switchover or failover of db is already in progress (from "db-1" to "db-2")`},
		{rule: "a Cluster without a primary yet is refused", instance: "db-2",
			existing: func(c *v1.Cluster) { c.Status.CurrentPrimary, c.Status.TargetPrimary = "", "" },
			wantErr:  "db has no primary yet"},
		{rule: "an instance fenced in the status is refused", instance: "db-2",
			existing: func(c *v1.Cluster) { c.Status.FencedInstances = []string{"db-2"} },
			wantErr:  "db-2 is fenced and cannot be promoted: unfence it first"},
		{rule: "an instance fenced by the annotation the operator has not mirrored yet is refused", instance: "db-2",
			existing: fenced(`["db-2"]`),
			wantErr:  "db-2 is fenced and cannot be promoted"},
		{rule: "every instance fenced with a star is refused", instance: "db-3",
			existing: fenced(`["*"]`),
			wantErr:  "db-3 is fenced and cannot be promoted"},
		{rule: "a malformed fencing annotation is refused", instance: "db-2",
			existing: fenced(`db-2`),
			wantErr:  "cannot tell whether db-2 is fenced"},
		{rule: "a diverged instance is refused", instance: "db-3",
			existing: func(c *v1.Cluster) { c.Status.DivergedInstances = []string{"db-3"} },
			wantErr:  "db-3 has diverged"},
		{rule: "a name that is not <cluster>-<n> is refused", instance: "other-2",
			wantErr: "other-2 is not an instance of Cluster db: instance names are db-<n>"},
		{rule: "an instance number without a Pod is refused", instance: "db-4",
			wantErr: "db-4 is not an instance of Cluster db: there is no Pod db-4"},
	}
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			w := newWorld(t)
			before := w.newCluster(t, 3, c.existing)
			args := []string{"promote", "db", c.instance}
			if c.force {
				args = append(args, "--force")
			}
			out, err := w.run(args...)
			after := w.get(t)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v (output %q), want one containing %q", err, out, c.wantErr)
				}
				if after.Status.TargetPrimary != before.Status.TargetPrimary || after.Status.TargetPrimaryTimestamp != nil {
					t.Errorf("a refused promote changed the status: targetPrimary %q at %v", after.Status.TargetPrimary, after.Status.TargetPrimaryTimestamp)
				}
				return
			}
			if err != nil || !strings.Contains(out, "switchover of db to "+c.instance+" requested") {
				t.Fatalf("output %q, error %v", out, err)
			}
			st := after.Status
			if st.TargetPrimary != c.instance || st.TargetPrimaryTimestamp == nil || !st.TargetPrimaryTimestamp.Time.Equal(testNow) {
				t.Errorf("targetPrimary %q at %v, want %q at %v (the plugin's clock)", st.TargetPrimary, st.TargetPrimaryTimestamp, c.instance, testNow)
			}
			if st.CurrentPrimary != before.Status.CurrentPrimary {
				t.Errorf("currentPrimary changed to %q: only the instances write it", st.CurrentPrimary)
			}
		})
	}
}

// TestPromoteLosingARaceToAFailoverIsRefused: the operator starts a failover to db-3 between the
// verb's read and its patch. The optimistic lock turns the patch into a conflict, the retry reads
// the Cluster again, sees the failover in progress and refuses: the verb never overwrites it.
func TestPromoteLosingARaceToAFailoverIsRefused(t *testing.T) {
	w := newWorld(t)
	w.newCluster(t, 3, nil)
	racing, patches, conflicts := w.racingClient(t, func() {
		w.update(t, func(c *v1.Cluster) { c.Status.TargetPrimary = "db-3" })
	})
	err := plugin.Promote(context.Background(), racing, clocktesting.NewFakePassiveClock(testNow), w.ns, "db", "db-2", true)
	if err == nil || !strings.Contains(err.Error(), `already in progress (from "db-1" to "db-3")`) {
		t.Fatalf("error %v, want the failover in progress", err)
	}
	if *patches != 1 || *conflicts != 1 {
		t.Errorf("%d patches, %d conflicts; want the one patch refused by the lock", *patches, *conflicts)
	}
	if st := w.get(t).Status; st.TargetPrimary != "db-3" {
		t.Errorf("targetPrimary %q: the failover's db-3 was overwritten", st.TargetPrimary)
	}
}

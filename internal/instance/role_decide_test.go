package instance

import (
	"time"

	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
)

const (
	uP = "3e11fa47-71ca-11e1-9e33-c80aa9429562" // the primary's server_uuid
	uR = "4f22ab58-82db-22f2-af44-d91bb0530673" // a replica's server_uuid
)

func setPtr(s string) *gtid.Set {
	v := gtid.MustParse(s)
	return &v
}

func TestDecideRole(t *testing.T) {
	status := func(target, current string) *v1alpha1.ClusterStatus {
		return &v1alpha1.ClusterStatus{TargetPrimary: target, CurrentPrimary: current}
	}
	fenced := status("c-1", "c-1")
	fenced.FencedInstances = []string{"c-2", "c-1"}
	failing := status("c-1", "c-1")
	failing.PrimaryFailingSince = &metav1.Time{}
	diverged := status("c-2", "c-1")
	diverged.DivergedInstances = []string{"c-2"}
	// recorded: the operator recorded what c-2 must execute for the switchover under way.
	since := &metav1.Time{Time: time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)}
	recorded := func(instance, set string, at *metav1.Time) *v1alpha1.ClusterStatus {
		st := status("c-2", "c-1")
		st.TargetPrimaryTimestamp = since
		st.TargetPrimaryCatchUp = &v1alpha1.PrimaryCatchUp{Instance: instance, GTIDSet: set, TargetPrimaryTimestamp: at}
		return st
	}
	free := &LeaseTake{Allowed: true, Reason: "expired"}
	for _, tc := range []struct {
		name       string
		in         RoleInput
		want       RoleAction
		wantSource string
		wantErrant string
		wantCatch  string
	}{
		{"while the primary is failing, its replica follows it with a stopped receiver kept stopped",
			RoleInput{Instance: "c-2", Status: failing, ReplicatingFrom: "c-1", PrimaryExecuted: setPtr(uP + ":1-9")}, ActFollow, "c-1", "", ""},
		{"bootstrap: no target yet, everyone read-only",
			RoleInput{Instance: "c-1", Status: status("", "")}, ActHold, "", "", ""},
		{"the target primary promotes itself",
			RoleInput{Instance: "c-1", Status: status("c-1", "")}, ActPrimary, "", "", ""},
		{"the current primary stays primary",
			RoleInput{Instance: "c-1", Status: status("c-1", "c-1")}, ActPrimary, "", "", ""},
		{"a switchover target whose old primary does not answer waits while the old primary's Lease is held",
			RoleInput{Instance: "c-2", Status: status("c-2", "c-1"), ReplicatingFrom: "c-1", LeaseEnabled: true,
				Lease: &LeaseTake{Allowed: false, Reason: "held by c-1"}}, ActHold, "", "", ""},
		{"a switchover target whose old primary does not answer promotes once the old primary's Lease is free, after the set the operator recorded",
			RoleInput{Instance: "c-2", Status: recorded("c-2", uP+":1-12", since), ReplicatingFrom: "c-1", LeaseEnabled: true,
				Lease: free}, ActPrimary, "", "", uP + ":1-12"},
		{"catch-up: a target whose old primary does not answer waits for the operator's record, even with the Lease free",
			RoleInput{Instance: "c-2", Status: status("c-2", "c-1"), ReplicatingFrom: "c-1", LeaseEnabled: true,
				Lease: free}, ActHold, "", "", ""},
		{"catch-up: a record for another target does not count",
			RoleInput{Instance: "c-2", Status: recorded("c-3", uP+":1-12", since), ReplicatingFrom: "c-1", LeaseEnabled: true,
				Lease: free}, ActHold, "", "", ""},
		{"catch-up: a record of an earlier primary change to the same target does not count",
			RoleInput{Instance: "c-2", Status: recorded("c-2", uP+":1-12", &metav1.Time{Time: since.Add(-time.Minute)}), ReplicatingFrom: "c-1",
				LeaseEnabled: true, Lease: free}, ActHold, "", "", ""},
		{"catch-up: a target that sees the old primary read-only also executes what the operator recorded (what other replicas received)",
			RoleInput{Instance: "c-2", Status: recorded("c-2", uP+":1-12", since), ReplicatingFrom: "c-1",
				PrimaryExecuted: setPtr(uP + ":1-9")}, ActPrimary, "", "", uP + ":1-12"},
		{"a switchover target whose old primary does not answer waits while the Lease could not be read",
			RoleInput{Instance: "c-2", Status: status("c-2", "c-1"), ReplicatingFrom: "c-1", LeaseEnabled: true}, ActHold, "", "", ""},
		{"a switchover target never promotes on unreachable alone: Lease disabled and the old primary's Pod still there",
			RoleInput{Instance: "c-2", Status: status("c-2", "c-1"), ReplicatingFrom: "c-1"}, ActHold, "", "", ""},
		{"Lease disabled: a switchover target promotes once the old primary's Pod is gone, after the recorded set",
			RoleInput{Instance: "c-2", Status: recorded("c-2", "", since), ReplicatingFrom: "c-1", PrimaryPodGone: true}, ActPrimary, "", "", ""},
		{"Lease disabled: without the operator's record the target waits though the old primary's Pod is gone",
			RoleInput{Instance: "c-2", Status: status("c-2", "c-1"), ReplicatingFrom: "c-1", PrimaryPodGone: true}, ActHold, "", "", ""},
		{"a switchover target that sees the old primary read-only promotes even while the Lease is still held (it acquires it before clearing read-only)",
			RoleInput{Instance: "c-2", Status: status("c-2", "c-1"), ReplicatingFrom: "c-1", LeaseEnabled: true,
				Lease: &LeaseTake{Allowed: false, Reason: "held by c-1"}, PrimaryExecuted: setPtr(uP + ":1-9")}, ActPrimary, "", "", uP + ":1-9"},
		{"a switchover target first catches up with the old primary",
			RoleInput{Instance: "c-2", Status: status("c-2", "c-1"), ReplicatingFrom: "c-1",
				PrimaryExecuted: setPtr(uP + ":1-9")}, ActPrimary, "", "", uP + ":1-9"},
		{"a switchover target waits while the old primary is writable",
			RoleInput{Instance: "c-2", Status: status("c-2", "c-1"), ReplicatingFrom: "c-1",
				PrimaryExecuted: setPtr(uP + ":1-9"), PrimaryWritable: true}, ActHold, "", "", ""},
		{"a switchover target waits while commits of the read-only old primary still wait for semi-sync acknowledgements (its final set is not known)",
			RoleInput{Instance: "c-2", Status: status("c-2", "c-1"), ReplicatingFrom: "c-1",
				PrimaryExecuted: setPtr(uP + ":1-9"), PrimaryAckWaiters: 1}, ActHold, "", "", ""},
		{"the old primary of a switchover turns read-only and waits",
			RoleInput{Instance: "c-1", Status: status("c-2", "c-1")}, ActHold, "", "", ""},
		{"a replica waits while no primary is confirmed",
			RoleInput{Instance: "c-3", Status: status("c-2", "")}, ActHold, "", "", ""},
		{"a fenced replica holds",
			RoleInput{Instance: "c-2", Status: fenced, PrimaryExecuted: setPtr(uP + ":1-5")}, ActHold, "", "", ""},
		{"a fenced primary holds read-only, even as target",
			RoleInput{Instance: "c-1", Status: fenced}, ActHold, "", "", ""},
		{"an instance listed as diverged is never promoted",
			RoleInput{Instance: "c-2", Status: diverged}, ActDiverged, "", "", ""},
		{"a replica contained in the primary follows it",
			RoleInput{Instance: "c-2", Status: status("c-1", "c-1"), Executed: gtid.MustParse(uP + ":1-3"),
				PrimaryExecuted: setPtr(uP + ":1-5")}, ActFollow, "c-1", "", ""},
		{"an empty new replica follows",
			RoleInput{Instance: "c-3", Status: status("c-1", "c-1"), PrimaryExecuted: setPtr(uP + ":1-5")}, ActFollow, "c-1", "", ""},
		{"an errant transaction makes a replica diverged",
			RoleInput{Instance: "c-2", Status: status("c-1", "c-1"), Executed: gtid.MustParse(uP + ":1-3," + uR + ":1"),
				PrimaryExecuted: setPtr(uP + ":1-5")}, ActDiverged, "", uR + ":1", ""},
		{"a transaction received from the primary before it shows in the primary's gtid_executed is not errant",
			// Semi-sync AFTER_SYNC: the primary adds a transaction to gtid_executed only once
			// acknowledged, while a replica may already have applied it.
			RoleInput{Instance: "c-2", Status: status("c-1", "c-1"), ReplicatingFrom: "c-1", Executed: gtid.MustParse(uP + ":1-6"),
				Received: gtid.MustParse(uP + ":1-6"), PrimaryExecuted: setPtr(uP + ":1-5")}, ActFollow, "c-1", "", ""},
		{"a transaction received from another source is still errant",
			RoleInput{Instance: "c-2", Status: status("c-1", "c-1"), ReplicatingFrom: "c-3", Executed: gtid.MustParse(uP + ":1-6"),
				Received: gtid.MustParse(uP + ":1-6"), PrimaryExecuted: setPtr(uP + ":1-5")}, ActDiverged, "", uP + ":6", ""},
		{"a primary's commit waiting for its acknowledgement, applied by a replica through another source, is not errant",
			// The replica follows the former primary, which already replicates from the new
			// one: the new primary's commit is in its binary log and owned by its waiting
			// session (gtid_owned), not yet in its gtid_executed.
			RoleInput{Instance: "c-3", Status: status("c-1", "c-1"), ReplicatingFrom: "c-2", Executed: gtid.MustParse(uP + ":1-6"),
				PrimaryExecuted: setPtr(uP + ":1-5"), PrimaryInFlight: gtid.MustParse(uP + ":6")}, ActFollow, "c-1", "", ""},
		{"a transaction neither executed nor in flight on the primary is still errant",
			RoleInput{Instance: "c-3", Status: status("c-1", "c-1"), ReplicatingFrom: "c-2", Executed: gtid.MustParse(uP + ":1-7"),
				PrimaryExecuted: setPtr(uP + ":1-5"), PrimaryInFlight: gtid.MustParse(uP + ":6")}, ActDiverged, "", uP + ":7", ""},
		{"a local write next to received transactions is errant",
			RoleInput{Instance: "c-2", Status: status("c-1", "c-1"), ReplicatingFrom: "c-1", Executed: gtid.MustParse(uP + ":1-6," + uR + ":1"),
				Received: gtid.MustParse(uP + ":1-6"), PrimaryExecuted: setPtr(uP + ":1-5")}, ActDiverged, "", uR + ":1", ""},
		{"a former primary with an unreplicated tail is diverged",
			RoleInput{Instance: "c-1", Status: status("c-2", "c-2"), Executed: gtid.MustParse(uP + ":1-7"),
				PrimaryExecuted: setPtr(uP + ":1-5," + uR + ":1-2")}, ActDiverged, "", uP + ":6-7", ""},
		{"a former primary fully replicated rejoins as a replica",
			RoleInput{Instance: "c-1", Status: status("c-2", "c-2"), Executed: gtid.MustParse(uP + ":1-5"),
				PrimaryExecuted: setPtr(uP + ":1-5," + uR + ":1-2")}, ActFollow, "c-2", "", ""},
		{"primary's set unknown: a replica already following it keeps following",
			RoleInput{Instance: "c-2", Status: status("c-1", "c-1"), ReplicatingFrom: "c-1"}, ActFollow, "c-1", "", ""},
		{"primary's set unknown: a replica not yet following it holds",
			RoleInput{Instance: "c-2", Status: status("c-1", "c-1"), ReplicatingFrom: "c-3"}, ActHold, "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := DecideRole(tc.in)
			if !got.CatchUp.Equal(gtid.MustParse(tc.wantCatch)) {
				t.Errorf("CatchUp = %q, want %q", got.CatchUp, tc.wantCatch)
			}
			if got.Action != tc.want || got.Source != tc.wantSource || !got.Errant.Equal(gtid.MustParse(tc.wantErrant)) {
				t.Errorf("DecideRole = %s from %q, errant %q (%s); want %s from %q, errant %q",
					got.Action, got.Source, got.Errant, got.Reason, tc.want, tc.wantSource, tc.wantErrant)
			}
			if got.Reason == "" {
				t.Error("no reason given")
			}
		})
	}
}

func TestDrained(t *testing.T) {
	for _, tc := range []struct {
		name                string
		retrieved, executed string
		want                bool
	}{
		{"nothing received", "", uP + ":1-5", true},
		{"all applied", uP + ":3-5", uP + ":1-5", true},
		{"relay log not applied yet", uP + ":3-7", uP + ":1-5", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Drained(gtid.MustParse(tc.retrieved), gtid.MustParse(tc.executed)); got != tc.want {
				t.Errorf("Drained = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDecideRoleKeepsReceiverStoppedDuringFailover(t *testing.T) {
	st := &v1alpha1.ClusterStatus{TargetPrimary: "c-1", CurrentPrimary: "c-1"}
	in := RoleInput{Instance: "c-2", Status: st, ReplicatingFrom: "c-1", PrimaryExecuted: setPtr(uP + ":1-9")}
	if d := DecideRole(in); d.KeepReceiverStopped {
		t.Errorf("a healthy primary's replica restarts a stopped receiver: %+v", d)
	}
	st.PrimaryFailingSince = &metav1.Time{}
	if d := DecideRole(in); d.Action != ActFollow || !d.KeepReceiverStopped {
		t.Errorf("while the primary fails, its replica keeps a stopped receiver stopped: %+v", d)
	}
	failing := metav1.NewTime(time.Date(2026, 11, 25, 1, 0, 0, 0, time.UTC))
	promoted := metav1.NewTime(failing.Add(20 * time.Second))
	st.PrimaryFailingSince, st.CurrentPrimaryTimestamp = &failing, &promoted
	if d := DecideRole(in); d.Action != ActFollow || d.KeepReceiverStopped {
		t.Errorf("a replica of the primary a failover promoted (after primaryFailingSince) restarts a stopped receiver: %+v", d)
	}
	// The failover from c-9 to c-1 completed within the second of the failure (the API keeps
	// times to the second), or c-1's clock runs behind the operator's: failingPrimary decides.
	for _, promotedAt := range []time.Time{failing.Time, failing.Add(-5 * time.Second)} {
		promoted := metav1.NewTime(promotedAt)
		st.PrimaryFailingSince, st.CurrentPrimaryTimestamp, st.FailingPrimary = &failing, &promoted, "c-9"
		if d := DecideRole(in); d.Action != ActFollow || d.KeepReceiverStopped {
			t.Errorf("promoted at %s, failing since %s: a replica of the new primary keeps its receiver stopped: %+v", promotedAt, failing, d)
		}
	}
	// The failing primary itself, whatever its timestamp says.
	later := metav1.NewTime(failing.Add(20 * time.Second))
	st.FailingPrimary, st.CurrentPrimaryTimestamp = "c-1", &later
	if d := DecideRole(in); d.Action != ActFollow || !d.KeepReceiverStopped {
		t.Errorf("while c-1, recorded failing, still fails, its replica restarts a stopped receiver: %+v", d)
	}
}

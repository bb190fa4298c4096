package instance

import (
	"testing"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// TestDecideRoleLooksAgainSoon: the target of a switchover waits for the old primary (c-1) to
// turn read-only and for its waiting commits to end, steps of a fraction of a second: it looks
// again after SoonInterval, not after the period. Other decisions keep the period.
func TestDecideRoleLooksAgainSoon(t *testing.T) {
	switching := &v1alpha1.ClusterStatus{TargetPrimary: "c-2", CurrentPrimary: "c-1"}
	for _, tc := range []struct {
		name     string
		in       RoleInput
		want     RoleAction
		wantSoon bool
	}{
		{"the target waits for the old primary to turn read-only, looking again soon",
			RoleInput{Instance: "c-2", Status: switching, ReplicatingFrom: "c-1", PrimaryExecuted: setPtr(uP + ":1-9"), PrimaryWritable: true},
			ActHold, true},
		{"the target waits for the old primary's waiting commits, looking again soon",
			RoleInput{Instance: "c-2", Status: switching, ReplicatingFrom: "c-1", PrimaryExecuted: setPtr(uP + ":1-9"), PrimaryAckWaiters: 2},
			ActHold, true},
		{"the target that promotes does not ask for a pass soon",
			RoleInput{Instance: "c-2", Status: switching, ReplicatingFrom: "c-1", PrimaryExecuted: setPtr(uP + ":1-9")},
			ActPrimary, false},
		{"a replica during a switchover keeps the period",
			RoleInput{Instance: "c-3", Status: switching, ReplicatingFrom: "c-1", PrimaryExecuted: setPtr(uP + ":1-9"), PrimaryWritable: true},
			ActFollow, false},
		{"the old primary holding read-only keeps the period",
			RoleInput{Instance: "c-1", Status: switching}, ActHold, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := DecideRole(tc.in)
			if got.Action != tc.want || got.Soon != tc.wantSoon {
				t.Errorf("DecideRole = %s, soon %v (%s); want %s, soon %v", got.Action, got.Soon, got.Reason, tc.want, tc.wantSoon)
			}
		})
	}
}

package semisync

import (
	"slices"
	"testing"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

func TestParticipantChanges(t *testing.T) {
	on := func(name string) ParticipantChange { return ParticipantChange{Instance: name, Participant: true} }
	off := func(name string) ParticipantChange { return ParticipantChange{Instance: name, Participant: false} }
	for _, tc := range []struct {
		name          string
		spec          *v1alpha1.ClusterSpec
		replicas      []ReplicaHealth
		acknowledging map[string]bool
		want          []ParticipantChange
	}{
		{"maxSyncReplicas 1: the second replica stops acknowledging",
			semiSyncSpec(true, v1alpha1.DataDurabilityRequired, 1, 1), replicas(true, true),
			map[string]bool{"c-2": true, "c-3": true}, []ParticipantChange{off("c-3")}},
		{"maxSyncReplicas 1: a healthy replica replaces an unhealthy participant, started before the other stops",
			semiSyncSpec(true, v1alpha1.DataDurabilityRequired, 1, 1), replicas(false, true),
			map[string]bool{"c-2": true, "c-3": false}, []ParticipantChange{on("c-3"), off("c-2")}},
		{"maxSyncReplicas at the number of replicas: every replica acknowledges",
			semiSyncSpec(true, v1alpha1.DataDurabilityPreferred, 1, 3), replicas(true, false, true),
			map[string]bool{"c-2": true, "c-3": false, "c-4": false}, []ParticipantChange{on("c-3"), on("c-4")}},
		{"maxSyncReplicas below minSyncReplicas counts as minSyncReplicas",
			semiSyncSpec(true, v1alpha1.DataDurabilityRequired, 2, 1), replicas(true, true, true),
			map[string]bool{"c-2": true, "c-3": true, "c-4": true}, []ParticipantChange{off("c-4")}},
		{"converged: nothing to tell",
			semiSyncSpec(true, v1alpha1.DataDurabilityRequired, 1, 1), replicas(true, true),
			map[string]bool{"c-2": true, "c-3": false}, nil},
		{"a replica that did not report is not told",
			semiSyncSpec(true, v1alpha1.DataDurabilityRequired, 1, 1), replicas(true, true),
			map[string]bool{"c-2": true}, nil},
		{"semi-sync off: nothing to tell",
			semiSyncSpec(false, "", 1, 1), replicas(true, true),
			map[string]bool{"c-2": true, "c-3": true}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ParticipantChanges(PlanFor(tc.spec, tc.replicas), tc.acknowledging)
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestParticipationAcknowledges(t *testing.T) {
	for _, tc := range []struct {
		name string
		told Participation
		want bool
	}{
		{"not told yet: acknowledges", NotTold, true},
		{"a participant acknowledges", Participant, true},
		{"a non-participant does not", NotParticipant, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.told.Acknowledges(); got != tc.want {
				t.Errorf("Acknowledges() = %v, want %v", got, tc.want)
			}
		})
	}
}

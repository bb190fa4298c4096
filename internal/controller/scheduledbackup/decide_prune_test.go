package scheduledbackup

import (
	"testing"
	"time"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// TestDecidePruneKeepsRemoteData: a pruned Backup whose deletion could delete its remote data
// (it carries the remote-cleanup finalizer and its own policy is not keep) is set to keep first;
// any other is deleted directly.
func TestDecidePruneKeepsRemoteData(t *testing.T) {
	cases := []struct {
		rule       string
		finalizers []string
		policy     v1.DeletionPolicy
		keepFirst  bool
	}{
		{rule: "finalizer and policy delete: keep first", finalizers: []string{v1.RemoteCleanupFinalizer},
			policy: v1.DeletionPolicyDelete, keepFirst: true},
		{rule: "finalizer and no policy (the Cluster's applies): keep first",
			finalizers: []string{v1.RemoteCleanupFinalizer}, keepFirst: true},
		{rule: "finalizer and policy keep: deleted directly", finalizers: []string{v1.RemoteCleanupFinalizer},
			policy: v1.DeletionPolicyKeep},
		{rule: "no finalizer, policy delete: deleted directly", policy: v1.DeletionPolicyDelete},
		{rule: "no finalizer, no policy: deleted directly"},
		{rule: "another finalizer only: deleted directly", finalizers: []string{"example.com/other"},
			policy: v1.DeletionPolicyDelete},
	}
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			failed := func(name string) v1.Backup { return testChild(name, v1.BackupPhaseFailed) }
			oldest := failed("nightly-20260501010000")
			oldest.Finalizers, oldest.Spec.DeletionPolicy = c.finalizers, c.policy
			sb := testSchedule()
			scheduledAt(hour(4))(sb)
			d := Decide(Observation{Now: hour(4).Add(time.Minute), Schedule: sb, Fresh: true,
				Children: []v1.Backup{oldest, failed("nightly-20260501020000"), failed("nightly-20260501030000"),
					failed("nightly-20260501040000")},
				Cluster: &v1.Cluster{}})
			if len(d.Prune) != 1 || d.Prune[0].Backup.Name != oldest.Name {
				t.Fatalf("pruned %+v, want only %s", d.Prune, oldest.Name)
			}
			if d.Prune[0].KeepFirst != c.keepFirst {
				t.Fatalf("keepFirst %v, want %v", d.Prune[0].KeepFirst, c.keepFirst)
			}
			if len(d.PruneEvents) != 1 || d.PruneEvents[0].Kind.Reason != "BackupsPruned" {
				t.Fatalf("prune events %+v", d.PruneEvents)
			}
		})
	}
}

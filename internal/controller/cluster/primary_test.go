package cluster

import (
	"testing"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
)

func TestDecideLostTargetPrimary(t *testing.T) {
	primaryReport := &instanceclient.Status{Role: v1.RolePrimary}
	lost := func() *world {
		return newWorld(3).instance(1, true).instance(2, true).status(func(s *v1.ClusterStatus) { s.LatestGeneratedNode = 2 })
	}
	for _, tc := range []struct {
		rule       string
		world      *world
		wantTarget string
	}{
		{"recovered from currentPrimary", lost().primary("db-2", ""), "db-2"},
		{"recovered from the one instance reporting itself primary",
			lost().reports(map[string]*instanceclient.Status{"db-2": primaryReport, "db-1": {Role: v1.RoleReplica}}, nil), "db-2"},
		{"never guessed when no instance reports itself primary", lost(), ""},
		{"never guessed when two instances report themselves primary",
			lost().reports(map[string]*instanceclient.Status{"db-1": primaryReport, "db-2": primaryReport}, nil), ""},
	} {
		d := tc.world.decide()
		if d.Status.TargetPrimary != tc.wantTarget {
			t.Errorf("%s: targetPrimary %q, want %q", tc.rule, d.Status.TargetPrimary, tc.wantTarget)
		}
		if tc.wantTarget == "" && (len(d.CreatePods) != 0 || condition(d, v1.ConditionDegraded).Reason != reasonPrimaryUnknown) {
			t.Errorf("%s: without a target nothing is added and the Cluster is degraded: %v %+v", tc.rule,
				createdPodNames(d), condition(d, v1.ConditionDegraded))
		}
	}
}

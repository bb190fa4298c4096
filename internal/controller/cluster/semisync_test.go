package cluster

import (
	"slices"
	"testing"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
)

func TestDecideSemiSync(t *testing.T) {
	cluster := func(durability v1.DataDurability, min int32, enabled bool) *v1.Cluster {
		c := &v1.Cluster{}
		c.Spec.Instances, c.Spec.MinSyncReplicas, c.Spec.MaxSyncReplicas = 3, min, min
		c.Spec.MySQL.SemiSync = &v1.SemiSyncConfiguration{Enabled: enabled, TimeoutMillis: 1000, DataDurability: durability}
		c.Status.CurrentPrimary = "db-1"
		return c
	}
	primary := func(count int32) *instanceclient.Status {
		return &instanceclient.Status{Role: v1.RolePrimary, SemiSync: &instanceclient.SemiSyncStatus{Active: true, WaitForReplicaCount: count}}
	}
	replica := func(io, sql bool, lastErr string) *instanceclient.Status {
		return &instanceclient.Status{Role: v1.RoleReplica, Replication: &instanceclient.ReplicationStatus{IORunning: io, SQLRunning: sql, LastError: lastErr}}
	}
	names := []string{"db-1", "db-2", "db-3"}
	cases := []struct {
		name    string
		cluster *v1.Cluster
		reports map[string]*instanceclient.Status
		want    int32 // 0: no adjustment
	}{
		{"preferred with both replicas healthy keeps minSyncReplicas", cluster(v1.DataDurabilityPreferred, 2, true),
			map[string]*instanceclient.Status{"db-1": primary(2), "db-2": replica(true, true, ""), "db-3": replica(true, true, "")}, 0},
		{"preferred lowers the count to the healthy replicas", cluster(v1.DataDurabilityPreferred, 2, true),
			map[string]*instanceclient.Status{"db-1": primary(2), "db-2": replica(true, true, ""), "db-3": replica(false, true, "")}, 1},
		{"preferred never goes below one", cluster(v1.DataDurabilityPreferred, 2, true),
			map[string]*instanceclient.Status{"db-1": primary(2)}, 1},
		{"preferred raises the count back as replicas recover", cluster(v1.DataDurabilityPreferred, 2, true),
			map[string]*instanceclient.Status{"db-1": primary(1), "db-2": replica(true, true, ""), "db-3": replica(true, true, "")}, 2},
		{"an applier error makes a replica unhealthy", cluster(v1.DataDurabilityPreferred, 2, true),
			map[string]*instanceclient.Status{"db-1": primary(2), "db-2": replica(true, true, "1062"), "db-3": replica(true, true, "")}, 1},
		{"required pins minSyncReplicas whatever the health", cluster(v1.DataDurabilityRequired, 2, true),
			map[string]*instanceclient.Status{"db-1": primary(2), "db-2": replica(false, false, "")}, 0},
		{"required restores minSyncReplicas after a preferred period", cluster(v1.DataDurabilityRequired, 2, true),
			map[string]*instanceclient.Status{"db-1": primary(1)}, 2},
		{"semi-sync disabled changes nothing", cluster(v1.DataDurabilityPreferred, 2, false),
			map[string]*instanceclient.Status{"db-1": primary(2)}, 0},
		{"a primary that did not report is left alone", cluster(v1.DataDurabilityPreferred, 2, true),
			map[string]*instanceclient.Status{"db-2": replica(true, true, "")}, 0},
		{"an instance reporting itself replica is not adjusted", cluster(v1.DataDurabilityPreferred, 2, true),
			map[string]*instanceclient.Status{"db-1": replica(true, true, "")}, 0},
	}
	for _, c := range cases {
		got, _ := decideSemiSync(c.cluster, names, c.reports, "")
		switch {
		case c.want == 0 && got != nil:
			t.Errorf("%s: adjustment %+v, want none", c.name, *got)
		case c.want != 0 && (got == nil || got.To != c.want || got.Primary != "db-1"):
			t.Errorf("%s: adjustment %+v, want the count set to %d on db-1", c.name, got, c.want)
		}
	}
	fenced := cluster(v1.DataDurabilityPreferred, 2, true)
	fenced.Status.FencedInstances = []string{"db-3"}
	got, _ := decideSemiSync(fenced, names, map[string]*instanceclient.Status{"db-1": primary(2), "db-2": replica(true, true, ""), "db-3": replica(true, true, "")}, "")
	if got == nil || got.To != 1 {
		t.Errorf("a fenced replica must not count as healthy: %+v", got)
	}
}

func TestDecideSemiSyncStep(t *testing.T) {
	// Both replicas are participants (maxSyncReplicas 2) and acknowledge: nobody is told.
	acking := &instanceclient.SemiSyncReplicaStatus{Enabled: true}
	semiSync := func(w *world) *world {
		c := w.o.Cluster
		c.Spec.MinSyncReplicas, c.Spec.MaxSyncReplicas = 2, 2
		c.Spec.MySQL.SemiSync = &v1.SemiSyncConfiguration{Enabled: true, TimeoutMillis: 1000, DataDurability: v1.DataDurabilityPreferred}
		w.o.SemiSyncSettable = true
		return w.reports(map[string]*instanceclient.Status{
			"db-1": {Role: v1.RolePrimary, SemiSync: &instanceclient.SemiSyncStatus{Active: true, WaitForReplicaCount: 2}},
			"db-2": {Role: v1.RoleReplica, Replication: &instanceclient.ReplicationStatus{IORunning: true, SQLRunning: true}, SemiSyncReplica: acking},
			"db-3": {Role: v1.RoleReplica, Replication: &instanceclient.ReplicationStatus{SQLRunning: true}, SemiSyncReplica: acking},
		}, nil)
	}
	three := func() *world {
		return semiSync(newWorld(3).instance(1, true).instance(2, true).instance(3, true).primary("db-1", "db-1"))
	}
	for _, tc := range []struct {
		rule  string
		world *world
		want  int32 // 0: no adjustment
	}{
		{"the count is set on the primary's Pod, with its Event", three(), 1},
		{"nothing when the operator cannot set the count",
			func() *world { w := three(); w.o.SemiSyncSettable = false; return w }(), 0},
		{"nothing while the primary has no Pod", three().withoutPod("db-1"), 0},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			d := tc.world.decide()
			events := namesOf(d.Events[stepSemiSync], func(e kit.Event) string { return e.Kind.Reason })
			if tc.want == 0 {
				if d.SemiSync != nil || len(events) != 0 {
					t.Fatalf("adjustment %+v, events %v; want none", d.SemiSync, events)
				}
				return
			}
			if d.SemiSync == nil || d.SemiSync.To != tc.want || d.SemiSync.Pod == nil || d.SemiSync.Pod.Name != "db-1" ||
				!slices.Equal(events, []string{"SemiSyncAdjusted"}) {
				t.Fatalf("adjustment %+v, events %v; want the count set to %d on db-1's Pod", d.SemiSync, events, tc.want)
			}
		})
	}
}

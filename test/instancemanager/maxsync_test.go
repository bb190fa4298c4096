package instancemanager

import (
	"slices"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/semisync"
)

// tellParticipants plays the operator's participant step: the replicas' reports from their
// control API, the plan, and each change told over POST /semisync/replica, those that start
// first. It returns what was told.
func (w *world) tellParticipants(t *testing.T, primary string) []semisync.ParticipantChange {
	t.Helper()
	c := w.cluster(t)
	var health []semisync.ReplicaHealth
	acking := map[string]bool{}
	for name, n := range w.nodes {
		if name == primary {
			continue
		}
		st, err := w.operator.Status(t.Context(), n.target())
		healthy := err == nil && st.Replication != nil && st.Replication.IORunning && st.Replication.SQLRunning && st.Replication.LastError == ""
		health = append(health, semisync.ReplicaHealth{Name: name, Healthy: healthy})
		if err == nil {
			acking[name] = st.SemiSyncReplica != nil && st.SemiSyncReplica.Enabled
		}
	}
	changes := semisync.ParticipantChanges(semisync.PlanFor(&c.Spec, health), acking)
	for _, ch := range changes {
		must(t, w.operator.SetSemiSyncReplica(t.Context(), w.nodes[ch.Instance].target(),
			instanceclient.SemiSyncReplicaRequest{Participant: ch.Participant}))
	}
	return changes
}

// testMaxSyncReplicas: with maxSyncReplicas 1, once told, exactly one of the two replicas
// acknowledges and the primary counts one semi-sync client, and it stays so across the managers'
// role passes; back to maxSyncReplicas 2, both acknowledge again.
func testMaxSyncReplicas(t *testing.T, w *world) {
	p := w.nodes["db-1"]
	w.updateSpec(t, func(s *v1alpha1.ClusterSpec) { s.MaxSyncReplicas = 1 })
	told := w.tellParticipants(t, "db-1")
	if want := []semisync.ParticipantChange{{Instance: "db-3", Participant: false}}; !slices.Equal(told, want) {
		t.Fatalf("told %+v, want %+v", told, want)
	}
	acking := func() []string {
		var out []string
		for _, r := range []string{"db-2", "db-3"} {
			if st := w.nodes[r].status(t); st != nil && st.SemiSync.ReplicaEnabled {
				out = append(out, r)
			}
		}
		return out
	}
	eventually(t, 10*time.Second, "one semi-sync client", func() bool {
		st := p.status(t)
		return st != nil && st.SemiSync.Clients == 1
	})
	time.Sleep(3 * time.Second) // several role passes: none may turn db-3 back into an acknowledger
	if got := acking(); !slices.Equal(got, []string{"db-2"}) {
		t.Errorf("replicas with rpl_semi_sync_replica_enabled ON: %v, want [db-2]", got)
	}
	if st := p.status(t); st == nil || st.SemiSync.Clients != 1 {
		t.Errorf("the primary's semi-sync status %+v, want one client", st)
	}
	before := p.status(t).SemiSync
	p.exec(t, "INSERT INTO app.t VALUES (9)")
	if after := p.status(t).SemiSync; after.YesTx != before.YesTx+1 {
		t.Errorf("the commit was not acknowledged: yes_tx %d -> %d", before.YesTx, after.YesTx)
	}
	if again := w.tellParticipants(t, "db-1"); len(again) != 0 {
		t.Errorf("converged, yet told %+v", again)
	}
	t.Logf("maxSyncReplicas 1: acknowledging %v, the primary counts %d semi-sync client", acking(), p.status(t).SemiSync.Clients)

	w.updateSpec(t, func(s *v1alpha1.ClusterSpec) { s.MaxSyncReplicas = 2 })
	w.tellParticipants(t, "db-1")
	eventually(t, 10*time.Second, "two semi-sync clients", func() bool {
		st := p.status(t)
		return st != nil && st.SemiSync.Clients == 2
	})
}

package instance

import (
	"errors"
	"net/http"
	"slices"
	"testing"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/certs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/semisync"
)

// testSemiSyncMaxSyncReplicas: with two replicas and maxSyncReplicas 1, replicas not told yet
// both acknowledge (the safe default); once the operator's decision (semisync.PlanFor and
// ParticipantChanges over the control API's reports) is told over POST /semisync/replica, exactly
// one replica has rpl_semi_sync_replica_enabled ON, the primary counts one semi-sync client,
// commits are acknowledged, and the role pass keeps it so. The replica is told back at the end.
func testSemiSyncMaxSyncReplicas(t *testing.T, m map[string]*member, primary string, replicas []string) {
	spec := &v1alpha1.ClusterSpec{Instances: 3, MinSyncReplicas: 1, MaxSyncReplicas: 1,
		MySQL: v1alpha1.MySQLConfiguration{SemiSync: &v1alpha1.SemiSyncConfiguration{
			Enabled: true, TimeoutMillis: planTimeout.Milliseconds(), DataDurability: v1alpha1.DataDurabilityRequired}}}
	p := m[primary]
	told := map[string]*SemiSyncParticipation{}
	apis := map[string]controlAPIFixture{}
	for _, r := range replicas {
		told[r] = &SemiSyncParticipation{}
		apis[r] = serveControlAPI(t, &ControlAPI{Instance: r, Op: m[r].op, AllowedClients: []string{certs.OperatorCommonName},
			Participation: told[r]})
	}
	rolePass := func() {
		t.Helper()
		_, err := ConvergeSemiSync(t.Context(), p.op, spec, true, semiSync(t, p), false, semisync.NotTold)
		must(t, err)
		for _, r := range replicas {
			must(t, told[r].Converge(func(w semisync.Participation) error {
				_, err := ConvergeSemiSync(t.Context(), m[r].op, spec, false, semiSync(t, m[r]), false, w)
				return err
			}))
		}
	}
	// operatorDecides is the operator's decision over the replicas' reports.
	operatorDecides := func() []semisync.ParticipantChange {
		t.Helper()
		var health []semisync.ReplicaHealth
		acking := map[string]bool{}
		for _, r := range replicas {
			st, err := apis[r].operator.Status(t.Context(), apis[r].target)
			must(t, err)
			rep := st.Replication
			health = append(health, semisync.ReplicaHealth{Name: r, Healthy: rep != nil && rep.IORunning && rep.SQLRunning && rep.LastError == ""})
			acking[r] = st.SemiSyncReplica != nil && st.SemiSyncReplica.Enabled
		}
		return semisync.ParticipantChanges(semisync.PlanFor(spec, health), acking)
	}
	countBefore := semiSync(t, p).WaitForReplicaCount

	rolePass()
	must(t, p.op.SetSemiSyncWaitForReplicaCount(t.Context(), 1)) // the operator's count: minSyncReplicas
	waitSemiSync(t, p, func(s mysql.SemiSyncStatus) bool { return s.SourceActive && s.Clients == 2 })
	t.Logf("not told yet: both replicas acknowledge, the primary counts %d semi-sync clients", semiSync(t, p).Clients)

	changes := operatorDecides()
	want := []semisync.ParticipantChange{{Instance: replicas[1], Participant: false}}
	if !slices.Equal(changes, want) {
		t.Fatalf("the operator tells %+v, want %+v", changes, want)
	}
	for _, ch := range changes {
		must(t, apis[ch.Instance].operator.SetSemiSyncReplica(t.Context(), apis[ch.Instance].target,
			instanceclient.SemiSyncReplicaRequest{Participant: ch.Participant}))
	}
	rolePass() // the role pass must not turn the non-participant back into an acknowledger
	waitSemiSync(t, p, func(s mysql.SemiSyncStatus) bool { return s.SourceActive && s.Clients == 1 })
	var acking []string
	for _, r := range replicas {
		if semiSync(t, m[r]).ReplicaEnabled {
			acking = append(acking, r)
		}
	}
	if !slices.Equal(acking, replicas[:1]) {
		t.Errorf("replicas with rpl_semi_sync_replica_enabled ON: %v, want %v", acking, replicas[:1])
	}
	if s := semiSync(t, p); s.Clients != 1 {
		t.Errorf("the primary counts %d semi-sync clients, want 1", s.Clients)
	}
	expectCommit(t, p, true, false)
	if changes := operatorDecides(); len(changes) != 0 {
		t.Errorf("converged, yet the operator would tell %+v", changes)
	}
	t.Logf("maxSyncReplicas 1: acknowledging %v, the primary counts %d semi-sync client", acking, semiSync(t, p).Clients)

	// Back to both acknowledging, as the steps after this one expect.
	must(t, apis[replicas[1]].operator.SetSemiSyncReplica(t.Context(), apis[replicas[1]].target,
		instanceclient.SemiSyncReplicaRequest{Participant: true}))
	must(t, p.op.SetSemiSyncWaitForReplicaCount(t.Context(), max(countBefore, 1)))
	waitSemiSync(t, p, func(s mysql.SemiSyncStatus) bool { return s.SourceActive && s.Clients == 2 })
}

// TestControlAPISemiSyncReplicaRefusals: the primary is never told to acknowledge, and an
// instance manager without participation refuses; neither records anything.
func TestControlAPISemiSyncReplicaRefusals(t *testing.T) {
	for _, tc := range []struct {
		rule          string
		status        mysql.Status
		participation *SemiSyncParticipation
		req           instanceclient.SemiSyncReplicaRequest
		code          int
	}{
		{"the primary does not acknowledge", mysql.Status{}, &SemiSyncParticipation{},
			instanceclient.SemiSyncReplicaRequest{Participant: true}, http.StatusConflict},
		{"an instance manager that does not manage semi-sync refuses", mysql.Status{ReadOnly: true, SuperReadOnly: true}, nil,
			instanceclient.SemiSyncReplicaRequest{Participant: false}, http.StatusConflict},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			f := serveControlAPI(t, &ControlAPI{Instance: "c-1", Op: &fakeOp{status: tc.status},
				AllowedClients: []string{certs.OperatorCommonName}, Participation: tc.participation})
			err := f.operator.SetSemiSyncReplica(t.Context(), f.target, tc.req)
			var httpErr *instanceclient.HTTPError
			if !errors.As(err, &httpErr) || httpErr.StatusCode != tc.code {
				t.Fatalf("got %v, want HTTP %d", err, tc.code)
			}
			if got := tc.participation.Told(); got != semisync.NotTold {
				t.Errorf("a refused request was recorded: %v", got)
			}
		})
	}
}

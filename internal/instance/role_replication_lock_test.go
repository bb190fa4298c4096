package instance

import (
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/semisync"
)

// TestRolePassChangesReplicationUnderTheParticipationLock: a role pass changes a server's
// replication only while no other change runs through the control API (the operator telling it
// whether to acknowledge, which restarts the receiver; a failover stopping it), which hold the
// same lock. Concurrent replication statements from two sessions left mysqld's relay log index
// naming "." and the channel unable to start again. Real API server, real mysqld.
func TestRolePassChangesReplicationUnderTheParticipationLock(t *testing.T) {
	env, m, cluster := startRoleWorld(t, func(*v1alpha1.ClusterSpec) {})
	ns := types.NamespacedName{Namespace: cluster.Namespace, Name: "db"}
	reconciler := func(name string, p *SemiSyncParticipation) *RoleReconciler {
		return &RoleReconciler{Client: env.Client, Cluster: ns, Instance: name, Actor: m[name].actor, Peers: memberPeers(m),
			Clock: clock.RealClock{}, Log: testr.New(t).WithValues("instance", name), Participation: p}
	}
	_, err := reconciler("c-1", &SemiSyncParticipation{}).ReconcileOnce(t.Context())
	must(t, err)
	waitPrimary(t, env, cluster, m, "c-1")
	must(t, m["c-1"].op.CreateUsers(t.Context(), roleTestUsers))

	p := &SemiSyncParticipation{}
	held, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		_ = p.Converge(func(semisync.Participation) error { close(held); <-release; return nil })
	})
	<-held
	done := make(chan error, 1)
	go func() { _, err := reconciler("c-2", p).ReconcileOnce(t.Context()); done <- err }()
	select {
	case err := <-done:
		t.Fatalf("the pass ended while the lock was held (error %v)", err)
	case <-time.After(2 * time.Second):
	}
	st, err := m["c-2"].op.Status(t.Context())
	must(t, err)
	if st.Replication != nil {
		t.Errorf("c-2's replication changed while the lock was held: %+v", st.Replication)
	}
	close(release)
	wg.Wait()
	must(t, <-done)
	waitFollowing(t, m, "c-1", "c-2")
}

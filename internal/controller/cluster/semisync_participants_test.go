package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/semisync"
)

// TestDecideSemiSyncParticipants: one row per rule of who is told to acknowledge, with
// maxSyncReplicas 1 over two replicas unless the row says otherwise.
func TestDecideSemiSyncParticipants(t *testing.T) {
	cluster := func(maxSync int32) *v1.Cluster {
		c := &v1.Cluster{}
		c.Spec.Instances, c.Spec.MinSyncReplicas, c.Spec.MaxSyncReplicas = 3, 1, maxSync
		c.Spec.MySQL.SemiSync = &v1.SemiSyncConfiguration{Enabled: true, TimeoutMillis: 1000, DataDurability: v1.DataDurabilityRequired}
		c.Status.CurrentPrimary = "db-1"
		return c
	}
	primary := &instanceclient.Status{Role: v1.RolePrimary, SemiSync: &instanceclient.SemiSyncStatus{Active: true, WaitForReplicaCount: 1}}
	replica := func(healthy, acking bool) *instanceclient.Status {
		st := &instanceclient.Status{Role: v1.RoleReplica, Replication: &instanceclient.ReplicationStatus{IORunning: healthy, SQLRunning: true}}
		if acking {
			st.SemiSyncReplica = &instanceclient.SemiSyncReplicaStatus{Enabled: true, Active: healthy}
		}
		return st
	}
	bootstrapping := replica(false, false)
	bootstrapping.Bootstrapping = true
	// from: a replica not healthy yet whose source is source (the failover stopped its receiver,
	// or it is still connecting to the new primary).
	from := func(source string, acking bool) *instanceclient.Status {
		st := replica(false, acking)
		st.Replication.SourceInstance = source
		return st
	}
	diverged := cluster(1)
	diverged.Status.DivergedInstances = []string{"db-2"}
	on := func(n string) semisync.ParticipantChange {
		return semisync.ParticipantChange{Instance: n, Participant: true}
	}
	off := func(n string) semisync.ParticipantChange {
		return semisync.ParticipantChange{Instance: n, Participant: false}
	}
	names := []string{"db-1", "db-2", "db-3"}
	for _, tc := range []struct {
		rule    string
		cluster *v1.Cluster
		reports map[string]*instanceclient.Status
		want    []semisync.ParticipantChange
	}{
		{"replicas not told yet both acknowledge: the one beyond maxSyncReplicas is told to stop", cluster(1),
			map[string]*instanceclient.Status{"db-1": primary, "db-2": replica(true, true), "db-3": replica(true, true)},
			[]semisync.ParticipantChange{off("db-3")}},
		{"an unhealthy participant is replaced by a healthy replica, told to start first", cluster(1),
			map[string]*instanceclient.Status{"db-1": primary, "db-2": replica(false, true), "db-3": replica(true, false)},
			[]semisync.ParticipantChange{on("db-3"), off("db-2")}},
		{"maxSyncReplicas at the number of replicas: every replica acknowledges", cluster(2),
			map[string]*instanceclient.Status{"db-1": primary, "db-2": replica(true, true), "db-3": replica(true, false)},
			[]semisync.ParticipantChange{on("db-3")}},
		{"converged: nobody is told", cluster(1),
			map[string]*instanceclient.Status{"db-1": primary, "db-2": replica(true, true), "db-3": replica(true, false)}, nil},
		{"a replica that did not answer is not told", cluster(1),
			map[string]*instanceclient.Status{"db-1": primary, "db-2": replica(true, true)}, nil},
		{"a bootstrapping replica is not told", cluster(1),
			map[string]*instanceclient.Status{"db-1": primary, "db-2": replica(true, true), "db-3": bootstrapping}, nil},
		{"after a failover the acknowledger is kept while the old primary does not answer", cluster(1),
			map[string]*instanceclient.Status{"db-1": primary, "db-3": from("db-2", true)}, nil},
		{"after a failover a replica that answers is chosen over the old primary that does not", cluster(1),
			map[string]*instanceclient.Status{"db-1": primary, "db-3": from("db-2", false)},
			[]semisync.ParticipantChange{on("db-3")}},
		{"a replica following the current primary is chosen over one that does not, whatever the names", cluster(1),
			map[string]*instanceclient.Status{"db-1": primary, "db-2": from("db-9", false), "db-3": from("db-1", false)},
			[]semisync.ParticipantChange{on("db-3")}},
		{"a diverged replica is not chosen though it answers", diverged,
			map[string]*instanceclient.Status{"db-1": primary, "db-2": from("db-1", false), "db-3": from("db-2", false)},
			[]semisync.ParticipantChange{on("db-3")}},
		{"a primary that did not report: nobody is told", cluster(1),
			map[string]*instanceclient.Status{"db-2": replica(true, true), "db-3": replica(true, true)}, nil},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			_, got := decideSemiSync(tc.cluster, names, tc.reports, "")
			if !slices.Equal(got, tc.want) {
				t.Errorf("told %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestSetSemiSyncOrder: the replicas that start acknowledging are told before the count is set,
// and those that stop after it; a failure stops the sequence.
func TestSetSemiSyncOrder(t *testing.T) {
	pod := func(n string) *corev1.Pod { return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: n}} }
	tells := []SemiSyncParticipantTell{
		{ParticipantChange: semisync.ParticipantChange{Instance: "db-3", Participant: true}, Pod: pod("db-3")},
		{ParticipantChange: semisync.ParticipantChange{Instance: "db-2", Participant: false}, Pod: pod("db-2")},
	}
	adj := &SemiSyncAdjustment{Primary: "db-1", From: 1, To: 2, Pod: pod("db-1")}
	f := &recordingSetter{}
	r := &Reconciler{Instances: f}
	c := &v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "db"}}
	if err := r.setSemiSync(t.Context(), c, adj, tells); err != nil {
		t.Fatal(err)
	}
	want := []string{"db-3 participant=true", "db-1=2", "db-2 participant=false"}
	if !slices.Equal(f.set, want) {
		t.Errorf("applied %v, want %v", f.set, want)
	}
	f = &recordingSetter{failCount: errors.New("control API unreachable")}
	r.Instances = f
	if err := r.setSemiSync(t.Context(), c, adj, tells); err == nil || !slices.Equal(f.set, want[:1]) {
		t.Errorf("a failed count must stop the sequence before any replica stops: %v, applied %v", err, f.set)
	}
}

// recordingSetter records the control API calls in order, failing the count with failCount.
type recordingSetter struct {
	set       []string
	failCount error
}

func (f *recordingSetter) InstanceStatuses(context.Context, *v1.Cluster, []corev1.Pod) (map[string]*instanceclient.Status, map[string]error) {
	return nil, nil
}

func (f *recordingSetter) SetSemiSync(_ context.Context, _ *v1.Cluster, pod corev1.Pod, req instanceclient.SemiSyncRequest) error {
	if f.failCount != nil {
		return f.failCount
	}
	f.set = append(f.set, fmt.Sprintf("%s=%d", pod.Name, req.WaitForReplicaCount))
	return nil
}

func (f *recordingSetter) SetSemiSyncReplica(_ context.Context, _ *v1.Cluster, pod corev1.Pod, req instanceclient.SemiSyncReplicaRequest) error {
	f.set = append(f.set, fmt.Sprintf("%s participant=%v", pod.Name, req.Participant))
	return nil
}

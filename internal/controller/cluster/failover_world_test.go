package cluster

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/failover"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// The failover tests' world: its builders and the instance reports they use.

const uuidA = "3e11fa47-71ca-11e1-9e33-c80aa9429562"

// fence sets the fencing annotation as the plugin does.
func (w *world) fence(value string) *world {
	w.o.Cluster.Annotations = map[string]string{v1.FencedInstancesAnnotation: value}
	return w
}

func (w *world) lease(holder string, renewed time.Time) *world {
	w.o.Lease = failover.Lease{Exists: true, Holder: holder, RenewTime: renewed, ObservedAt: renewed, TTL: failover.LeaseTTL}
	return w
}

// labelled labels the Pods as the status had them: primary the current primary, the others
// routable replicas.
func (w *world) labelled() *world {
	for i := range w.o.Pods {
		p := &w.o.Pods[i]
		role := v1.RoleReplica
		if p.Name == w.o.Cluster.Status.CurrentPrimary {
			role = v1.RolePrimary
		}
		p.Labels = specs.InstanceLabels("db", p.Name, role, true)
	}
	return w
}

// deleting marks the instance's Pod as being deleted.
func (w *world) deleting(name string) *world {
	for i := range w.o.Pods {
		if w.o.Pods[i].Name == name {
			w.o.Pods[i].DeletionTimestamp = &metav1.Time{Time: testNow.Add(-time.Second)}
		}
	}
	return w
}

// terminated marks the mysql container of the instance's Pod as terminated, as its kubelet
// reports it once the Pod's deletion stopped it.
func (w *world) terminated(name string) *world {
	for i := range w.o.Pods {
		if w.o.Pods[i].Name == name {
			w.o.Pods[i].Status.ContainerStatuses = []corev1.ContainerStatus{{Name: specs.MySQLContainerName,
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137}}}}
		}
	}
	return w
}

// withFallback: the primary Lease records that instance fell back at gtidExecuted, not resumed.
func (w *world) withFallback(instance, gtidExecuted string) *world {
	w.o.Lease.Fallback = &failover.FallbackRecord{Instance: instance, FellBackAt: testNow.Add(-time.Minute), GTIDExecuted: gtidExecuted}
	return w
}

func requiredSemiSync(s *v1.ClusterSpec) {
	s.MySQL.SemiSync = &v1.SemiSyncConfiguration{Enabled: true, DataDurability: v1.DataDurabilityRequired, TimeoutMillis: 10000}
}

// acceptLoss: a person accepted the loss of what former acknowledged alone, naming instance.
func acceptLoss(former, instance string) func(*v1.ClusterStatus) {
	return func(s *v1.ClusterStatus) {
		s.DataLossAccepted = &v1.DataLossAcceptance{FormerPrimary: former, Instance: instance, AcceptedAt: metav1.NewTime(testNow.Add(-time.Second))}
		if s.PrimaryFailingSince != nil {
			s.DataLossAccepted.FailingSince = *s.PrimaryFailingSince
		}
	}
}

func (w *world) failingSince(t time.Time) *world {
	w.o.Cluster.Status.PrimaryFailingSince = &metav1.Time{Time: t}
	return w
}

func primaryReport(gtids string) *instanceclient.Status {
	return &instanceclient.Status{Role: v1.RolePrimary, GTIDExecuted: gtids}
}

func replicaReport(source, executed, retrieved string, ioRunning bool) *instanceclient.Status {
	return &instanceclient.Status{Role: v1.RoleReplica, ReadOnly: true, SuperReadOnly: true, GTIDExecuted: executed,
		Replication: &instanceclient.ReplicationStatus{SourceInstance: source, IORunning: ioRunning, SQLRunning: true, GTIDRetrieved: retrieved}}
}

// threeFailing is db-1 primary, its Pod gone, and two healthy replicas, db-3 more advanced.
func threeFailing() *world {
	return newWorld(3).instance(1, true).instance(2, true).instance(3, true).primary("db-1", "db-1").labelled().
		withoutPod("db-1").reports(map[string]*instanceclient.Status{
		"db-2": replicaReport("db-1", uuidA+":1-8", uuidA+":1-8", false),
		"db-3": replicaReport("db-1", uuidA+":1-10", uuidA+":1-10", false),
	}, nil)
}

func (w *world) spec(f func(*v1.ClusterSpec)) *world {
	f(&w.o.Cluster.Spec)
	return w
}

// namingTargetWhileDeleting: db-1, the primary, has been failing for a minute, its manager does
// not answer and its Pod is being deleted; db-3 is the most advanced replica, so the failover
// names it.
func namingTargetWhileDeleting() *world {
	return newWorld(3).instance(1, true).instance(2, true).instance(3, true).primary("db-1", "db-1").labelled().deleting("db-1").
		failingSince(testNow.Add(-time.Minute)).reports(map[string]*instanceclient.Status{
		"db-2": replicaReport("db-1", uuidA+":1-8", uuidA+":1-8", false),
		"db-3": replicaReport("db-1", uuidA+":1-10", uuidA+":1-10", false),
	}, map[string]string{"db-1": "timeout"})
}

// wantTargetNamed fails t unless d names target as the failover's new primary.
func wantTargetNamed(t *testing.T, d Decision, target string) {
	t.Helper()
	if d.Failover.Decision.Step != failover.StepSetTargetPrimary || d.Status.TargetPrimary != target {
		t.Fatalf("decision %+v, target %q; want %s named", d.Failover.Decision, d.Status.TargetPrimary, target)
	}
}

package cluster

import (
	"slices"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
)

// The primary Lease as observed, the diverged Event and a failing primary's status: what the
// failover leaves in the status and Events while it waits.

func TestObserveLease(t *testing.T) {
	now := metav1.NewMicroTime(testNow)
	l := &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("db-1"), LeaseDurationSeconds: ptr.To[int32](15), RenewTime: &now}}
	got := observeLease(l)
	if !got.Exists || got.Holder != "db-1" || got.HolderPodUID != "" || got.TTL != 15*time.Second || !got.RenewTime.Equal(testNow) {
		t.Errorf("observed %+v (a Lease of an older instance manager names the instance alone)", got)
	}
	l.Spec.HolderIdentity = ptr.To("db-1/0c6f9a52-uid")
	if got := observeLease(l); got.Holder != "db-1" || got.HolderPodUID != "0c6f9a52-uid" {
		t.Errorf("observed holder %q, Pod %q; want db-1 and its Pod's UID", got.Holder, got.HolderPodUID)
	}
}

func TestDivergedEventOnce(t *testing.T) {
	w := newWorld(3).instance(1, true).instance(2, true).instance(3, true).primary("db-2", "db-2").labelled().
		status(func(s *v1.ClusterStatus) { s.DivergedInstances = []string{"db-1"} }).
		reports(map[string]*instanceclient.Status{"db-2": primaryReport(uuidA + ":1-10")}, nil)
	first := w.decide()
	w.o.Cluster.Status = first.Status
	if again := w.decide(); slices.Contains(eventReasons(again), "InstanceDiverged") {
		t.Errorf("InstanceDiverged repeated once the Degraded condition reports db-1: %v", eventReasons(again))
	}
	w.o.Cluster.Status.DivergedInstances = []string{"db-1", "db-3"}
	if next := w.decide(); !slices.Contains(eventReasons(next), "InstanceDiverged") {
		t.Errorf("no InstanceDiverged for the newly diverged db-3: %v", eventReasons(next))
	}
}

func TestFailingPrimaryStatusIsStable(t *testing.T) {
	w := newWorld(2).instance(1, false).instance(2, true).primary("db-1", "db-1").labelled().
		failingSince(testNow.Add(-time.Second)).spec(func(s *v1.ClusterSpec) { s.FailoverDelay = 300 }).
		reports(map[string]*instanceclient.Status{"db-1": primaryReport(uuidA + ":1-3"),
			"db-2": replicaReport("db-1", uuidA+":1-3", uuidA+":1-3", true)}, nil)
	first := w.decide()
	w.o.Cluster.Status = first.Status
	w.o.Now = w.o.Now.Add(2 * time.Second)
	if second := w.decide(); statusChanged(first.Status, second.Status) {
		t.Errorf("waiting out failoverDelay rewrites the status:\n%+v\n%+v", first.Status.Conditions, second.Status.Conditions)
	}
}

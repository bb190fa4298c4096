package clustercontroller

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

// TestPodMonitorWithoutTheCRD: this API server has no PodMonitor kind. A Cluster asking for a
// PodMonitor is reconciled by the operator's manager (its cache, its client) as any other: it
// becomes Ready, and its PodMonitorReady condition and a single Warning Event, however many
// reconciles follow, say that the kind is not installed.
func TestPodMonitorWithoutTheCRD(t *testing.T) {
	c := newCluster(t, 1, func(c *v1.Cluster) {
		c.Spec.Monitoring = &v1.MonitoringConfiguration{PodMonitor: &v1.PodMonitorConfiguration{Enabled: true}}
	})
	check.Eventually(t, waitTimeout, "targetPrimary is the first instance", func(context.Context) (bool, error) {
		return getCluster(t, c).Status.TargetPrimary == "db-1", nil
	})
	setPrimary(t, c, "db-1")
	waitInstances(t, c, "db-1")
	check.Eventually(t, waitTimeout, "the Cluster is Ready", func(context.Context) (bool, error) {
		return meta.IsStatusConditionTrue(getCluster(t, c).Status.Conditions, v1.ConditionReady), nil
	})
	cond := meta.FindStatusCondition(getCluster(t, c).Status.Conditions, v1.ConditionPodMonitorReady)
	if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != "PodMonitorUnavailable" || !strings.Contains(cond.Message, "is not installed") {
		t.Fatalf("condition %+v, want False PodMonitorUnavailable saying the kind is not installed", cond)
	}
	assertEvents(t, c.Namespace, "PodMonitorUnavailable")
	// Reconciles go on every 500 ms: the Warning is still a single one.
	time.Sleep(3 * time.Second)
	var evs corev1.EventList
	check.Must(t, kc.List(context.Background(), &evs, client.InNamespace(c.Namespace)))
	var count int32
	for _, e := range evs.Items {
		if e.Reason == "PodMonitorUnavailable" && e.InvolvedObject.Kind == "Cluster" {
			count += e.Count
		}
	}
	if count != 1 {
		t.Errorf("%d PodMonitorUnavailable Events, want 1", count)
	}
}

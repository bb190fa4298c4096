package cluster_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/cluster"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/ctrlworld"
)

// podMonitorCRD is prometheus-operator's own PodMonitor CRD (see the comment at its top).
const podMonitorCRD = "testdata/monitoring.coreos.com_podmonitors.yaml"

// TestPodMonitorLifecycle runs the Cluster controller against the real API server, first
// without the PodMonitor CRD, then with prometheus-operator's: without it the reconcile succeeds,
// the instance, its Secrets and the status are written, and the PodMonitorReady condition and one
// Warning Event say why there is no PodMonitor; once the CRD is installed the PodMonitor is
// created, passing the CRD's schema, and follows the spec until it is turned off.
func TestPodMonitorLifecycle(t *testing.T) {
	w := newClusterWorld(t, func(c *v1.Cluster) {
		c.Spec.Monitoring = &v1.MonitoringConfiguration{PodMonitor: &v1.PodMonitorConfiguration{Enabled: true,
			Labels: map[string]v1.PodMonitorLabelValue{"release": "prometheus"}}}
	})
	w.rec.RESTMapper = w.Client.RESTMapper()
	ensurePodMonitorCRDAbsent(w)

	w.reconcileOK()
	c := ctrlworld.Get[v1.Cluster](w.World, "db")
	cond := meta.FindStatusCondition(c.Status.Conditions, v1.ConditionPodMonitorReady)
	if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != "PodMonitorUnavailable" || !strings.Contains(cond.Message, "is not installed") {
		t.Fatalf("without the CRD: condition %+v, want False PodMonitorUnavailable saying the kind is not installed", cond)
	}
	if got := podMonitorEvents(w.Events(), "Warning PodMonitorUnavailable"); got != 1 {
		t.Errorf("without the CRD: %d PodMonitorUnavailable Events, want 1", got)
	}
	// Nothing else waits for the PodMonitor: the instance, the metrics Secret and the status exist.
	ctrlworld.Get[corev1.Pod](w.World, "db-1")
	w.secret(specs.MetricsSecretName("db"))
	if c.Status.TargetPrimary != "db-1" || c.Status.LatestGeneratedNode != 1 {
		t.Errorf("without the CRD: status targetPrimary %q latestGeneratedNode %d, want db-1 and 1", c.Status.TargetPrimary, c.Status.LatestGeneratedNode)
	}
	w.reconcileOK()
	if got := podMonitorEvents(w.Events(), "Warning PodMonitorUnavailable"); got != 0 {
		t.Errorf("second reconcile without the CRD: %d PodMonitorUnavailable Events, want none (once per transition)", got)
	}

	installPodMonitorCRD(w)
	w.Eventually("the PodMonitor is created once the CRD is installed", func(ctx context.Context) (bool, error) {
		w.Clock.Step(cluster.PodMonitorRecheckInterval)
		if err := w.reconcile(); err != nil {
			return false, err
		}
		return w.Exists("db", &monitoringv1.PodMonitor{})(ctx)
	})
	c = ctrlworld.Get[v1.Cluster](w.World, "db")
	pm := ctrlworld.Get[monitoringv1.PodMonitor](w.World, "db")
	checkPodMonitor(t, c, pm)
	w.reconcileOK()
	c = ctrlworld.Get[v1.Cluster](w.World, "db")
	if cond := meta.FindStatusCondition(c.Status.Conditions, v1.ConditionPodMonitorReady); cond == nil || cond.Status != metav1.ConditionTrue {
		t.Errorf("with the PodMonitor: condition %+v, want True", cond)
	}
	if again := ctrlworld.Get[monitoringv1.PodMonitor](w.World, "db"); again.ResourceVersion != pm.ResourceVersion {
		t.Errorf("a reconcile with nothing changed wrote the PodMonitor (resourceVersion %s -> %s)", pm.ResourceVersion, again.ResourceVersion)
	}
	if got := podMonitorEvents(w.Events(), "Normal PodMonitorCreated"); got != 1 {
		t.Errorf("%d PodMonitorCreated Events, want 1", got)
	}

	c.Spec.Monitoring.PodMonitor.Labels = map[string]v1.PodMonitorLabelValue{"release": "other", "team": "db"}
	c.Spec.Monitoring.PodMonitor.Interval = "1m"
	check.Must(t, w.Client.Update(w.Ctx, c))
	w.reconcileOK()
	pm = ctrlworld.Get[monitoringv1.PodMonitor](w.World, "db")
	checkPodMonitor(t, ctrlworld.Get[v1.Cluster](w.World, "db"), pm)
	if pm.Labels["release"] != "other" || pm.Labels["team"] != "db" || pm.Spec.PodMetricsEndpoints[0].Interval != "1m" {
		t.Errorf("labels changed: PodMonitor labels %v interval %s, want release=other, team=db, 1m", pm.Labels, pm.Spec.PodMetricsEndpoints[0].Interval)
	}

	c = ctrlworld.Get[v1.Cluster](w.World, "db")
	c.Spec.Monitoring.PodMonitor.Enabled = false
	check.Must(t, w.Client.Update(w.Ctx, c))
	w.reconcileOK()
	if err := w.Client.Get(w.Ctx, w.Key("db"), &monitoringv1.PodMonitor{}); !apierrors.IsNotFound(err) {
		t.Errorf("disabled: reading the PodMonitor gave %v, want it deleted", err)
	}
	c = ctrlworld.Get[v1.Cluster](w.World, "db")
	if cond := meta.FindStatusCondition(c.Status.Conditions, v1.ConditionPodMonitorReady); cond == nil || cond.Reason != "PodMonitorDeleting" {
		t.Errorf("disabled: condition %+v, want PodMonitorDeleting until the deletion is seen", cond)
	}
	w.reconcileOK()
	c = ctrlworld.Get[v1.Cluster](w.World, "db")
	if cond := meta.FindStatusCondition(c.Status.Conditions, v1.ConditionPodMonitorReady); cond != nil {
		t.Errorf("disabled, the deletion seen: condition %+v, want none", *cond)
	}
	if got := podMonitorEvents(w.Events(), "Normal PodMonitorDeleted"); got != 1 {
		t.Errorf("%d PodMonitorDeleted Events, want 1", got)
	}

	// A PodMonitor of that name the Cluster does not control is never touched.
	theirs := specs.BuildPodMonitor(c)
	theirs.OwnerReferences, theirs.Labels = nil, map[string]string{"owner": "someone"}
	w.Create(theirs)
	c.Spec.Monitoring.PodMonitor.Enabled = true
	check.Must(t, w.Client.Update(w.Ctx, c))
	w.reconcileOK()
	c = ctrlworld.Get[v1.Cluster](w.World, "db")
	if cond := meta.FindStatusCondition(c.Status.Conditions, v1.ConditionPodMonitorReady); cond == nil || cond.Reason != "PodMonitorNotOwned" {
		t.Errorf("someone else's PodMonitor: condition %+v, want PodMonitorNotOwned", cond)
	}
	c.Spec.Monitoring.PodMonitor.Enabled = false
	check.Must(t, w.Client.Update(w.Ctx, c))
	w.reconcileOK()
	if got := ctrlworld.Get[monitoringv1.PodMonitor](w.World, "db"); got.ResourceVersion != theirs.ResourceVersion || got.Labels["owner"] != "someone" {
		t.Errorf("someone else's PodMonitor was written: %+v", got.ObjectMeta)
	}
}

// checkPodMonitor fails t unless pm is exactly the PodMonitor the operator builds for c, owned by c.
func checkPodMonitor(t *testing.T, c *v1.Cluster, pm *monitoringv1.PodMonitor) {
	t.Helper()
	want := specs.BuildPodMonitor(c)
	if !equality.Semantic.DeepEqual(pm.Spec, want.Spec) || !equality.Semantic.DeepEqual(pm.Labels, want.Labels) {
		got, _ := yaml.Marshal(pm)
		t.Errorf("PodMonitor read back:\n%s\nwant labels %v and the spec of specs.BuildPodMonitor", got, want.Labels)
	}
	if !metav1.IsControlledBy(pm, c) {
		t.Errorf("PodMonitor owners %+v, want the Cluster %s", pm.OwnerReferences, c.UID)
	}
}

func podMonitorEvents(events []string, prefix string) int {
	return len(slices.DeleteFunc(events, func(e string) bool { return !strings.HasPrefix(e, prefix) }))
}

func podMonitorCRDObject() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "podmonitors.monitoring.coreos.com"}}
}

// ensurePodMonitorCRDAbsent deletes the PodMonitor CRD when an earlier run in this process
// installed it, and waits until the API server no longer serves the kind.
func ensurePodMonitorCRDAbsent(w *clusterWorld) {
	w.T.Helper()
	crd := podMonitorCRDObject()
	c, err := client.New(w.Env.Config, client.Options{})
	check.Must(w.T, err)
	check.Must(w.T, apiextensionsv1.AddToScheme(c.Scheme()))
	if err := c.Delete(w.Ctx, crd); client.IgnoreNotFound(err) != nil {
		w.T.Fatal(err)
	}
	w.Eventually("the PodMonitor CRD is gone", func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(crd), crd)
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}

// installPodMonitorCRD installs prometheus-operator's PodMonitor CRD and waits until it is served.
func installPodMonitorCRD(w *clusterWorld) {
	w.T.Helper()
	if _, err := envtest.InstallCRDs(w.Env.Config, envtest.CRDInstallOptions{Paths: []string{podMonitorCRD}, ErrorIfPathMissing: true}); err != nil {
		w.T.Fatalf("installing the PodMonitor CRD: %v", err)
	}
}

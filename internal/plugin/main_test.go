package plugin_test

import (
	"bytes"
	"context"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/plugin"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
)

// shared is the API server every test of the package uses, each in its own namespace.
var shared = kubetest.NewShared(kubetest.Options{})

func TestMain(m *testing.M) { shared.Main(m) }

// testNow is the plugin's clock in every test.
var testNow = time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)

// world is one namespace of the shared API server and a way to run the plugin against it.
type world struct {
	env        *kubetest.Env
	ns         string
	kubeconfig string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	env := shared.Get(t)
	return &world{env: env, ns: env.NewNamespace(t), kubeconfig: env.KubeconfigFile(t)}
}

// run executes `kubectl cloudnative-mysql args...` in the world's namespace and returns what it
// printed.
func (w *world) run(args ...string) (string, error) {
	out := &bytes.Buffer{}
	cmd := plugin.NewRootCommand(genericiooptions.IOStreams{Out: out, ErrOut: out}, clocktesting.NewFakePassiveClock(testNow))
	cmd.SetArgs(append([]string{"--kubeconfig", w.kubeconfig, "-n", w.ns}, args...))
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

// mustRun is run for a verb that must succeed.
func (w *world) mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, err := w.run(args...)
	if err != nil {
		t.Fatalf("%v: %v (%s)", args, err, out)
	}
	return out
}

// bareCluster is a Cluster called name the API server accepts, with no status.
func (w *world) bareCluster(name string, instances int32) *v1.Cluster {
	return &v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns},
		Spec: v1.ClusterSpec{Instances: instances, ImageName: "mysql:test", MaxSwitchoverDelay: 3600,
			Storage: v1.StorageConfiguration{Size: resource.MustParse("1Gi")}}}
}

// newCluster creates Cluster "db" with Pods db-1..db-n (db-1 the primary), then lets mutate change
// its annotations and status, as the operator and the instances would have written them.
func (w *world) newCluster(t *testing.T, n int, mutate func(*v1.Cluster)) *v1.Cluster {
	t.Helper()
	ctx := context.Background()
	c := w.bareCluster("db", int32(n))
	check.Must(t, w.env.Client.Create(ctx, c))
	for i := 1; i <= n; i++ {
		w.newPod(t, "db-"+strconv.Itoa(i), "db")
	}
	w.update(t, func(c *v1.Cluster) { c.Status.CurrentPrimary, c.Status.TargetPrimary = "db-1", "db-1" })
	if mutate != nil {
		w.update(t, mutate)
	}
	return w.get(t)
}

// newPod creates a Pod named name labelled for cluster (no kubelet runs it).
func (w *world) newPod(t *testing.T, name, cluster string) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns,
			Labels: map[string]string{v1.ClusterLabel: cluster, v1.InstanceLabel: name}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "mysqld", Image: "mysql:test"}}},
	}
	check.Must(t, w.env.Client.Create(context.Background(), pod))
}

// update changes the Cluster's metadata and spec, then its status, with f.
func (w *world) update(t *testing.T, f func(*v1.Cluster)) {
	t.Helper()
	ctx := context.Background()
	old := w.get(t)
	meta, status := old.DeepCopy(), old.DeepCopy()
	f(meta)
	f(status)
	check.Must(t, w.env.Client.Patch(ctx, meta, client.MergeFrom(old)))
	check.Must(t, w.env.Client.Status().Patch(ctx, status, client.MergeFrom(old)))
}

// get reads Cluster "db".
func (w *world) get(t *testing.T) *v1.Cluster {
	t.Helper()
	var c v1.Cluster
	check.Must(t, w.env.Client.Get(context.Background(), client.ObjectKey{Namespace: w.ns, Name: "db"}, &c))
	return &c
}

// racingClient returns a client whose first patch (of an object or of its status) is preceded by
// race, another writer's change, and counts the patches it sent and the conflicts they met.
func (w *world) racingClient(t *testing.T, race func()) (c client.Client, patches, conflicts *int) {
	t.Helper()
	base, err := client.NewWithWatch(w.env.Config, client.Options{Scheme: w.env.Scheme})
	check.Must(t, err)
	patches, conflicts = new(int), new(int)
	count := func(err error) error {
		if apierrors.IsConflict(err) {
			*conflicts++
		}
		return err
	}
	before := func() {
		if *patches++; *patches == 1 {
			race()
		}
	}
	c = interceptor.NewClient(base, interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			before()
			return count(c.Patch(ctx, obj, patch, opts...))
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			before()
			return count(c.SubResource(sub).Patch(ctx, obj, patch, opts...))
		},
	})
	return c, patches, conflicts
}

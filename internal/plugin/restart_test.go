package plugin_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// TestRestartAndReloadVerbs runs `restart` and `reload` against the real API server.
func TestRestartAndReloadVerbs(t *testing.T) {
	podExists := func(t *testing.T, w *world, name string) bool {
		var p corev1.Pod
		err := w.env.Client.Get(context.Background(), client.ObjectKey{Namespace: w.ns, Name: name}, &p)
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return err == nil
	}
	t.Run("restart CLUSTER stamps the Cluster, which changes every instance's Pod spec", func(t *testing.T) {
		w := newWorld(t)
		before := w.newCluster(t, 3, nil)
		out := w.mustRun(t, "restart", "db")
		after := w.get(t)
		at := after.Annotations[v1.RestartedAtAnnotation]
		if at != testNow.UTC().Format(time.RFC3339Nano) || !strings.Contains(out, "rolling restart of db requested") {
			t.Fatalf("annotation %q, output %q", at, out)
		}
		hash := func(c *v1.Cluster) string {
			return specs.BuildPod(c, 2, specs.PodOptions{OperatorImage: "op"}).Annotations[specs.PodSpecHashAnnotation]
		}
		if hash(before) == hash(after) {
			t.Errorf("the Pod spec hash did not change: no instance would restart")
		}
	})
	t.Run("restart CLUSTER REPLICA deletes that replica's Pod only", func(t *testing.T) {
		w := newWorld(t)
		w.newCluster(t, 3, nil)
		w.mustRun(t, "restart", "db", "db-2")
		if podExists(t, w, "db-2") || !podExists(t, w, "db-1") || !podExists(t, w, "db-3") {
			t.Errorf("db-2's Pod should be gone, the others kept")
		}
	})
	t.Run("restart CLUSTER PRIMARY is refused and deletes nothing", func(t *testing.T) {
		w := newWorld(t)
		w.newCluster(t, 3, nil)
		_, err := w.run("restart", "db", "db-1")
		if err == nil || !strings.Contains(err.Error(), "db-1 is the primary of db") || !podExists(t, w, "db-1") {
			t.Errorf("error %v; the primary's Pod must stay", err)
		}
	})
	t.Run("restart of a name that is no instance is refused", func(t *testing.T) {
		w := newWorld(t)
		w.newCluster(t, 3, nil)
		if _, err := w.run("restart", "db", "db-9"); err == nil || !strings.Contains(err.Error(), "not an instance") {
			t.Errorf("error %v", err)
		}
	})
	t.Run("reload CLUSTER stamps the Cluster for the instance managers", func(t *testing.T) {
		w := newWorld(t)
		w.newCluster(t, 3, nil)
		w.mustRun(t, "reload", "db")
		if at := w.get(t).Annotations[v1.ReloadedAtAnnotation]; at != testNow.UTC().Format(time.RFC3339Nano) {
			t.Errorf("annotation %q", at)
		}
	})
}

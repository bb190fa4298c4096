package backup_test

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

// laggingClient answers reads of Clusters and Backups from snapshots taken earlier, as a
// manager's cache does until the watch catches up; everything else goes to the API server.
type laggingClient struct {
	client.Client
	clusters *v1.ClusterList
	backups  map[string]*v1.Backup
}

func (c *laggingClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if l, ok := list.(*v1.ClusterList); ok && c.clusters != nil {
		c.clusters.DeepCopyInto(l)
		return nil
	}
	return c.Client.List(ctx, list, opts...)
}

func (c *laggingClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if b, ok := obj.(*v1.Backup); ok && c.backups[key.Name] != nil {
		c.backups[key.Name].DeepCopyInto(b)
		return nil
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// reconcileLagging reconciles a Backup once with a reconciler whose cache lags as lc says. An
// error (a write conflicting with the stale read) is only logged: what matters is the store.
func (w *bkWorld) reconcileLagging(name string, lc *laggingClient) {
	w.T.Helper()
	lc.Client = w.Client
	r := w.reconciler()
	r.Client = lc
	if _, err := r.Reconcile(w.Ctx, ctrl.Request{NamespacedName: w.Key(name)}); err != nil {
		w.T.Logf("reconciling %s: %v", name, err)
	}
}

// TestBackupCleanupDecidesOnFreshReads: the remote cleanup deletes a recovery point, so what
// allows it is read from the API server, not from a cache that may not show the latest writes
// yet; and a Cluster whose default turned to keep before its Backup was deleted keeps the data
// even if the Backup still carried the finalizer.
func TestBackupCleanupDecidesOnFreshReads(t *testing.T) {
	w := newBkWorld(t)
	t.Run("a recovering Cluster the cache does not show yet", func(t *testing.T) {
		w.T = t
		w.createPolicyBackup("fresh-rec", "db", v1.DeletionPolicyDelete)
		b := w.completeBackup("fresh-rec")
		var before v1.ClusterList
		check.Must(t, w.Client.List(w.Ctx, &before, client.InNamespace(w.NS)))
		w.Create(&v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "fresh-restored", Namespace: w.NS},
			Spec: v1.ClusterSpec{Instances: 1, ImageName: "mysql:test", MaxSwitchoverDelay: 3600,
				Storage:   v1.StorageConfiguration{Size: resource.MustParse("1Gi")},
				Bootstrap: &v1.BootstrapConfiguration{Recovery: &v1.BootstrapRecovery{Backup: &v1.LocalObjectReference{Name: "fresh-rec"}}}}})
		w.deleteBackup("fresh-rec")
		w.reconcileLagging("fresh-rec", &laggingClient{clusters: &before})
		if keys := w.remoteKeys(b); len(keys) < 2 {
			t.Fatalf("the cleanup deleted the backup a Cluster bootstraps from: %v left", keys)
		}
		if c := w.cleanupCondition("fresh-rec"); c == nil || c.Reason != v1.ReasonCleanupRefused {
			t.Errorf("RemoteCleanup %+v, want ReferencedByRecovery", c)
		}
	})
	t.Run("patched to keep after the deletion, the cache still showing delete", func(t *testing.T) {
		w.T = t
		w.createPolicyBackup("fresh-keep", "db", v1.DeletionPolicyDelete)
		b := w.completeBackup("fresh-keep")
		w.deleteBackup("fresh-keep")
		stale := w.backup("fresh-keep")
		cur := stale.DeepCopy()
		cur.Spec.DeletionPolicy = v1.DeletionPolicyKeep
		check.Must(t, w.Client.Patch(w.Ctx, cur, client.MergeFrom(stale)))
		w.reconcileLagging("fresh-keep", &laggingClient{backups: map[string]*v1.Backup{"fresh-keep": stale}})
		if keys := w.remoteKeys(b); len(keys) < 2 {
			t.Fatalf("a Backup patched to keep had its remote objects deleted: %v left", keys)
		}
	})
	t.Run("the Cluster's default turned to keep before the deletion", func(t *testing.T) {
		w.T = t
		w.createStoreCluster("turned", v1.DeletionPolicyDelete, false, "s3")
		w.createPolicyBackup("fresh-turned", "turned", "")
		w.reconcile("fresh-turned")
		if !w.hasFinalizer("fresh-turned") {
			t.Fatal("no finalizer under the Cluster's default delete")
		}
		b := w.completeBackup("fresh-turned")
		var c v1.Cluster
		check.Must(t, w.Client.Get(w.Ctx, client.ObjectKey{Namespace: w.NS, Name: "turned"}, &c))
		old := c.DeepCopy()
		c.Spec.Backup.DeletionPolicy = v1.DeletionPolicyKeep
		check.Must(t, w.Client.Patch(w.Ctx, &c, client.MergeFrom(old)))
		// Deleted before the Cluster watch removed the finalizer.
		w.deleteBackup("fresh-turned")
		w.reconcile("fresh-turned")
		w.Eventually("the Backup goes", func(context.Context) (bool, error) { return w.backupGone("fresh-turned"), nil })
		if keys := w.remoteKeys(b); len(keys) < 2 {
			t.Errorf("the Cluster's default is keep, yet the remote objects were deleted: %v left", keys)
		}
	})
}

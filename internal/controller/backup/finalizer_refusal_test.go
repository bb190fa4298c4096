package backup_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
)

// TestBackupFinalizerRefusals drives the remote-cleanup finalizer where it must not delete, on
// the real API server and a real versitygw.
func TestBackupFinalizerRefusals(t *testing.T) {
	w := newBkWorld(t)
	t.Run("the directory's metadata.json names another namespace: refused, kept, until the bypass", w.testForeignDirectory)
	t.Run("the API server refuses a read: condition, Warning and backoff, then cleaned up", w.testReadForbidden)
	t.Run("a Cluster of the namespace does not decode: nothing deleted until it is gone", w.testUndecodableCluster)
}

// testUndecodableCluster: a Cluster stored under an older, looser schema cannot be decoded; it
// may recover from this Backup, so the cleanup deletes nothing while it exists, and says why.
func (w *bkWorld) testUndecodableCluster(t *testing.T) {
	w.T = t
	w.createPolicyBackup("fin-undecodable", "db", v1.DeletionPolicyDelete)
	b := w.completeBackup("fin-undecodable")
	bad := kubetest.UndecodableCluster(w.NS, "restores-from", "fin-undecodable")
	kubetest.StoreUndecodable(t, w.Client, "clusters", bad, kubetest.UndecodableClusterPath...)
	w.events()
	w.deleteBackup("fin-undecodable")
	w.reconcile("fin-undecodable")
	if c := w.cleanupCondition("fin-undecodable"); c == nil || c.Status != metav1.ConditionFalse ||
		c.Reason != v1.ReasonCleanupFailed || !strings.Contains(c.Message, "restores-from") {
		t.Fatalf("RemoteCleanup %+v, want False CleanupFailed naming the Cluster that does not decode", c)
	}
	if !w.hasFinalizer("fin-undecodable") || len(w.remoteKeys(b)) < 2 {
		t.Fatal("the cleanup deleted the Backup's data while a Cluster it could not read may recover from it")
	}
	check.Must(t, w.Client.Delete(w.Ctx, bad))
	w.Eventually("the undecodable Cluster to be gone", w.Gone(bad))
	w.Clock.Step(time.Hour)
	w.reconcile("fin-undecodable")
	if !w.backupGone("fin-undecodable") || len(w.remoteKeys(b)) != 0 {
		t.Fatalf("once the Cluster is gone: Backup gone %v, remote objects %v", w.backupGone("fin-undecodable"), w.remoteKeys(b))
	}
}

// testForeignDirectory: a Cluster of the same name in another namespace, sharing the location,
// wrote the directory this Backup recorded (same name and id). Deleting this Backup must not
// delete the other Cluster's recovery point.
func (w *bkWorld) testForeignDirectory(t *testing.T) {
	w.T = t
	w.createPolicyBackup("fin-shared", "db", v1.DeletionPolicyDelete)
	b := w.completeBackup("fin-shared")
	w.rewriteNamespace(b, "team-b")
	w.events()
	w.deleteBackup("fin-shared")
	if res := w.reconcile("fin-shared"); res.RequeueAfter < 5*time.Second {
		t.Errorf("a refused cleanup is retried after %s", res.RequeueAfter)
	}
	if c := w.cleanupCondition("fin-shared"); c == nil || c.Status != metav1.ConditionFalse ||
		c.Reason != v1.ReasonCleanupForeign || !strings.Contains(c.Message, "team-b") {
		t.Fatalf("RemoteCleanup %+v, want False ForeignBackup naming team-b", c)
	}
	if !w.hasFinalizer("fin-shared") || len(w.remoteKeys(b)) < 2 {
		t.Fatalf("the refused cleanup lost the finalizer or deleted data: %v", w.remoteKeys(b))
	}
	if ev := w.events(); !strings.Contains(ev, "Warning RemoteCleanupBlocked") || !strings.Contains(ev, v1.RemoteCleanupBypassAnnotation) {
		t.Errorf("events %s", ev)
	}
	cur := w.backup("fin-shared")
	old := cur.DeepCopy()
	cur.Annotations = map[string]string{v1.RemoteCleanupBypassAnnotation: "true"}
	check.Must(t, w.Client.Patch(w.Ctx, cur, client.MergeFrom(old)))
	w.reconcile("fin-shared")
	if !w.backupGone("fin-shared") || len(w.remoteKeys(b)) < 2 {
		t.Fatalf("the bypass: Backup gone %v, remote objects %v; want it gone and the other namespace's data kept",
			w.backupGone("fin-shared"), w.remoteKeys(b))
	}
}

// rewriteNamespace rewrites the Backup's metadata.json as if a Cluster of namespace had written it.
func (w *bkWorld) rewriteNamespace(b *v1.Backup, namespace string) {
	w.T.Helper()
	key := b.Status.DestinationPath + objectstore.MetadataName
	obj, err := w.store.S3.Client().GetObject(w.Ctx, w.store.S3.Bucket, key, minio.GetObjectOptions{})
	check.Must(w.T, err)
	var buf bytes.Buffer
	_, err = buf.ReadFrom(obj)
	obj.Close()
	check.Must(w.T, err)
	md, err := objectstore.DecodeMetadata(buf.Bytes())
	check.Must(w.T, err)
	md.Namespace = namespace
	data, err := md.Encode()
	check.Must(w.T, err)
	if _, err := w.store.S3.Client().PutObject(w.Ctx, w.store.S3.Bucket, key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
		w.T.Fatal(err)
	}
}

// testReadForbidden: the operator may not list Clusters (an RBAC rule lost in an upgrade). The
// cleanup cannot tell whether a Cluster recovers from the Backup, so it deletes nothing; it says
// so in the condition and a Warning, not only in a log line, and waits longer while it lasts.
func (w *bkWorld) testReadForbidden(t *testing.T) {
	w.T = t
	w.createPolicyBackup("fin-rbac", "db", v1.DeletionPolicyDelete)
	b := w.completeBackup("fin-rbac")
	w.events()
	w.deleteBackup("fin-rbac")
	var forbid atomic.Bool
	forbid.Store(true)
	r := w.reconciler()
	r.APIReader = clusterListsForbidden{Reader: w.Client, forbid: &forbid}
	reconcile := func() ctrl.Result {
		t.Helper()
		res, err := r.Reconcile(w.Ctx, ctrl.Request{NamespacedName: client.ObjectKey{Namespace: w.NS, Name: "fin-rbac"}})
		if err != nil {
			t.Fatalf("reconcile: %v; want the failure in the condition and an Event, retried with the cleanup's backoff", err)
		}
		return res
	}
	if res := reconcile(); res.RequeueAfter < 5*time.Second {
		t.Errorf("retried after %s", res.RequeueAfter)
	}
	if c := w.cleanupCondition("fin-rbac"); c == nil || c.Status != metav1.ConditionFalse ||
		c.Reason != v1.ReasonCleanupFailed || !strings.Contains(c.Message, "forbidden") {
		t.Fatalf("RemoteCleanup %+v, want False CleanupFailed saying forbidden", c)
	}
	if ev := w.events(); !strings.Contains(ev, "Warning RemoteCleanupFailed") || !strings.Contains(ev, "forbidden") {
		t.Errorf("events %s", ev)
	}
	if !w.hasFinalizer("fin-rbac") || len(w.remoteKeys(b)) < 2 {
		t.Fatal("a cleanup that could not read its inputs lost the finalizer or the data")
	}
	w.Clock.Step(time.Minute)
	if res := reconcile(); res.RequeueAfter < time.Minute {
		t.Errorf("still forbidden after a minute: retried after %s, want the wait to grow", res.RequeueAfter)
	}
	forbid.Store(false)
	reconcile()
	if !w.backupGone("fin-rbac") || len(w.remoteKeys(b)) != 0 {
		t.Fatalf("once allowed: Backup gone %v, remote objects %v", w.backupGone("fin-rbac"), w.remoteKeys(b))
	}
}

// clusterListsForbidden refuses to list Clusters while forbid is set, as the API server does
// without the RBAC rule.
type clusterListsForbidden struct {
	client.Reader
	forbid *atomic.Bool
}

func (r clusterListsForbidden) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if _, ok := list.(*v1.ClusterList); ok && r.forbid.Load() {
		return apierrors.NewForbidden(schema.GroupResource{Group: v1.GroupVersion.Group, Resource: "clusters"}, "",
			errors.New(`User "system:serviceaccount:cnm-system:operator" cannot list resource "clusters"`))
	}
	return r.Reader.List(ctx, list, opts...)
}

package backup_test

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/backup"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

// startBackupManager runs the Backup reconciler in a controller-runtime manager watching only the
// world's namespace, with the fake clock, until the test ends.
func (w *bkWorld) startBackupManager() {
	w.T.Helper()
	w.StartManager(func(mgr ctrl.Manager) error {
		r := &backup.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: w.Recorder,
			Clock: w.Clock, Instances: bkReports{w}, OperatorImage: "operator:test"}
		return r.SetupWithManager(mgr)
	})
}

// TestBackupCleanupWaitsForTheRecoveringCluster: a Cluster's default deletion policy reaches its
// Backups' finalizer through the Cluster watch. A Backup that a Cluster's bootstrap.recovery
// names is not cleaned up while that Cluster exists (condition, Warning, finalizer kept, data
// kept). Deleting the Cluster resumes the cleanup through the Cluster watch alone: the refused
// cleanup's own recheck is minutes away, the test waits seconds.
func TestBackupCleanupWaitsForTheRecoveringCluster(t *testing.T) {
	w := newBkWorld(t)
	w.createPolicyBackup("precious", "db", v1.DeletionPolicyDelete)
	b := w.completeBackup("precious")
	w.Create(&v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "restored", Namespace: w.NS},
		Spec: v1.ClusterSpec{Instances: 1, ImageName: "mysql:test", MaxSwitchoverDelay: 3600,
			Storage:   v1.StorageConfiguration{Size: resource.MustParse("1Gi")},
			Bootstrap: &v1.BootstrapConfiguration{Recovery: &v1.BootstrapRecovery{Backup: &v1.LocalObjectReference{Name: "precious"}}}}})
	w.createPolicyBackup("casual", "db", "")
	w.completeBackup("casual")
	w.events()
	w.startBackupManager()

	// The Cluster's default follows through the Cluster watch onto the Backups it governs.
	for _, policy := range []v1.DeletionPolicy{v1.DeletionPolicyDelete, v1.DeletionPolicyKeep} {
		var c v1.Cluster
		check.Must(t, w.Client.Get(w.Ctx, client.ObjectKey{Namespace: w.NS, Name: "db"}, &c))
		old := c.DeepCopy()
		c.Spec.Backup.DeletionPolicy = policy
		check.Must(t, w.Client.Patch(w.Ctx, &c, client.MergeFrom(old)))
		w.Eventually("the finalizer follows the Cluster's default "+string(policy), func(context.Context) (bool, error) {
			return w.hasFinalizer("casual") == (policy == v1.DeletionPolicyDelete), nil
		})
	}

	w.deleteBackup("precious")
	w.Eventually("the cleanup is refused", func(context.Context) (bool, error) {
		c := w.cleanupCondition("precious")
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == v1.ReasonCleanupRefused, nil
	})
	if c := w.cleanupCondition("precious"); !strings.Contains(c.Message, "restored") {
		t.Errorf("the condition does not name the Cluster: %s", c.Message)
	}
	if !w.hasFinalizer("precious") || len(w.remoteKeys(b)) < 2 {
		t.Fatal("a refused cleanup lost the finalizer or the data")
	}
	if ev := w.events(); !strings.Contains(ev, "Warning RemoteCleanupRefused") {
		t.Errorf("events %s", ev)
	}

	check.Must(t, w.Client.Delete(w.Ctx, &v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "restored", Namespace: w.NS}}))
	w.Eventually("the cleanup resumes once the recovering Cluster is gone", func(context.Context) (bool, error) {
		return w.backupGone("precious"), nil
	})
	if keys := w.remoteKeys(b); len(keys) != 0 {
		t.Errorf("remote objects left: %v", keys)
	}
}

package retention_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

// TestLeavesASameNamedClusterOfAnotherNamespaceAlone: Clusters named db in two
// namespaces with the same bucket and path write to one directory. The pass of the first must
// not take the second's backups for its own: not its old one, which a Cluster of the second
// namespace recovers from (a protection the first namespace cannot see), nor its newest. They
// are kept, the first Cluster's own old backup is expired, and a Warning ForeignBackups says
// that two Clusters share the location; no Backup of the second namespace is touched.
func TestLeavesASameNamedClusterOfAnotherNamespaceAlone(t *testing.T) {
	a := newRetWorld(t)
	b := a.sameStoreElsewhere()
	a.createCluster("db", "7d", true)
	b.createCluster("db", "7d", false) // no pass of its own: only the first namespace's runs
	a.uploadBackup("db", "a-old", 20*day)
	a.uploadBackup("db", "a-new", 2*day)
	b.uploadBackup("db", "b-pinned", 30*day)
	b.uploadBackup("db", "b-new", day)
	b.createRecoveryCluster("restored", "b-pinned")

	a.reconcileOK("db")
	a.wantDirs("db", "a-new", "b-pinned", "b-new")
	if got := a.artifacts("a-old"); got != v1.ReasonArtifactsExpired {
		t.Errorf("Backup a-old: %q, want Expired", got)
	}
	for _, name := range []string{"b-pinned", "b-new"} {
		if got := b.artifacts(name); got != "" {
			t.Errorf("Backup %s of the other namespace: ArtifactsAvailable %q, want untouched", name, got)
		}
	}
	ev := a.events()
	for _, want := range []string{"Warning ForeignBackups", "2 backup(s)", b.NS, "b-pinned/", "b-new/"} {
		if !strings.Contains(ev, want) {
			t.Errorf("events %q, want %q", ev, want)
		}
	}
}

// TestMarksBackupsWhoseMarkWasLost: a pass deletes an expired backup but cannot mark
// its Backup (the API server fails the reads; a restart mid-pass loses the mark the same way).
// The next pass no longer sees the directory, so it cannot expire it again: it marks every
// completed Backup recorded in the cluster's directory whose metadata.json it did not find
// Missing. Backups whose directory is there, a Backup recorded in another location, and a
// running Backup are left alone.
func TestMarksBackupsWhoseMarkWasLost(t *testing.T) {
	w := newRetWorld(t)
	w.createCluster("db", "7d", true)
	w.uploadBackup("db", "old", 20*day)
	w.uploadBackup("db", "new", day)
	elsewhere := objectstore.BackupRef{Cluster: "db", Name: "elsewhere", ID: backupID(w.Clock.Now().Add(-3 * day))}
	w.createBackupObject("elsewhere", "db", elsewhere, v1.BackupPhaseCompleted)
	e := w.backup("elsewhere")
	e.Status.DestinationPath = objectstore.BackupDir("other-path", elsewhere)
	w.UpdateStatus(e)
	running := objectstore.BackupRef{Cluster: "db", Name: "running", ID: backupID(w.Clock.Now())}
	w.createBackupObject("running", "db", running, v1.BackupPhaseRunning)

	var failBackupReads atomic.Bool
	failBackupReads.Store(true)
	w.rec.APIReader = backupReadsFailing{Reader: w.Client, fail: &failBackupReads}
	if _, err := w.reconcile("db"); err == nil {
		t.Fatal("the pass whose marks failed returned no error")
	}
	w.wantDirs("db", "new")
	if got := w.artifacts("old"); got != "" {
		t.Fatalf("Backup old: %q, want no mark (the marking failed)", got)
	}
	w.events()

	failBackupReads.Store(false)
	w.Clock.Step(61 * time.Minute)
	w.reconcileOK("db")
	for name, want := range map[string]string{"old": v1.ReasonArtifactsMissing, "new": "", "elsewhere": "", "running": ""} {
		if got := w.artifacts(name); got != want {
			t.Errorf("Backup %s: ArtifactsAvailable reason %q, want %q", name, got, want)
		}
	}
}

// backupReadsFailing fails every Backup read while fail is set.
type backupReadsFailing struct {
	client.Reader
	fail *atomic.Bool
}

func (r backupReadsFailing) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*v1.Backup); ok && r.fail.Load() {
		return apierrors.NewServiceUnavailable("injected: Backup reads fail")
	}
	return r.Reader.Get(ctx, key, obj, opts...)
}

package scheduledbackup_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// TestScheduledBackupLaggingCacheNeverDeletesAPrunedBackupTwice: the cache still shows a failed Backup this
// process just pruned. The next look does not delete it again nor report it pruned again; a
// restarted process, which remembers nothing, deletes it again and finds it gone, harmlessly.
func TestScheduledBackupLaggingCacheNeverDeletesAPrunedBackupTwice(t *testing.T) {
	t.Parallel()
	w, first := newNightly(t, func(s *v1.ScheduledBackupSpec) { s.FailedBackupsHistoryLimit = int32Ptr(1) })
	second := first.Add(time.Hour)
	for _, slot := range []time.Time{first, second} {
		w.Clock.SetTime(slot)
		w.reconcile("nightly")
		w.setPhase(childName("nightly", slot), v1.BackupPhaseFailed)
	}

	// The cache's Backups stop here, both failed ones shown; the schedule is read as it is.
	var frozen v1.BackupList
	if err := w.Client.List(w.Ctx, &frozen, client.InNamespace(w.NS)); err != nil {
		t.Fatal(err)
	}
	var deletes atomic.Int32
	lagging := w.intercepting(interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if bl, ok := list.(*v1.BackupList); ok {
				frozen.DeepCopyInto(bl)
				return nil
			}
			return c.List(ctx, list, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			deletes.Add(1)
			return c.Delete(ctx, obj, opts...)
		},
	})
	w.Events()
	r := w.reconciler(lagging)
	for range 3 {
		w.Clock.Step(time.Second)
		if _, err := r.Reconcile(w.Ctx, w.request("nightly")); err != nil {
			t.Fatal(err)
		}
	}
	w.wantBackups(childName("nightly", second))
	if n := deletes.Load(); n != 1 {
		t.Fatalf("%d deletes of the pruned Backup by one process, want 1", n)
	}
	if n := countReason(w.Events(), "BackupsPruned"); n != 1 {
		t.Fatalf("%d BackupsPruned Events, want 1", n)
	}

	w.Clock.Step(time.Second)
	if _, err := w.reconcileWith(lagging, "nightly"); err != nil {
		t.Fatalf("a restarted process deleting the pruned Backup again: %v", err)
	}
	if n := deletes.Load(); n != 2 {
		t.Fatalf("%d deletes after a restart, want 2: the memory is not expected to survive it", n)
	}
	w.wantBackups(childName("nightly", second))
}

func countReason(events []string, reason string) int {
	n := 0
	for _, e := range events {
		if strings.Contains(e, " "+reason+" ") {
			n++
		}
	}
	return n
}

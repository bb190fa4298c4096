package controller_test

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
	h := newHarness(t)
	h.createCluster("db")
	h.createSchedule("nightly", func(s *v1.ScheduledBackupSpec) { s.FailedBackupsHistoryLimit = int32Ptr(1) })
	h.reconcile("nightly")
	first := h.firstSlot("nightly")
	second := first.Add(time.Hour)
	for _, slot := range []time.Time{first, second} {
		h.clock.SetTime(slot)
		h.reconcile("nightly")
		h.setPhase(childName("nightly", slot), v1.BackupPhaseFailed)
	}

	// The cache's Backups stop here, both failed ones shown; the schedule is read as it is.
	var frozen v1.BackupList
	if err := h.env.Client.List(h.ctx, &frozen, client.InNamespace(h.ns)); err != nil {
		t.Fatal(err)
	}
	var deletes atomic.Int32
	lagging := h.intercepting(interceptor.Funcs{
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
	h.events()
	r := h.reconciler(lagging)
	for range 3 {
		h.clock.Step(time.Second)
		if _, err := r.Reconcile(h.ctx, requestFor(h, "nightly")); err != nil {
			t.Fatal(err)
		}
	}
	h.wantBackups(childName("nightly", second))
	if n := deletes.Load(); n != 1 {
		t.Fatalf("%d deletes of the pruned Backup by one process, want 1", n)
	}
	if n := countReason(h.events(), "BackupsPruned"); n != 1 {
		t.Fatalf("%d BackupsPruned Events, want 1", n)
	}

	h.clock.Step(time.Second)
	if _, err := h.reconcileWith(lagging, "nightly"); err != nil {
		t.Fatalf("a restarted process deleting the pruned Backup again: %v", err)
	}
	if n := deletes.Load(); n != 2 {
		t.Fatalf("%d deletes after a restart, want 2: the memory is not expected to survive it", n)
	}
	h.wantBackups(childName("nightly", second))
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

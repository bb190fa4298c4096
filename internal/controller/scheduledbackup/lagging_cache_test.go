package controller_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller"
)

// laggingCache serves ScheduledBackups and Backup lists from a snapshot taken at freeze, as a
// cache that has not seen the latest writes would; writes go to the API server.
type laggingCache struct {
	sb     *v1.ScheduledBackup
	list   *v1.BackupList
	frozen bool
}

func (h *harness) laggingClient(lc *laggingCache) client.Client {
	return h.intercepting(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if sb, ok := obj.(*v1.ScheduledBackup); ok && lc.frozen {
				lc.sb.DeepCopyInto(sb)
				return nil
			}
			return c.Get(ctx, key, obj, opts...)
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if bl, ok := list.(*v1.BackupList); ok && lc.frozen {
				lc.list.DeepCopyInto(bl)
				return nil
			}
			return c.List(ctx, list, opts...)
		},
	})
}

// countingReader counts the reads that bypass the cache: all of them in n, the lists in lists.
func (h *harness) countingReader(n, lists *atomic.Int32) client.Client {
	return h.intercepting(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			n.Add(1)
			return c.Get(ctx, key, obj, opts...)
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			n.Add(1)
			lists.Add(1)
			return c.List(ctx, list, opts...)
		},
	})
}

// TestLaggingCacheNeverOverlapsARunningBackup: one long-lived reconciler whose cache stopped
// before its own last writes. While the cache shows every write of the process, a slot is
// created without extra reads; once it does not, the decision is taken again on a fresh read,
// which sees the running Backup and defers the slot instead of overlapping it. The fresh read gets
// the schedule and the Backup by name: it never lists (and so scans) the namespace's Backups.
func TestLaggingCacheNeverOverlapsARunningBackup(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.createCluster("db")
	h.createSchedule("nightly")
	lc := &laggingCache{}
	var fresh, lists atomic.Int32
	r := &controller.ScheduledBackupReconciler{Client: h.laggingClient(lc), APIReader: h.countingReader(&fresh, &lists),
		Recorder: h.recorder, Clock: h.clock}
	reconcile := func() {
		t.Helper()
		if _, err := r.Reconcile(h.ctx, requestFor(h, "nightly")); err != nil {
			t.Fatal(err)
		}
	}
	reconcile()
	lc.sb, lc.list, lc.frozen = h.schedule("nightly"), &v1.BackupList{}, true

	first := h.firstSlot("nightly")
	h.clock.SetTime(first)
	reconcile()
	h.wantBackups(childName("nightly", first))
	if n := fresh.Load(); n != 0 {
		t.Fatalf("%d reads bypassed a cache that showed every write", n)
	}
	h.setPhase(childName("nightly", first), v1.BackupPhaseRunning)

	h.clock.SetTime(first.Add(time.Hour))
	reconcile()
	h.wantBackups(childName("nightly", first))
	if fresh.Load() == 0 {
		t.Fatal("a cache missing this process's writes was trusted")
	}
	if n := lists.Load(); n != 0 {
		t.Fatalf("the fresh read listed Backups %d time(s)", n)
	}
	if ev := h.events(); !hasEvent(ev, "BackupDeferred") {
		t.Fatalf("events %v lack BackupDeferred", ev)
	}
}

func requestFor(h *harness, name string) ctrl.Request {
	return ctrl.Request{NamespacedName: client.ObjectKey{Namespace: h.ns, Name: name}}
}

// TestLaggingCacheNeverRecreatesAPrunedBackup: the cache stopped before this process created a
// slot's Backup. The Backup fails and is pruned (failed history limit 0) while the cache still shows
// neither it nor the status that records its slot; every later decision to create that slot again
// is taken anew on a fresh read, which finds the slot recorded, so the pruned Backup never returns.
func TestLaggingCacheNeverRecreatesAPrunedBackup(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.createCluster("db")
	h.createSchedule("nightly", func(s *v1.ScheduledBackupSpec) { s.FailedBackupsHistoryLimit = int32Ptr(0) })
	lc := &laggingCache{}
	var fresh, lists atomic.Int32
	r := &controller.ScheduledBackupReconciler{Client: h.laggingClient(lc), APIReader: h.countingReader(&fresh, &lists),
		Recorder: h.recorder, Clock: h.clock}
	reconcile := func() {
		t.Helper()
		if _, err := r.Reconcile(h.ctx, requestFor(h, "nightly")); err != nil {
			t.Fatal(err)
		}
	}
	reconcile()
	lc.sb, lc.list, lc.frozen = h.schedule("nightly"), &v1.BackupList{}, true

	slot := h.firstSlot("nightly")
	h.clock.SetTime(slot)
	reconcile()
	name := childName("nightly", slot)
	h.wantBackups(name)
	h.setPhase(name, v1.BackupPhaseFailed)
	for range 3 {
		h.clock.Step(time.Minute)
		reconcile()
		h.wantBackups()
	}
	if got := h.schedule("nightly").Status.LastScheduleTime; got == nil || !got.Time.Equal(slot) {
		t.Fatalf("lastScheduleTime %v, want %v", got, slot)
	}
	if fresh.Load() == 0 || lists.Load() != 0 {
		t.Fatalf("%d fresh reads, %d of them lists: want fresh reads by name only", fresh.Load(), lists.Load())
	}
}

package scheduledbackup_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/scheduledbackup"
)

// laggingCache serves ScheduledBackups and Backup lists from a snapshot taken at freeze, as a
// cache that has not seen the latest writes would; writes go to the API server.
type laggingCache struct {
	sb     *v1.ScheduledBackup
	list   *v1.BackupList
	frozen bool
}

func (w *world) laggingClient(lc *laggingCache) client.Client {
	return w.intercepting(interceptor.Funcs{
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
func (w *world) countingReader(n, lists *atomic.Int32) client.Client {
	return w.intercepting(interceptor.Funcs{
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
	w := newWorld(t)
	w.createCluster("db")
	w.createSchedule("nightly")
	lc := &laggingCache{}
	var fresh, lists atomic.Int32
	r := &scheduledbackup.Reconciler{Client: w.laggingClient(lc), APIReader: w.countingReader(&fresh, &lists),
		Recorder: w.Recorder, Clock: w.Clock}
	reconcile := func() {
		t.Helper()
		if _, err := r.Reconcile(w.Ctx, w.request("nightly")); err != nil {
			t.Fatal(err)
		}
	}
	reconcile()
	lc.sb, lc.list, lc.frozen = w.schedule("nightly"), &v1.BackupList{}, true

	first := w.firstSlot("nightly")
	w.Clock.SetTime(first)
	reconcile()
	w.wantBackups(childName("nightly", first))
	if n := fresh.Load(); n != 0 {
		t.Fatalf("%d reads bypassed a cache that showed every write", n)
	}
	w.setPhase(childName("nightly", first), v1.BackupPhaseRunning)

	w.Clock.SetTime(first.Add(time.Hour))
	reconcile()
	w.wantBackups(childName("nightly", first))
	if fresh.Load() == 0 {
		t.Fatal("a cache missing this process's writes was trusted")
	}
	if n := lists.Load(); n != 0 {
		t.Fatalf("the fresh read listed Backups %d time(s)", n)
	}
	if ev := w.Events(); !hasEvent(ev, "BackupDeferred") {
		t.Fatalf("events %v lack BackupDeferred", ev)
	}
}

func requestFor(w *world, name string) ctrl.Request {
	return ctrl.Request{NamespacedName: client.ObjectKey{Namespace: w.NS, Name: name}}
}

// TestLaggingCacheNeverRecreatesAPrunedBackup: the cache stopped before this process created a
// slot's Backup. The Backup fails and is pruned (failed history limit 0) while the cache still shows
// neither it nor the status that records its slot; every later decision to create that slot again
// is taken anew on a fresh read, which finds the slot recorded, so the pruned Backup never returns.
func TestLaggingCacheNeverRecreatesAPrunedBackup(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.createCluster("db")
	w.createSchedule("nightly", func(s *v1.ScheduledBackupSpec) { s.FailedBackupsHistoryLimit = int32Ptr(0) })
	lc := &laggingCache{}
	var fresh, lists atomic.Int32
	r := &scheduledbackup.Reconciler{Client: w.laggingClient(lc), APIReader: w.countingReader(&fresh, &lists),
		Recorder: w.Recorder, Clock: w.Clock}
	reconcile := func() {
		t.Helper()
		if _, err := r.Reconcile(w.Ctx, w.request("nightly")); err != nil {
			t.Fatal(err)
		}
	}
	reconcile()
	lc.sb, lc.list, lc.frozen = w.schedule("nightly"), &v1.BackupList{}, true

	slot := w.firstSlot("nightly")
	w.Clock.SetTime(slot)
	reconcile()
	name := childName("nightly", slot)
	w.wantBackups(name)
	w.setPhase(name, v1.BackupPhaseFailed)
	for range 3 {
		w.Clock.Step(time.Minute)
		reconcile()
		w.wantBackups()
	}
	if got := w.schedule("nightly").Status.LastScheduleTime; got == nil || !got.Time.Equal(slot) {
		t.Fatalf("lastScheduleTime %v, want %v", got, slot)
	}
	if fresh.Load() == 0 || lists.Load() != 0 {
		t.Fatalf("%d fresh reads, %d of them lists: want fresh reads by name only", fresh.Load(), lists.Load())
	}
}

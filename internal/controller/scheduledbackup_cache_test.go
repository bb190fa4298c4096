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

// countingReader counts the reads that bypass the cache.
func (h *harness) countingReader(n *atomic.Int32) client.Client {
	return h.intercepting(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			n.Add(1)
			return c.Get(ctx, key, obj, opts...)
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			n.Add(1)
			return c.List(ctx, list, opts...)
		},
	})
}

// TestLaggingCacheNeverOverlapsARunningBackup: one long-lived reconciler whose cache stopped
// before its own last writes. While the cache shows every write of the process, a slot is
// created without extra reads; once it does not, the decision is taken again on a fresh read,
// which sees the running Backup and defers the slot instead of overlapping it.
func TestLaggingCacheNeverOverlapsARunningBackup(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.createCluster("db")
	h.createSchedule("nightly")
	lc := &laggingCache{}
	var fresh atomic.Int32
	r := &controller.ScheduledBackupReconciler{Client: h.laggingClient(lc), APIReader: h.countingReader(&fresh),
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
	if ev := h.events(); !hasEvent(ev, "BackupDeferred") {
		t.Fatalf("events %v lack BackupDeferred", ev)
	}
}

func requestFor(h *harness, name string) ctrl.Request {
	return ctrl.Request{NamespacedName: client.ObjectKey{Namespace: h.ns, Name: name}}
}

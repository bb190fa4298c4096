package controller_test

import (
	"context"
	"testing"
	"time"

	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller"
)

// startManager runs the reconciler in a controller-runtime manager watching only the test's
// namespace, with the fake clock, until the test ends.
func (h *harness) startManager() { h.startManagerWith() }

// startManagerWith is startManager with the reconciler changed, and more set up, by each of
// configure.
func (h *harness) startManagerWith(configure ...func(ctrl.Manager, *controller.ScheduledBackupReconciler)) {
	h.t.Helper()
	mgr, err := ctrl.NewManager(h.env.Config, ctrl.Options{
		Scheme:     h.env.Scheme,
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Cache:      cache.Options{DefaultNamespaces: map[string]cache.Config{h.ns: {}}},
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		h.t.Fatal(err)
	}
	r := &controller.ScheduledBackupReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
		Recorder: mgr.GetEventRecorderFor("scheduledbackup-controller"), Clock: h.clock}
	for _, c := range configure {
		c(mgr, r)
	}
	if err := r.SetupWithManager(mgr); err != nil {
		h.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(h.ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	h.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			h.t.Errorf("manager: %v", err)
		}
	})
}

// exists waits for the named Backup.
func (h *harness) exists(name string) func(ctx context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		err := h.env.Client.Get(ctx, client.ObjectKey{Namespace: h.ns, Name: name}, &v1.Backup{})
		return err == nil, client.IgnoreNotFound(err)
	}
}

// TestChildCompletionWakesTheScheduleInEveryOwnerMode runs the manager: each schedule creates
// its immediate Backup, the fake clock moves past a slot, and that slot waits on the running
// immediate Backup. Only the Backup watch (children found by label) can wake the schedule before
// its next timed requeue, minutes of real time away, so the slot's Backup appearing within
// seconds of the child completing proves it, in the self, cluster and none modes alike. The
// Events a user reads in `kubectl describe` are checked on the API server.
func TestChildCompletionWakesTheScheduleInEveryOwnerMode(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.createCluster("db")
	modes := map[string]v1.BackupOwnerReference{
		"wake-self": v1.BackupOwnerReferenceSelf, "wake-cluster": v1.BackupOwnerReferenceCluster, "wake-none": v1.BackupOwnerReferenceNone,
	}
	for name, mode := range modes {
		h.createSchedule(name, func(s *v1.ScheduledBackupSpec) {
			s.BackupOwnerReference, s.Immediate = mode, boolPtr(true)
		})
	}
	h.startManager()
	immediate := map[string]string{}
	h.eventually("every schedule creates its immediate Backup and records it", func(ctx context.Context) (bool, error) {
		for name := range modes {
			sb := h.schedule(name)
			if sb.Status.LastScheduleTime == nil {
				return false, nil
			}
			immediate[name] = childName(name, sb.Status.LastScheduleTime.Time)
		}
		return true, nil
	})
	slot := slotAfter(t, h.clock.Now()).Add(time.Hour)
	h.clock.SetTime(slot.Add(time.Second))
	for name := range modes {
		h.setPhase(immediate[name], v1.BackupPhaseRunning)
	}
	for name := range modes {
		h.setPhase(immediate[name], v1.BackupPhaseCompleted)
		start := time.Now()
		h.eventually(name+": the completed child wakes the schedule", h.exists(childName(name, slot)))
		if took := time.Since(start); took > 5*time.Second {
			t.Fatalf("%s: the slot's Backup came %v after the child completed", name, took)
		}
	}
	for name := range modes {
		h.eventually(name+": Events on the API server", func(ctx context.Context) (bool, error) {
			reasons := map[string]bool{}
			for _, e := range namespaceEvents(h, name) {
				reasons[e.Reason] = true
			}
			return reasons["ImmediateBackupCreated"] && reasons["BackupCreated"], nil
		})
	}
}

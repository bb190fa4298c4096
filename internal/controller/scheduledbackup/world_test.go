package controller_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/schedule"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
)

// shared is the package's control plane with kube-controller-manager (garbage collection),
// started on first use so the pure decision tests of this package run without it.
var shared = kubetest.NewShared(kubetest.Options{ControllerManager: true})

func TestMain(m *testing.M) { shared.Main(m) }

// controlPlane returns the shared API server.
func controlPlane(t *testing.T) *kubetest.Env {
	t.Helper()
	return shared.Get(t)
}

// hourly is the cron of most tests: every hour at minute 0, second 0.
const hourly = "0 0 * * * *"

// harness drives the reconciler directly against the real API server, one namespace per test,
// with a fake clock the test advances.
type harness struct {
	t        *testing.T
	ctx      context.Context
	env      *kubetest.Env
	ns       string
	clock    *clocktesting.FakeClock
	recorder *record.FakeRecorder
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	e := controlPlane(t)
	return &harness{t: t, ctx: context.Background(), env: e, ns: e.NewNamespace(t),
		clock: clocktesting.NewFakeClock(time.Now()), recorder: record.NewFakeRecorder(1000)}
}

// reconciler is a fresh reconciler over c, as an operator process would build after a restart.
func (h *harness) reconciler(c client.Client) *controller.ScheduledBackupReconciler {
	return &controller.ScheduledBackupReconciler{Client: c, APIReader: c, Recorder: h.recorder, Clock: h.clock}
}

// reconcile runs one reconcile of name with a fresh reconciler and fails the test on error.
func (h *harness) reconcile(name string) ctrl.Result {
	h.t.Helper()
	res, err := h.reconcileWith(h.env.Client, name)
	if err != nil {
		h.t.Fatalf("reconcile %s: %v", name, err)
	}
	return res
}

func (h *harness) reconcileWith(c client.Client, name string) (ctrl.Result, error) {
	return h.reconciler(c).Reconcile(h.ctx, ctrl.Request{NamespacedName: client.ObjectKey{Namespace: h.ns, Name: name}})
}

// createSchedule creates an hourly ScheduledBackup of Cluster "db"; the API server applies the
// schema defaults.
func (h *harness) createSchedule(name string, mutate ...func(*v1.ScheduledBackupSpec)) *v1.ScheduledBackup {
	h.t.Helper()
	sb := &v1.ScheduledBackup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: h.ns},
		Spec: v1.ScheduledBackupSpec{Schedule: hourly, Cluster: v1.LocalObjectReference{Name: "db"}}}
	for _, m := range mutate {
		m(&sb.Spec)
	}
	if err := h.env.Client.Create(h.ctx, sb); err != nil {
		h.t.Fatalf("creating ScheduledBackup %s: %v", name, err)
	}
	return sb
}

// createCluster creates the Cluster object "db" (no controller runs it).
func (h *harness) createCluster(name string) *unstructured.Unstructured {
	h.t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1.GroupVersion.String(), "kind": "Cluster",
		"metadata": map[string]any{"name": name, "namespace": h.ns},
		"spec":     map[string]any{"instances": int64(3), "storage": map[string]any{"size": "1Gi"}},
	}}
	if err := h.env.Client.Create(h.ctx, u); err != nil {
		h.t.Fatalf("creating Cluster %s: %v", name, err)
	}
	return u
}

func (h *harness) schedule(name string) *v1.ScheduledBackup {
	h.t.Helper()
	var sb v1.ScheduledBackup
	if err := h.env.Client.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: name}, &sb); err != nil {
		h.t.Fatalf("reading ScheduledBackup %s: %v", name, err)
	}
	return &sb
}

// updateSpec changes a ScheduledBackup's spec as a user would.
func (h *harness) updateSpec(name string, mutate func(*v1.ScheduledBackupSpec)) {
	h.t.Helper()
	sb := h.schedule(name)
	mutate(&sb.Spec)
	if err := h.env.Client.Update(h.ctx, sb); err != nil {
		h.t.Fatalf("updating ScheduledBackup %s: %v", name, err)
	}
}

// backups lists the Backups of the namespace by name.
func (h *harness) backups() map[string]v1.Backup {
	h.t.Helper()
	var list v1.BackupList
	if err := h.env.Client.List(h.ctx, &list, client.InNamespace(h.ns)); err != nil {
		h.t.Fatalf("listing Backups: %v", err)
	}
	out := map[string]v1.Backup{}
	for _, b := range list.Items {
		out[b.Name] = b
	}
	return out
}

// wantBackups fails unless the namespace holds exactly the named Backups.
func (h *harness) wantBackups(names ...string) map[string]v1.Backup {
	h.t.Helper()
	got := h.backups()
	if len(got) != len(names) {
		h.t.Fatalf("Backups %v, want exactly %v", keys(got), names)
	}
	for _, n := range names {
		if _, ok := got[n]; !ok {
			h.t.Fatalf("Backups %v, want exactly %v", keys(got), names)
		}
	}
	return got
}

// setPhase plays the Backup controller: it writes a phase through the status subresource.
func (h *harness) setPhase(name string, phase v1.BackupPhase) {
	h.t.Helper()
	var b v1.Backup
	if err := h.env.Client.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: name}, &b); err != nil {
		h.t.Fatalf("reading Backup %s: %v", name, err)
	}
	b.Status.Phase = phase
	if phase == v1.BackupPhaseFailed {
		b.Status.Error = "simulated failure"
	}
	if err := h.env.Client.Status().Update(h.ctx, &b); err != nil {
		h.t.Fatalf("setting Backup %s to %s: %v", name, phase, err)
	}
}

// events drains the reasons recorded so far.
func (h *harness) events() []string {
	var out []string
	for {
		select {
		case e := <-h.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// slotAfter is the first hourly slot after t, and childName the Backup name for it.
func slotAfter(t *testing.T, after time.Time) time.Time {
	t.Helper()
	s, err := schedule.Parse(hourly)
	if err != nil {
		t.Fatal(err)
	}
	return s.Next(after)
}

// firstSlot is the first slot after the schedule's creation.
func (h *harness) firstSlot(name string) time.Time {
	return slotAfter(h.t, h.schedule(name).CreationTimestamp.Time)
}

func childName(schedule string, slot time.Time) string {
	return (&v1.ScheduledBackup{ObjectMeta: metav1.ObjectMeta{Name: schedule}}).BackupName(slot)
}

// eventually polls cond for up to a minute.
func (h *harness) eventually(what string, cond func(ctx context.Context) (bool, error)) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(h.ctx, time.Minute)
	defer cancel()
	if err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, cond); err != nil {
		h.t.Fatalf("%s: %v\nkube-controller-manager log:\n%s", what, err, h.env.ControllerManagerLog())
	}
}

// gone reports whether the object no longer exists.
func (h *harness) gone(obj client.Object) func(ctx context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		err := h.env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func namespaceEvents(h *harness, involved string) []corev1.Event {
	h.t.Helper()
	var list corev1.EventList
	if err := h.env.Client.List(h.ctx, &list, client.InNamespace(h.ns)); err != nil {
		h.t.Fatalf("listing Events: %v", err)
	}
	var out []corev1.Event
	for _, e := range list.Items {
		if e.InvolvedObject.Name == involved {
			out = append(out, e)
		}
	}
	return out
}

func boolPtr(b bool) *bool { return &b }

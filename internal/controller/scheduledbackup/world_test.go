package scheduledbackup_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/scheduledbackup"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/schedule"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/ctrlworld"
)

// hourly is the cron of most tests: every hour at minute 0, second 0.
const hourly = "0 0 * * * *"

// world drives the reconciler directly against the real API server, one namespace per test, with
// a fake clock the test advances.
type world struct {
	*ctrlworld.World
	// skipDefault is the operator's --schedule-skip-immediately.
	skipDefault bool
}

func newWorld(t *testing.T) *world {
	t.Helper()
	return &world{World: ctrlworld.New(t, shared)}
}

// newNightly is a world with the Cluster db and the hourly ScheduledBackup nightly (changed by
// mutate), looked at once, and nightly's first slot.
func newNightly(t *testing.T, mutate ...func(*v1.ScheduledBackupSpec)) (*world, time.Time) {
	t.Helper()
	w := newWorld(t)
	w.createCluster("db")
	w.createSchedule("nightly", mutate...)
	w.reconcile("nightly")
	return w, w.firstSlot("nightly")
}

// reconciler is a fresh reconciler over c, as an operator process would build after a restart.
func (w *world) reconciler(c client.Client) *scheduledbackup.Reconciler {
	return &scheduledbackup.Reconciler{Client: c, APIReader: c, Recorder: w.Recorder, Clock: w.Clock,
		SkipImmediatelyDefault: w.skipDefault}
}

// reconcile runs one reconcile of name with a fresh reconciler and fails the test on error.
func (w *world) reconcile(name string) ctrl.Result {
	w.T.Helper()
	res, err := w.reconcileWith(w.Client, name)
	check.Must(w.T, err)
	return res
}

func (w *world) reconcileWith(c client.Client, name string) (ctrl.Result, error) {
	return w.reconciler(c).Reconcile(w.Ctx, w.request(name))
}

// request is the reconcile request of the named ScheduledBackup.
func (w *world) request(name string) ctrl.Request {
	return ctrl.Request{NamespacedName: w.Key(name)}
}

// createSchedule creates an hourly ScheduledBackup of Cluster "db"; the API server applies the
// schema defaults.
func (w *world) createSchedule(name string, mutate ...func(*v1.ScheduledBackupSpec)) *v1.ScheduledBackup {
	w.T.Helper()
	sb := &v1.ScheduledBackup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.NS},
		Spec: v1.ScheduledBackupSpec{Schedule: hourly, Cluster: v1.LocalObjectReference{Name: "db"}}}
	for _, m := range mutate {
		m(&sb.Spec)
	}
	w.Create(sb)
	return sb
}

// createCluster creates the Cluster object name (no controller runs it).
func (w *world) createCluster(name string) *unstructured.Unstructured {
	w.T.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1.GroupVersion.String(), "kind": "Cluster",
		"metadata": map[string]any{"name": name, "namespace": w.NS},
		"spec":     map[string]any{"instances": int64(3), "storage": map[string]any{"size": "1Gi"}},
	}}
	w.Create(u)
	return u
}

func (w *world) schedule(name string) *v1.ScheduledBackup {
	return ctrlworld.Get[v1.ScheduledBackup](w.World, name)
}

func (w *world) backup(name string) *v1.Backup { return ctrlworld.Get[v1.Backup](w.World, name) }

// updateSpec changes a ScheduledBackup's spec as a user would.
func (w *world) updateSpec(name string, mutate func(*v1.ScheduledBackupSpec)) {
	w.T.Helper()
	sb := w.schedule(name)
	mutate(&sb.Spec)
	check.Must(w.T, w.Client.Update(w.Ctx, sb))
}

// backups lists the Backups of the namespace by name.
func (w *world) backups() map[string]v1.Backup {
	w.T.Helper()
	var list v1.BackupList
	check.Must(w.T, w.Client.List(w.Ctx, &list, client.InNamespace(w.NS)))
	out := map[string]v1.Backup{}
	for _, b := range list.Items {
		out[b.Name] = b
	}
	return out
}

// wantBackups fails unless the namespace holds exactly the named Backups.
func (w *world) wantBackups(names ...string) map[string]v1.Backup {
	w.T.Helper()
	got := w.backups()
	if len(got) != len(names) {
		w.T.Fatalf("Backups %v, want exactly %v", keys(got), names)
	}
	for _, n := range names {
		if _, ok := got[n]; !ok {
			w.T.Fatalf("Backups %v, want exactly %v", keys(got), names)
		}
	}
	return got
}

// setPhase plays the Backup controller: it writes a phase through the status subresource.
func (w *world) setPhase(name string, phase v1.BackupPhase) {
	w.T.Helper()
	b := w.backup(name)
	b.Status.Phase = phase
	if phase == v1.BackupPhaseFailed {
		b.Status.Error = "simulated failure"
	}
	w.UpdateStatus(b)
}

// slotAfter is the first hourly slot after t.
func slotAfter(t *testing.T, after time.Time) time.Time {
	t.Helper()
	s, err := schedule.Parse(hourly)
	check.Must(t, err)
	return s.Next(after)
}

// firstSlot is the first slot after the schedule's creation.
func (w *world) firstSlot(name string) time.Time {
	return slotAfter(w.T, w.schedule(name).CreationTimestamp.Time)
}

// childName is the Backup name of schedule's slot.
func childName(schedule string, slot time.Time) string {
	return (&v1.ScheduledBackup{ObjectMeta: metav1.ObjectMeta{Name: schedule}}).BackupName(slot)
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func boolPtr(b bool) *bool { return &b }

func int32Ptr(v int32) *int32 { return &v }

package plugin_test

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/plugin"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

func (w *world) newSchedule(t *testing.T, name, cluster string, mutate func(*v1.ScheduledBackup)) {
	t.Helper()
	sb := &v1.ScheduledBackup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns},
		Spec: v1.ScheduledBackupSpec{Schedule: "0 0 2 * * *", Cluster: v1.LocalObjectReference{Name: cluster}}}
	check.Must(t, w.env.Client.Create(context.Background(), sb))
	if mutate != nil {
		mutate(sb)
		check.Must(t, w.env.Client.Status().Update(context.Background(), sb))
	}
}

func (w *world) schedule(t *testing.T, name string) *v1.ScheduledBackup {
	t.Helper()
	var sb v1.ScheduledBackup
	check.Must(t, w.env.Client.Get(context.Background(), client.ObjectKey{Namespace: w.ns, Name: name}, &sb))
	return &sb
}

// TestScheduleVerbs: pause suspends; unpause resumes, with --skip-immediately set in the same
// patch when given (true or false) and the field untouched when not; list shows the schedules of
// one Cluster with their next, last and last skipped runs; a missing schedule says what to do.
func TestScheduleVerbs(t *testing.T) {
	w := newWorld(t)
	last := metav1.NewTime(testNow.Add(-6 * time.Hour))
	next := metav1.NewTime(testNow.Add(18 * time.Hour))
	w.newSchedule(t, "nightly", "db", func(sb *v1.ScheduledBackup) {
		sb.Status.LastScheduleTime, sb.Status.NextScheduleTime = &last, &next
	})
	w.newSchedule(t, "other", "elsewhere", nil)

	if out := w.mustRun(t, "schedule", "pause", "nightly"); out != "scheduledbackup/nightly paused\n" {
		t.Errorf("pause printed %q", out)
	}
	if sb := w.schedule(t, "nightly"); !sb.IsSuspended() {
		t.Fatal("pause did not suspend the schedule")
	}
	list := w.mustRun(t, "schedule", "list", "db")
	for _, want := range []string{"NAME", "nightly", "db", "0 0 2 * * *", "true", "2026-11-22T02:00:00Z (6h0m0s ago)", "operator default"} {
		if !strings.Contains(list, want) {
			t.Errorf("list lacks %q:\n%s", want, list)
		}
	}
	if strings.Contains(list, "other") {
		t.Errorf("list of db shows another Cluster's schedule:\n%s", list)
	}

	for _, tc := range []struct {
		rule string
		args []string
		want *bool
	}{
		{"unpause alone leaves skipImmediately as it is", nil, nil},
		{"--skip-immediately sets it true in the same patch", []string{"--skip-immediately"}, ptrTo(true)},
		{"--skip-immediately=false sets it false", []string{"--skip-immediately=false"}, ptrTo(false)},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			w.mustRun(t, "schedule", "pause", "nightly")
			before := w.schedule(t, "nightly").Spec.SkipImmediately
			out := w.mustRun(t, append([]string{"schedule", "unpause", "nightly"}, tc.args...)...)
			sb := w.schedule(t, "nightly")
			if out != "scheduledbackup/nightly unpaused\n" || sb.IsSuspended() {
				t.Fatalf("unpause printed %q, suspended %v", out, sb.IsSuspended())
			}
			want := before
			if tc.want != nil {
				want = tc.want
			}
			if (want == nil) != (sb.Spec.SkipImmediately == nil) || (want != nil && *want != *sb.Spec.SkipImmediately) {
				t.Errorf("skipImmediately %v, want %v", sb.Spec.SkipImmediately, want)
			}
		})
	}
	if out, err := w.run("schedule", "unpause", "missing"); err == nil || !strings.Contains(err.Error(), "kubectl get scheduledbackups") {
		t.Errorf("a missing schedule: %v (%s)", err, out)
	}
}

// TestSchedulePatchIsOnePatch: unpause with a skip writes both fields in one merge patch.
func TestSchedulePatchIsOnePatch(t *testing.T) {
	skip := true
	if got := string(plugin.SchedulePatch(false, &skip)); got != `{"spec":{"suspend":false,"skipImmediately":true}}` {
		t.Errorf("patch %s", got)
	}
	if got := string(plugin.SchedulePatch(true, nil)); got != `{"spec":{"suspend":true}}` {
		t.Errorf("patch %s", got)
	}
}

// TestGeneratedBackupNameFits63: the backup verb's generated name fits a Backup name for Cluster
// names up to the longest allowed, and the API server accepts it.
func TestGeneratedBackupNameFits63(t *testing.T) {
	w := newWorld(t)
	for _, n := range []int{10, 48, 49, 50, 63} {
		cluster := strings.Repeat("c", n-1) + "d"
		name := plugin.GeneratedBackupName(cluster, testNow)
		if len(name) > 63 || !strings.HasSuffix(name, "-20261122080000") {
			t.Errorf("cluster of %d characters: %q (%d characters)", n, name, len(name))
		}
		if n == 50 {
			check.Must(t, w.env.Client.Create(context.Background(), w.bareCluster(cluster, 1)))
			out := w.mustRun(t, "backup", cluster)
			if !strings.Contains(out, name) {
				t.Errorf("backup of a 50-character Cluster printed %q", out)
			}
		}
	}
}

func ptrTo[T any](v T) *T { return &v }

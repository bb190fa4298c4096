package scheduledbackup

import (
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// created is when the test schedules were created; their cron is hourly at minute 0.
var created = time.Date(2026, 5, 1, 0, 30, 0, 0, time.UTC)

func hour(h int) time.Time { return time.Date(2026, 5, 1, h, 0, 0, 0, time.UTC) }

func testSchedule() *v1.ScheduledBackup {
	return &v1.ScheduledBackup{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "ns", UID: "sb-uid", Generation: 1,
			CreationTimestamp: metav1.NewTime(created)},
		Spec: v1.ScheduledBackupSpec{
			Schedule: "0 0 * * * *", Cluster: v1.LocalObjectReference{Name: "db"},
			Suspend: ptr.To(false), Immediate: ptr.To(false), SkipImmediately: ptr.To(false),
			BackupOwnerReference: v1.BackupOwnerReferenceNone, Method: v1.BackupMethodClone,
			Target: v1.BackupTargetPreferStandby, Online: ptr.To(true),
			Timeout: &metav1.Duration{Duration: 6 * time.Hour}, FailedBackupsHistoryLimit: ptr.To[int32](3),
		},
	}
}

// checkedAt marks the schedule as checked once at t, as the first reconcile leaves it.
func checkedAt(t time.Time) func(*v1.ScheduledBackup) {
	return func(sb *v1.ScheduledBackup) {
		sb.Status.LastCheckTime = timePtr(t)
		sb.Status.ObservedGeneration = sb.Generation
	}
}

func scheduledAt(t time.Time) func(*v1.ScheduledBackup) {
	return func(sb *v1.ScheduledBackup) {
		checkedAt(t)(sb)
		sb.Status.LastScheduleTime = timePtr(t)
	}
}

func testChild(name string, phase v1.BackupPhase, labels ...string) v1.Backup {
	b := v1.Backup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns",
		Labels: map[string]string{v1.ScheduledBackupLabel: "nightly"}}}
	for i := 0; i+1 < len(labels); i += 2 {
		b.Labels[labels[i]] = labels[i+1]
	}
	b.Status.Phase = phase
	return b
}

type decideCase struct {
	rule       string
	sb         []func(*v1.ScheduledBackup)
	children   []v1.Backup
	noCluster  bool
	occupant   *v1.Backup
	now        time.Time
	minGap     time.Duration // the operator's --min-schedule-interval (0: none)
	wantCreate string
	wantEvents []string
	check      func(t *testing.T, d Decision)
}

func runDecideCases(t *testing.T, cases []decideCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			sb := testSchedule()
			for _, m := range c.sb {
				m(sb)
			}
			o := Observation{Now: c.now, Schedule: sb, Children: c.children, Occupant: c.occupant, Fresh: true, MinInterval: c.minGap,
				Cluster: &v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns", UID: "cluster-uid"}}}
			if c.noCluster {
				o.Cluster = nil
			}
			before := sb.DeepCopy()
			d := Decide(o)
			if !statusEqual(before.Status, sb.Status) {
				t.Fatal("decide modified its input")
			}
			gotCreate := ""
			if d.Create != nil {
				gotCreate = d.Create.Name
			}
			if gotCreate != c.wantCreate {
				t.Fatalf("created %q, want %q", gotCreate, c.wantCreate)
			}
			var reasons []string
			if d.Create != nil {
				reasons = append(reasons, d.CreateEvent.Kind.Reason)
			}
			for _, e := range append(slices.Clone(d.Events), d.PruneEvents...) {
				reasons = append(reasons, e.Kind.Reason)
			}
			if !slices.Equal(reasons, c.wantEvents) {
				t.Fatalf("events %v, want %v (%+v)", reasons, c.wantEvents, d.Events)
			}
			if c.check != nil {
				c.check(t, d)
			}
		})
	}
}

func wantReady(status metav1.ConditionStatus, reason string) func(*testing.T, Decision) {
	return func(t *testing.T, d Decision) {
		t.Helper()
		c := meta.FindStatusCondition(d.Status.Conditions, v1.ConditionReady)
		if c == nil || c.Status != status || c.Reason != reason {
			t.Fatalf("Ready = %+v, want %s/%s", c, status, reason)
		}
	}
}

func wantTime(t *testing.T, what string, got *metav1.Time, want time.Time) {
	t.Helper()
	if want.IsZero() {
		if got != nil {
			t.Fatalf("%s = %v, want unset", what, got)
		}
		return
	}
	if got == nil || !got.Equal(&metav1.Time{Time: want}) {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}

func all(checks ...func(*testing.T, Decision)) func(*testing.T, Decision) {
	return func(t *testing.T, d Decision) {
		t.Helper()
		for _, c := range checks {
			c(t, d)
		}
	}
}

func contains(what, sub string) func(*testing.T, Decision) {
	return func(t *testing.T, d Decision) {
		t.Helper()
		for _, e := range d.Events {
			if strings.Contains(e.Message, sub) {
				return
			}
		}
		t.Fatalf("no event message contains %q (%s): %+v", sub, what, d.Events)
	}
}

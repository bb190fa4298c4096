package backup

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// recordingGate holds every Backup it is asked about for wait, and records the calls.
type recordingGate struct {
	wait     time.Duration
	asked    []string
	released []string
}

func (g *recordingGate) Hold(b types.NamespacedName, _ time.Time) (time.Duration, bool) {
	g.asked = append(g.asked, b.Name)
	return g.wait, true
}

func (g *recordingGate) Release(b types.NamespacedName) { g.released = append(g.released, b.Name) }

// TestGateHoldsOnlyBackupsNotStarted: the Gate is asked about a Backup not started yet, and its
// answer is the reconcile's; a Backup already started, ended or being deleted is released, never
// held; a reconciler without a Gate holds nothing.
func TestGateHoldsOnlyBackupsNotStarted(t *testing.T) {
	now := bkT0
	gate := &recordingGate{wait: 5 * time.Second}
	r := &Reconciler{Gate: gate, Clock: clocktesting.NewFakePassiveClock(now)}
	backup := func(name string, phase v1.BackupPhase, deleting bool) *v1.Backup {
		b := &v1.Backup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
		b.Status.Phase = phase
		if deleting {
			b.DeletionTimestamp = &metav1.Time{Time: now}
		}
		return b
	}
	if wait, held := r.holdNew(backup("new", "", false)); !held || wait != 5*time.Second {
		t.Fatalf("a new Backup: %v %v, want held 5s", wait, held)
	}
	for _, b := range []*v1.Backup{backup("running", v1.BackupPhaseRunning, false),
		backup("failed", v1.BackupPhaseFailed, false), backup("deleting", "", true)} {
		if _, held := r.holdNew(b); held {
			t.Fatalf("%s held", b.Name)
		}
	}
	if !slices.Equal(gate.asked, []string{"new"}) || !slices.Equal(gate.released, []string{"running", "failed", "deleting"}) {
		t.Errorf("asked about %v, released %v", gate.asked, gate.released)
	}
	if _, held := (&Reconciler{Clock: r.Clock}).holdNew(backup("new", "", false)); held {
		t.Fatal("held without a Gate")
	}
}

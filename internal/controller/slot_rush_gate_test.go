package controller

import (
	"slices"
	"testing"
	"time"
)

// TestBackupGateHoldsDuringARushAndWakesAtItsEnd: through its BackupGate, the rush holds a Backup
// not started yet while a schedule's Backup is due, for the rush's limit at most, and wakes it on
// the Backup wake channel, not the schedules', when the rush ends. (Which Backups the Backup
// controller asks about is its own rule, tested in internal/controller/backup.)
func TestBackupGateHoldsDuringARushAndWakesAtItsEnd(t *testing.T) {
	slot := hour(1)
	rush := newRush()
	gate := rush.BackupGate()
	gate.Wakeups()
	rush.expect(key("due"), slot, slot.Add(-time.Minute))
	if wait, held := gate.Hold(key("new"), slot); !held || wait != 5*time.Second {
		t.Fatalf("a new Backup during the rush: %v %v, want held", wait, held)
	}
	rush.expect(key("due"), hour(2), slot.Add(time.Second))
	if got := woken(rush, heldBackup); !slices.Equal(got, []string{"new"}) {
		t.Fatalf("Backups woken %v, want new", got)
	}
	if got := woken(rush); len(got) != 0 {
		t.Fatalf("schedules woken %v, want none", got)
	}
	if _, held := gate.Hold(key("new"), slot.Add(2*time.Second)); held {
		t.Fatal("held after the rush")
	}
}

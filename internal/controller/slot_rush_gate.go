package controller

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/backup"
)

// BackupGate is the Backup controller's side of r: it holds the first steps on Backups not started
// yet during a rush, and wakes them when the rush ends.
func (r *SlotRush) BackupGate() backup.WakingGate { return slotRushGate{r} }

type slotRushGate struct{ rush *SlotRush }

func (g slotRushGate) Hold(b types.NamespacedName, now time.Time) (time.Duration, bool) {
	return g.rush.hold(heldObject{heldBackup, b}, now, time.Time{}, false)
}

func (g slotRushGate) Release(b types.NamespacedName) { g.rush.wrote(heldObject{heldBackup, b}) }

// Wakeups is the rush's Backup wake channel; asking for it is what makes the rush count the
// Backups created in it until this controller starts them.
func (g slotRushGate) Wakeups() <-chan event.GenericEvent { return g.rush.wakeChannel(heldBackup) }

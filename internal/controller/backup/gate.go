package backup

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// StartGate lets another controller of the process hold the first steps on Backups not started
// yet, while work it ranks first (creating the Backups many schedules share a slot for) goes on.
// Holding only delays: what is written is decided when the Backup is reconciled after the hold.
type StartGate interface {
	// Hold says whether the first steps on the Backup backup, not started yet, wait at now, and
	// for how long at most.
	Hold(backup types.NamespacedName, now time.Time) (time.Duration, bool)
	// Release says the Backup no longer waits for its first steps: it has started, ended, is
	// being deleted, or is gone.
	Release(backup types.NamespacedName)
}

// WakingGate is a StartGate that also wakes the Backups it held when they may go on, before
// their hold ends.
type WakingGate interface {
	StartGate
	// Wakeups names the held Backups to reconcile again. SetupWithManager takes it once.
	Wakeups() <-chan event.GenericEvent
}

// holdNew asks the Gate whether the first steps on b wait, and for how long; a Backup started
// already or being deleted is released instead. Without a Gate nothing waits.
func (r *Reconciler) holdNew(b *v1.Backup) (time.Duration, bool) {
	if r.Gate == nil {
		return 0, false
	}
	key := client.ObjectKeyFromObject(b)
	if b.Status.Phase != "" || b.DeletionTimestamp != nil {
		r.Gate.Release(key)
		return 0, false
	}
	return r.Gate.Hold(key, r.Clock.Now())
}

// release tells the Gate a Backup is gone.
func (r *Reconciler) release(key types.NamespacedName) {
	if r.Gate != nil {
		r.Gate.Release(key)
	}
}

// watchWakeups reconciles the Backups a WakingGate wakes.
func (r *Reconciler) watchWakeups(b *builder.Builder) *builder.Builder {
	if w, ok := r.Gate.(WakingGate); ok {
		return b.WatchesRawSource(source.Channel(w.Wakeups(), &handler.EnqueueRequestForObject{}))
	}
	return b
}

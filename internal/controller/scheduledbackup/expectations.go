package scheduledbackup

import (
	"maps"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
)

// expectations remembers, per ScheduledBackup, this process's own writes the cache may not show
// yet: the resourceVersion its last write produced and the Backups it created. While the cache
// shows all of them, a decision to create a Backup can be trusted without re-reading the API
// server; otherwise the reconciler re-reads. A process that just started has none: its cache was
// filled by a list taken after every write of any earlier process.
type expectations struct {
	mu sync.Mutex
	m  map[types.NamespacedName]*expectation
}

type expectation struct {
	resourceVersion string
	created         map[string]bool
	// unrecorded are created Backups whose slot is not written to status yet, each with its slot
	// and the Events of its decision (the create's first), emitted once the status records it
	// (see Decision.statusCanWait).
	unrecorded map[string]unrecordedCreate
	// deleted are the Backups (by UID) this process deleted or found gone while pruning, until the
	// cache shows them gone or being deleted. Only an optimisation: a process that forgot them
	// deletes them again, and finds them gone.
	deleted map[types.UID]bool
}

func (e *expectations) get(key types.NamespacedName) *expectation {
	if e.m == nil {
		e.m = map[types.NamespacedName]*expectation{}
	}
	x := e.m[key]
	if x == nil {
		x = &expectation{created: map[string]bool{}, unrecorded: map[string]unrecordedCreate{}, deleted: map[types.UID]bool{}}
		e.m[key] = x
	}
	return x
}

// satisfied reports whether the cached sb and children show every write expected for sb, and
// drops the created Backups the cache now shows.
func (e *expectations) satisfied(sb *v1.ScheduledBackup, children []v1.Backup) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	x := e.get(types.NamespacedName{Namespace: sb.Namespace, Name: sb.Name})
	for i := range children {
		delete(x.created, children[i].Name)
	}
	return len(x.created) == 0 && (x.resourceVersion == "" || x.resourceVersion == sb.ResourceVersion)
}

// wrote records the resourceVersion sb has after this process wrote or freshly read it.
func (e *expectations) wrote(sb *v1.ScheduledBackup) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.get(types.NamespacedName{Namespace: sb.Namespace, Name: sb.Name}).resourceVersion = sb.ResourceVersion
}

// created records a Backup this process created for sb.
func (e *expectations) created(sb *v1.ScheduledBackup, backup string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.get(types.NamespacedName{Namespace: sb.Namespace, Name: sb.Name}).created[backup] = true
}

// pending are the Backups this process created for sb that the cache did not show at the last
// satisfied call, sorted.
func (e *expectations) pending(sb *v1.ScheduledBackup) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	x := e.get(types.NamespacedName{Namespace: sb.Namespace, Name: sb.Name})
	out := make([]string, 0, len(x.created))
	for name := range x.created {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// gone stops waiting for a created Backup the API server no longer shows as sb's.
func (e *expectations) gone(sb *v1.ScheduledBackup, backup string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.get(types.NamespacedName{Namespace: sb.Namespace, Name: sb.Name}).created, backup)
}

// unrecordedCreate is a Backup created for a slot its schedule's status does not record yet.
type unrecordedCreate struct {
	slot   time.Time
	events []kit.Event
}

// unrecorded records a Backup this process created for sb's slot, and the Events of the decision
// that created it (the create's first), until a status records the slot.
func (e *expectations) unrecorded(sb *v1.ScheduledBackup, backup string, slot time.Time, events []kit.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.get(types.NamespacedName{Namespace: sb.Namespace, Name: sb.Name}).unrecorded[backup] = unrecordedCreate{slot, events}
}

// unrecordedOf are the slots, by Backup name, this process created for sb and has not seen
// recorded in its status yet.
func (e *expectations) unrecordedOf(sb *v1.ScheduledBackup) map[string]time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := map[string]time.Time{}
	for name, u := range e.get(types.NamespacedName{Namespace: sb.Namespace, Name: sb.Name}).unrecorded {
		out[name] = u.slot
	}
	return out
}

// recorded takes sb's status, as just written or found already so, and returns the Events of the
// creates whose slot it records (lastScheduleTime at or after it), in the order of their slots,
// each once; those are no longer unrecorded.
func (e *expectations) recorded(sb *v1.ScheduledBackup) []kit.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	last := sb.Status.LastScheduleTime
	if last == nil {
		return nil
	}
	x := e.get(types.NamespacedName{Namespace: sb.Namespace, Name: sb.Name})
	var done []unrecordedCreate
	for name, u := range x.unrecorded {
		if !u.slot.After(last.UTC()) {
			done = append(done, u)
			delete(x.unrecorded, name)
		}
	}
	slices.SortFunc(done, func(a, b unrecordedCreate) int { return a.slot.Compare(b.slot) })
	var out []kit.Event
	for _, u := range done {
		out = append(out, notIn(u.events, out)...)
	}
	return out
}

// deleted records a Backup of sb this process deleted, or found gone, while pruning.
func (e *expectations) deleted(sb *v1.ScheduledBackup, uid types.UID) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.get(types.NamespacedName{Namespace: sb.Namespace, Name: sb.Name}).deleted[uid] = true
}

// deletedOf are the Backups this process deleted that the cached children still show as not
// being deleted; the others are forgotten, since the cache has caught up with their deletion.
func (e *expectations) deletedOf(sb *v1.ScheduledBackup, children []v1.Backup) map[types.UID]bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	x := e.get(types.NamespacedName{Namespace: sb.Namespace, Name: sb.Name})
	out := map[types.UID]bool{}
	for i := range children {
		if uid := children[i].UID; x.deleted[uid] && children[i].DeletionTimestamp == nil {
			out[uid] = true
		}
	}
	x.deleted = out
	return maps.Clone(out)
}

// forget drops what is remembered about a ScheduledBackup that is gone.
func (e *expectations) forget(key types.NamespacedName) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.m, key)
}

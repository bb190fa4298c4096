package scheduledbackup

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/schedule"
)

const (
	// clusterRetryInterval is how soon a slot waiting for its missing Cluster is tried again; a
	// Cluster being created wakes the schedule at once anyway.
	clusterRetryInterval = 30 * time.Second
	// maxRequeueInterval bounds every wait, so a wall clock that steps does not strand a schedule.
	maxRequeueInterval = 10 * time.Minute
)

// Observation is everything the ScheduledBackup decision reads.
type Observation struct {
	Now      time.Time
	Schedule *v1.ScheduledBackup
	// Children are the Backups labelled for Schedule.
	Children []v1.Backup
	// Cluster is nil when it does not exist.
	Cluster *v1.Cluster
	// Occupant is a Backup at the name about to be created that does not carry Schedule's label.
	Occupant *v1.Backup
	// Fresh says Schedule and Children were read from the API server rather than the cache.
	Fresh bool
	// Unrecorded are the slots, by Backup name, this process created and has not written to
	// status yet: adopting one of them is recording it, not adoption after a crash, and each
	// counts as run even if its Backup is gone.
	Unrecorded map[string]time.Time
	// MinInterval is the operator's --min-schedule-interval: a schedule whose slots come closer
	// than this runs nothing. Zero accepts any schedule.
	MinInterval time.Duration
	// SkipImmediatelyDefault is the operator's --schedule-skip-immediately: what an unset
	// spec.skipImmediately means.
	SkipImmediatelyDefault bool
	// Deleted are the Backups (by UID) this process deleted that Children, read from a lagging
	// cache, still show as not being deleted: pruning treats them as the API server does, gone.
	Deleted map[types.UID]bool
}

// Decision is what the reconciler does for one ScheduledBackup, in this order: create the
// Backup, patch the status, reset spec.skipImmediately, emit Events, prune history and emit
// PruneEvents, requeue.
type Decision struct {
	Create               *v1.Backup
	CreateEvent          kit.Event
	Status               v1.ScheduledBackupStatus
	ResetSkipImmediately bool
	Events               []kit.Event
	Prune                []Prune
	PruneEvents          []kit.Event
	RequeueAfter         time.Duration
	// MissedSlots are the slots the status write passes over without a Backup (missedSlots),
	// counted once that write succeeded.
	MissedSlots int
}

// Prune is one Backup object to delete beyond a history limit. Its remote data is never
// deleted: when KeepFirst, it is set to deletionPolicy keep before the delete; either way the
// delete holds only for the version read (or just written), so a finalizer or a policy set
// meanwhile makes it fail and the Backup is decided on again.
type Prune struct {
	Backup    *v1.Backup
	KeepFirst bool
}

// needsFreshLook says the decision writes from a cached view: unless the cache shows every write
// of this process, gather re-reads the schedule and the Backups it created from the API server
// before the decision is taken. From a view behind the process's own writes, a create could make a Backup
// that must not exist, and a status patch would only fail its optimistic lock and be retried.
func (d Decision) needsFreshLook(o Observation) bool {
	return !o.Fresh && d.writes(o)
}

// writes says the decision writes anything: a Backup, the status, the spec, a deletion or an Event.
func (d Decision) writes(o Observation) bool {
	return d.Create != nil || d.ResetSkipImmediately || len(d.Prune) > 0 || len(d.Events) > 0 ||
		!statusEqual(o.Schedule.Status, d.Status)
}

// maxOwedSlots is how many earlier slots this process created a schedule's status may owe when a
// decision creating the next slot's Backup leaves the status to a later look: with one owed, the
// status then owes two (a slot ran late, and the look recording the previous one has not come);
// with more, the status is written at once. So a controller that never catches up still records
// its slots, moves lastCheckTime and prunes, at every third slot at worst.
const maxOwedSlots = 1

// statusCanWait says that everything a decision creating a scheduled Backup writes besides the
// Backup may be left to a later look, once the other schedules sharing the slot have created
// theirs (see queue.go): the status, the pruning and the Events. That look decides again from the
// same status, so it records the slot (derived from the Backup itself, or from the slots this
// process created and has not recorded, Observation.Unrecorded) and prunes the history it then
// finds. The decision's Events wait with the create and are emitted with the status write that
// records its slot, once each with the Events of that write's own decision (the create's, a
// failure or missed slots this decision saw, even when a newer Backup's end is what the status
// then shows); like that write, they are lost if the process stops before it, and the next
// process adopts the newest Backup. Written later, the status folds into the write that records
// the Backup's end when that comes first. Not for the immediate Backup, nor while skipImmediately
// is to be reset, nor when the status already owes more than maxOwedSlots earlier slots.
func (d Decision) statusCanWait(o Observation) bool {
	return d.Create != nil && d.Create.Labels[v1.ImmediateBackupLabel] != "true" && !d.ResetSkipImmediately &&
		len(o.Unrecorded) <= maxOwedSlots
}

// slotTarget is the run a schedule wants now: a cron slot or the immediate Backup.
type slotTarget struct {
	slot      time.Time
	immediate bool
}

// planner accumulates one decision.
type planner struct {
	o         Observation
	sb        *v1.ScheduledBackup
	now       time.Time // o.Now in UTC on a whole second
	kids      children
	plan      schedule.Plan
	evaluated bool // a run was due or skipped, so lastCheckTime moves
	d         Decision
}

// Decide is the pure decision of the ScheduledBackup controller: what o's schedule does now.
func Decide(o Observation) Decision {
	sb := o.Schedule
	p := &planner{o: o, sb: sb, now: o.Now.UTC().Truncate(time.Second)}
	p.d.Status = *sb.Status.DeepCopy()
	p.d.Status.ObservedGeneration = sb.Generation
	sched, problem := parseScheduledBackup(sb)
	switch {
	case problem != "":
		p.setReady(false, reasonInvalidSchedule, problem)
		p.d.Status.NextScheduleTime = nil
	case sb.IsSuspended():
		p.setReady(false, reasonSuspended, "spec.suspend is true: no new Backups are created")
		p.d.Status.NextScheduleTime = nil
	case o.MinInterval > 0 && sched.MinInterval(p.now) < o.MinInterval:
		p.setReady(false, reasonTooFrequent, fmt.Sprintf("spec.schedule %q fires every %s at the closest, more often than the operator allows (--min-schedule-interval %s): no Backup is created until the schedule is changed",
			sb.Spec.Schedule, sched.MinInterval(p.now), o.MinInterval))
		p.d.Status.NextScheduleTime = nil
	default:
		p.evaluate(sched)
	}
	p.transitionEvents()
	return p.d
}

// parseScheduledBackup parses the schedule and checks that the name makes valid child names and
// label values (admission already enforces both); the problem is empty when all is well.
func parseScheduledBackup(sb *v1.ScheduledBackup) (schedule.Schedule, string) {
	if errs := validation.IsValidLabelValue(sb.Name); len(errs) > 0 {
		return schedule.Schedule{}, fmt.Sprintf("the name %q is not a valid label value: %v", sb.Name, errs)
	}
	child := sb.BackupName(time.Time{})
	if errs := append(validation.IsDNS1123Subdomain(child), validation.IsValidLabelValue(child)...); len(errs) > 0 {
		return schedule.Schedule{}, fmt.Sprintf("the name %q does not make valid Backup names: %v", sb.Name, errs)
	}
	sched, err := schedule.Parse(sb.Spec.Schedule)
	if err != nil {
		return schedule.Schedule{}, fmt.Sprintf("invalid spec.schedule: %v", err)
	}
	return sched, ""
}

func (p *planner) evaluate(sched schedule.Schedule) {
	p.kids = newChildren(p.sb, p.o.Children)
	p.anchor()
	p.setDegraded()
	p.plan = sched.Plan(p.history(), p.now)
	switch {
	case !p.sb.WantsSkipImmediately(p.o.SkipImmediatelyDefault):
		p.run()
	case p.skipAlreadyRecorded():
		// The skip was written before a crash or a conflict; only the reset is missing.
		p.d.ResetSkipImmediately = true
		p.run()
	default:
		p.skipImmediately(sched)
	}
	p.prune()
	p.stampCheck()
	p.d.MissedSlots = missedSlots(sched, p.o, p.d.Status)
}

// anchor records the newest child's slot as lastScheduleTime when status lags behind it: the
// operator created that Backup and stopped before its status patch. The slot is never run again.
// A slot this process created and has not recorded yet counts too, even if its Backup was deleted
// meanwhile.
func (p *planner) anchor() {
	if newest, ok := p.kids.newestSlotNotAfter(p.now); ok {
		if last := p.d.Status.LastScheduleTime; last == nil || newest.slot.After(last.UTC()) {
			p.d.Status.LastScheduleTime = timePtr(newest.slot)
			if _, ours := p.o.Unrecorded[newest.backup.Name]; !ours {
				p.d.Events = append(p.d.Events, evBackupAdopted.With(newest.backup.Name, stamp(newest.slot)))
			}
		}
	}
	for _, slot := range p.o.Unrecorded {
		if last := p.d.Status.LastScheduleTime; !slot.After(p.now) && (last == nil || slot.After(last.UTC())) {
			p.d.Status.LastScheduleTime = timePtr(slot)
		}
	}
}

func (p *planner) history() schedule.History {
	h := schedule.History{Created: p.sb.CreationTimestamp.UTC()}
	if t := p.d.Status.LastScheduleTime; t != nil {
		h.LastSchedule = t.UTC()
	}
	if t := p.d.Status.LastSkipped; t != nil {
		h.LastSkipped = t.UTC()
	}
	return h
}

// target is the run wanted now: the immediate Backup until the schedule has produced, adopted
// or skipped anything, else the due slot.
func (p *planner) target() (slotTarget, bool) {
	st := p.d.Status
	if p.sb.IsImmediate() && st.LastScheduleTime == nil && st.LastSkipped == nil && !p.kids.hasImmediate() {
		return slotTarget{slot: p.now, immediate: true}, true
	}
	if !p.plan.Due.IsZero() {
		return slotTarget{slot: p.plan.Due}, true
	}
	return slotTarget{}, false
}

// stampCheck moves lastCheckTime when a run was evaluated, anything else in status changed, or
// the schedule was never checked; a reconcile with nothing to do writes nothing.
func (p *planner) stampCheck() {
	old := p.sb.Status
	p.d.Status.LastCheckTime = old.LastCheckTime
	if p.evaluated || old.LastCheckTime == nil || !statusEqual(old, p.d.Status) {
		p.d.Status.LastCheckTime = timePtr(p.now)
	}
}

// untilNext is how long to wait for the next slot, bounded by maxRequeueInterval.
func (p *planner) untilNext() time.Duration {
	if p.plan.Next.IsZero() {
		return maxRequeueInterval
	}
	return min(p.plan.Next.Sub(p.o.Now), maxRequeueInterval)
}

func timePtr(t time.Time) *metav1.Time {
	mt := metav1.NewTime(t.UTC())
	return &mt
}

// stamp formats a slot for messages.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

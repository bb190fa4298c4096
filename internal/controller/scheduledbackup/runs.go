package scheduledbackup

import (
	"fmt"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/schedule"
)

// run decides what an active schedule does now: nothing, wait, skip a taken name, or create.
func (p *planner) run() {
	p.d.Status.NextScheduleTime = timePtr(p.plan.Next)
	p.d.RequeueAfter = p.untilNext()
	t, ok := p.target()
	if !ok {
		p.setReadyIdle()
		return
	}
	p.evaluated = true
	if running, ok := p.kids.running(); ok {
		p.deferFor(t, running)
		return
	}
	if p.o.Cluster == nil {
		p.d.Status.NextScheduleTime = timePtr(t.slot)
		p.d.RequeueAfter = min(p.d.RequeueAfter, clusterRetryInterval)
		p.setReadyIdle()
		return
	}
	if occ := p.o.Occupant; occ != nil && occ.Name == p.sb.BackupName(t.slot) {
		p.collide(t, occ)
		return
	}
	p.create(t)
}

// deferFor waits for the running child: Backups of one schedule never overlap. The child's
// completion wakes the schedule; a child that never ends is failed by its own timeout.
func (p *planner) deferFor(t slotTarget, running child) {
	p.d.Status.NextScheduleTime = timePtr(t.slot)
	phase := string(running.backup.Status.Phase)
	if phase == "" {
		phase = "new"
	}
	msg := fmt.Sprintf("the slot %s waits for Backup %s (%s) to finish", stamp(t.slot), running.backup.Name, phase)
	if p.o.Cluster == nil {
		p.setReadyIdle()
	} else {
		p.setReady(true, reasonBackupRunning, msg)
	}
	if old := p.oldCondition(v1.ConditionReady); old == nil || old.Message != msg {
		p.d.Events = append(p.d.Events, evBackupDeferred.With(stamp(t.slot), running.backup.Name, phase))
	}
}

// collide skips a slot whose name is taken by a Backup this schedule does not own; it is
// recorded as skipped so the next slot is the one scheduled.
func (p *planner) collide(t slotTarget, occ *v1.Backup) {
	p.d.Status.LastSkipped = timePtr(t.slot)
	p.d.Events = append(p.d.Events,
		evNameCollision.With(occ.Name, v1.ScheduledBackupLabel, p.sb.Name, stamp(t.slot)))
	p.setReadyIdle()
}

// create asks for the Backup of the target and records its slot.
func (p *planner) create(t slotTarget) {
	p.d.Create = buildScheduledBackup(p.sb, p.o.Cluster, t.slot, t.immediate)
	p.d.Status.LastScheduleTime = timePtr(t.slot)
	if t.immediate {
		p.d.CreateEvent = evImmediateBackupCreated.With(p.d.Create.Name)
	} else {
		p.d.CreateEvent = evBackupCreated.With(p.d.Create.Name, stamp(t.slot))
		if p.plan.Missed > 0 {
			p.d.Events = append(p.d.Events, evMissedSlots.With(missedCount(p.plan.Missed),
				stamp(p.plan.FirstMissed), stamp(t.slot)))
		}
	}
	p.setReadyIdle()
}

func missedCount(n int) string {
	if n >= schedule.MissedCountCap {
		return fmt.Sprintf("%d or more", n)
	}
	return fmt.Sprint(n)
}

// skipImmediately consumes spec.skipImmediately: whatever is due now (the immediate Backup or a
// slot) is skipped, status.lastSkipped becomes now, and the flag is reset to false.
func (p *planner) skipImmediately(sched schedule.Schedule) {
	p.evaluated = true
	p.d.ResetSkipImmediately = true
	what := "no run was due"
	if t, ok := p.target(); ok && t.immediate {
		what = "the immediate Backup is skipped"
	} else if ok {
		what = "the slot " + stamp(t.slot) + " is skipped"
	}
	p.d.Status.LastSkipped = timePtr(p.now)
	p.plan = sched.Plan(p.history(), p.now)
	p.d.Events = append(p.d.Events, evSkippedImmediately.With(what, stamp(p.plan.Next)))
	p.d.Status.NextScheduleTime = timePtr(p.plan.Next)
	p.d.RequeueAfter = p.untilNext()
	p.setReadyIdle()
}

// skipAlreadyRecorded reports whether this generation's skipImmediately was already consumed:
// status is written before the flag is reset, and any other status write at this generation with
// the flag set would have consumed it, so lastSkipped at this generation can only be that skip.
func (p *planner) skipAlreadyRecorded() bool {
	return p.sb.Status.LastSkipped != nil && p.sb.Status.ObservedGeneration == p.sb.Generation
}

// prune picks the finished children beyond the history limits, oldest first. Only Backup objects
// go, never remote data: see Prune.
func (p *planner) prune() {
	limits := []struct {
		phase v1.BackupPhase
		limit *int32
	}{
		{v1.BackupPhaseCompleted, p.sb.Spec.SuccessfulBackupsHistoryLimit},
		{v1.BackupPhaseFailed, p.sb.Spec.FailedBackupsHistoryLimit},
		// Superseded Backups never ran; they are kept like failed ones, counted on their own.
		{v1.BackupPhaseSuperseded, p.sb.Spec.FailedBackupsHistoryLimit},
	}
	for _, l := range limits {
		done := slices.DeleteFunc(p.kids.inPhase(l.phase), func(c child) bool { return p.o.Deleted[c.backup.UID] })
		if l.limit == nil || len(done) <= int(*l.limit) {
			continue
		}
		names := ""
		for i := len(done) - 1; i >= int(*l.limit); i-- {
			b := done[i].backup
			p.d.Prune = append(p.d.Prune, Prune{Backup: b, KeepFirst: keepBeforeDelete(b)})
			names += sep(names) + b.Name
		}
		p.d.PruneEvents = append(p.d.PruneEvents,
			evBackupsPruned.With(len(done)-int(*l.limit), string(l.phase), *l.limit, names))
	}
}

// keepBeforeDelete says a Backup must be set to deletionPolicy keep before its object is deleted:
// it carries the remote-cleanup finalizer, so its deletion would delete its remote data unless its
// own policy says keep. A Backup without the finalizer cannot have its remote data deleted by
// its deletion: once deleted it is gone, and no finalizer can be added to it any more.
func keepBeforeDelete(b *v1.Backup) bool {
	return controllerutil.ContainsFinalizer(b, v1.RemoteCleanupFinalizer) && b.Spec.DeletionPolicy != v1.DeletionPolicyKeep
}

func sep(s string) string {
	if s == "" {
		return ""
	}
	return ", "
}

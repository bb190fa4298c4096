package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/instances"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/failover"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
)

// failoverDeleteGrace is the grace period of the old primary's Pod deleted by a failover while its
// instance manager does not answer: the kubelet kills its containers (mysqld with them) a second
// later, even when the manager, PID 1, is stopped and cannot handle SIGTERM. Never a force delete:
// the kubelet must still kill the containers before the Pod is gone.
const failoverDeleteGrace int64 = 1

// actFailover performs the failover steps that are not status changes, through the instances'
// control API (stop IO threads, demote), the old primary's administrative interface (its fence)
// or the API server (delete the old primary's Pod, never its PVC). Every one is idempotent; a
// failure is returned and the reconcile decides again, so nothing after a failed fence happens
// (neither the deletion nor the status naming a new target, patched after this step).
func (r *Reconciler) actFailover(ctx context.Context, o *Observation, w FailoverWork) ([]kit.Event, error) {
	c := o.Cluster
	var events []kit.Event
	if len(w.StopIO) > 0 || w.Demote != nil {
		ctl, ok := r.Instances.(instances.RoleController)
		if !ok {
			return nil, fmt.Errorf("%s: the instance status source cannot change roles", w.Decision.Reason)
		}
		// At once on every replica: a receiver blocked connecting to a primary cut off from the
		// network takes its time to stop (about 2 s each, measured).
		errs := make([]error, len(w.StopIO))
		var wg sync.WaitGroup
		for i, p := range w.StopIO {
			wg.Go(func() {
				if err := ctl.StopReplicaIO(ctx, c, *p); err != nil {
					errs[i] = fmt.Errorf("stopping the IO thread of %s: %w", p.Name, err)
					return
				}
				log.FromContext(ctx).Info("stopped the replication IO thread", "instance", p.Name)
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
		if p := w.Demote; p != nil {
			if err := ctl.Demote(ctx, c, *p); err != nil {
				return nil, fmt.Errorf("demoting %s: %w", p.Name, err)
			}
			log.FromContext(ctx).Info("demoted the old primary", "instance", p.Name)
		}
	}
	if p := w.Fence; p != nil {
		ev, err := r.fenceMySQL(ctx, c, *p)
		events = append(events, ev...)
		if errors.Is(err, mysql.ErrFenceRefused) && w.DeletePod != "" {
			// The server runs but cannot be fenced: its Pod is still deleted, so that the kubelet
			// ends mysqld, and nothing else happens (no new target is named) until the fence
			// succeeds or the Pod is gone.
			if derr := r.deleteOldPrimaryPod(ctx, c, w); derr != nil {
				return events, errors.Join(err, derr)
			}
		}
		if err != nil {
			return events, err
		}
	}
	if w.DeletePod != "" {
		if err := r.deleteOldPrimaryPod(ctx, c, w); err != nil {
			return events, err
		}
	}
	return events, nil
}

// deleteOldPrimaryPod deletes the old primary's Pod (never its PVC), with the short grace period
// when its instance manager does not answer.
func (r *Reconciler) deleteOldPrimaryPod(ctx context.Context, c *v1.Cluster, w FailoverWork) error {
	pod := &corev1.Pod{}
	pod.Name, pod.Namespace = w.DeletePod, c.Namespace
	var opts []client.DeleteOption
	if w.QuickDelete {
		opts = append(opts, client.GracePeriodSeconds(failoverDeleteGrace))
	}
	deleted, err := r.deleteControlled(ctx, c, pod, "Pod", opts...)
	if err != nil {
		return fmt.Errorf("the old primary %s: %w", w.DeletePod, err)
	}
	if deleted {
		log.FromContext(ctx).Info("deleted the old primary's Pod, kept its PVC", "instance", w.DeletePod, "quick", w.QuickDelete)
	}
	return nil
}

// fenceMySQL fences the old primary's mysqld from outside (instances.MySQLFencer). A mysqld that
// cannot be reached is reported and passed over: it can collect no semi-sync acknowledgement once
// the replicas' IO threads are stopped, and its Pod is deleted. Any other failure is returned, so
// the failover goes no further until a fence succeeds or the Pod is gone; one that answered and
// refused the fence account (mysql.ErrFenceRefused) still has its Pod deleted (actFailover).
func (r *Reconciler) fenceMySQL(ctx context.Context, c *v1.Cluster, pod corev1.Pod) ([]kit.Event, error) {
	fencer, ok := r.Instances.(instances.MySQLFencer)
	if !ok {
		return nil, nil
	}
	res, err := fencer.FenceMySQL(ctx, c, pod)
	switch {
	case errors.Is(err, mysql.ErrUnreachable):
		log.FromContext(ctx).Info("the old primary's mysqld cannot be reached to fence it", "instance", pod.Name, "error", err.Error())
		return []kit.Event{evPrimaryFenceUnreachable.With(pod.Name, err.Error())}, nil
	case err != nil:
		return nil, fmt.Errorf("fencing the mysqld of %s: %w", pod.Name, err)
	}
	log.FromContext(ctx).Info("fenced the old primary's mysqld", "instance", pod.Name, "sessionsEnded", res.SessionsEnded,
		"releasedAckWaits", res.ReleasedAckWaits)
	return []kit.Event{evPrimaryFenced.With(pod.Name, res.SessionsEnded, res.ReleasedAckWaits)}, nil
}

// acts reports whether the step changes something (the status, a Pod, an instance's role), so
// the decision is taken again on a live read first. Repointing is done by the instances.
func (w FailoverWork) acts() bool {
	s := w.Decision.Step
	return s != failover.NoStep && s != failover.StepRepoint && s != failover.StepPromote
}

// stepRequeue is how soon the next reconcile follows a failover or switchover step that changed
// something (a status field, a Pod, an instance's role): the next step is decided on what it did.
// A switchover's writes stop at the demotion and resume only after the promotion that the next
// reconcile decides, so that wait is part of every client's write gap: its steps are followed
// sooner. A failover's steps (a fence that may wait for its dial timeout, Pod deletions) repeat
// while it waits for a Lease to expire, and are not worth ten a second.
const (
	stepRequeue           = 500 * time.Millisecond
	switchoverStepRequeue = 100 * time.Millisecond
)

// requeueAfter is when to look again: soon after a failover step (the next one follows it), when
// the failover engine waits for a time, when the primary's Lease renewal is due
// (failover.LeaseRenewalDue: a renewal that does not come is the first sign of a primary cut off
// or gone), or else after the report interval.
func (d Decision) requeueAfter(now time.Time, report time.Duration) time.Duration {
	fd := d.Failover.Decision
	next := report
	if fd.Kind == failover.Failover || fd.Kind == failover.Switchover {
		next = min(next, failover.PollInterval)
		switch {
		case d.Failover.acts() && fd.Kind == failover.Switchover:
			next = min(next, switchoverStepRequeue)
		case d.Failover.acts():
			next = min(next, stepRequeue)
		}
	}
	if due, ok := failover.LeaseRenewalDue(d.failoverObservation); ok {
		next = min(next, due.Sub(now))
	}
	if d.endingSessions {
		next = min(next, endingSessionsRequeue)
	}
	if wait := fd.RequeueAfter(now); wait > 0 {
		next = min(next, wait)
	} else if fd.Kind == failover.Wait {
		next = min(next, failover.PollInterval)
	}
	return next
}

// mergeHAConditions lays the conditions of the failover engine and of fencing over the ones the
// status computed, and records a Warning Event for each instance newly diverged.
func (d *Decision) mergeHAConditions(c *v1.Cluster, o Observation) {
	var conds []metav1.Condition
	if !d.PrimaryUnknown && (o.Reports != nil || o.ReportErrors != nil) {
		// Without a target primary the Degraded condition already asks a human to name one.
		conds = failover.Conditions(d.failoverObservation, d.Failover.Decision)
	}
	degraded := false
	for _, cond := range conds {
		degraded = degraded || cond.Type == v1.ConditionDegraded
	}
	if d.FencingInvalid != "" && !degraded {
		conds = append(conds, metav1.Condition{Type: v1.ConditionDegraded, Status: metav1.ConditionTrue, Reason: reasonFencingInvalid,
			Message: "the fencing annotation cannot be read; the fenced instances are kept as they were: " + d.FencingInvalid})
	}
	mergeFailoverConditions(&d.Status, c.Generation, o.Now, conds)
	keepTransitionTimes(d.Status.Conditions, o.Cluster.Status.Conditions)
	d.planDivergedEvents(o.Cluster.Status.Conditions)
}

// keepTransitionTimes gives each condition whose status is what it was at the start of the
// reconcile its former lastTransitionTime: the status computed and then overridden within one
// reconcile (Degraded False, then True for a failing primary) is no transition, and must not make
// every reconcile patch the status.
func keepTransitionTimes(conds, old []metav1.Condition) {
	for i := range conds {
		if prev := meta.FindStatusCondition(old, conds[i].Type); prev != nil && prev.Status == conds[i].Status {
			conds[i].LastTransitionTime = prev.LastTransitionTime
		}
	}
}

// planDivergedEvents warns once for each instance the Degraded condition newly reports diverged:
// the instance recorded itself in status.divergedInstances, the labels take it out of service.
// While a more serious reason holds the condition, the warning waits for it.
func (d *Decision) planDivergedEvents(old []metav1.Condition) {
	now := meta.FindStatusCondition(d.Status.Conditions, v1.ConditionDegraded)
	if now == nil || now.Reason != reasonDivergedInstances {
		return
	}
	before := meta.FindStatusCondition(old, v1.ConditionDegraded)
	for _, name := range d.Status.DivergedInstances {
		if before == nil || before.Reason != reasonDivergedInstances || !slices.Contains(strings.Split(strings.TrimPrefix(before.Message, divergedMessagePrefix), ", "), name) {
			d.event(stepRelabel, evDiverged.With(name, d.Status.CurrentPrimary, errantOf(d.Status, name)))
		}
	}
}

// errantOf names the transactions instance name holds and the current primary does not, from the
// GTID sets they last reported: what a person recovering a diverged instance looks for.
func errantOf(st v1.ClusterStatus, name string) string {
	executed, err := gtid.Parse(st.GTIDExecutedByInstance[name])
	if err != nil || st.GTIDExecutedByInstance[name] == "" {
		return "its GTID set is not known"
	}
	primary, err := gtid.Parse(st.GTIDExecutedByInstance[st.CurrentPrimary])
	if err != nil || st.GTIDExecutedByInstance[st.CurrentPrimary] == "" {
		return "its gtid_executed is " + executed.String() + "; the primary's is not known"
	}
	return "errant GTIDs " + gtid.Errant(executed, primary).String()
}

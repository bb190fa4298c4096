package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// act performs exactly d, step by step in the order of actStep: Secrets and certificates first
// (Pods mount them), the instances' ServiceAccounts, Roles, RoleBindings and the PDB, then
// instances, Services, labels, the status, and the primary's semi-sync count. Services come before
// labels: rw follows a new primary by its selector (specs.RoleSelector) in one update, before the
// relabelling of the old primary could change rw's endpoints a first time. Each step's Events
// are emitted once that step is done, even when a later one fails.
func (r *Reconciler) act(ctx context.Context, o *Observation, d Decision) error {
	c := o.Cluster
	d, err := r.refuseForeign(ctx, o, d)
	if err != nil {
		return err
	}
	var events []kit.Event
	defer func() { kit.Emit(r.Recorder, c, mergeEvents(events)) }()
	// A switchover is counted once: when its old primary's label is removed (even if the rest of
	// the relabel then fails), or when the relabel succeeds (the old primary's Pod may have been
	// deleted in this act, by a rolling update or a scale-down, and not relabelled at all).
	switchoverCounted := false
	demoted := func() {
		if !switchoverCounted {
			switchoverCounted = true
			d.countTransitions(c.Namespace, c.Name, stepDemotion)
		}
	}
	// Growing volumes is independent of every other step and never fails: it runs whatever they
	// did (a full disk is when the other steps tend to fail).
	defer func() {
		ev, _ := r.expandPVCs(ctx, o, d.ExpandPVCs)
		events = append(events, ev...)
	}()
	none := func(err error) ([]kit.Event, error) { return nil, err }
	steps := []struct {
		step actStep
		run  func() ([]kit.Event, error)
	}{
		{stepSecrets, func() ([]kit.Event, error) { return r.writeSecrets(ctx, c, d.Secrets, o.Now) }},
		{stepOwned, func() ([]kit.Event, error) { return none(r.applyOwned(ctx, d)) }},
		{stepCreate, func() ([]kit.Event, error) { return r.createInstances(ctx, c, d) }},
		{stepDetach, func() ([]kit.Event, error) { return r.detachAndDelete(ctx, o, d.Detach, d.DeletePVCs) }},
		{stepDeletePods, func() ([]kit.Event, error) { return none(r.deletePods(ctx, c, d.DeletePods)) }},
		{stepFailover, func() ([]kit.Event, error) { return r.actFailover(ctx, o, d.Failover) }},
		{stepServices, func() ([]kit.Event, error) { return r.applyServices(ctx, c, o.Services, d) }},
		{stepRelabel, func() ([]kit.Event, error) {
			return r.relabel(ctx, o, d.relabelAfterDeletions(), d.relabelEvents, demoted)
		}},
		{stepStatus, func() ([]kit.Event, error) { return none(r.patchStatus(ctx, c, d.Status)) }},
		{stepSemiSync, func() ([]kit.Event, error) { return none(r.setSemiSync(ctx, c, d.SemiSync, d.SemiSyncParticipants)) }},
		{stepPodMonitor, func() ([]kit.Event, error) { return r.applyPodMonitor(ctx, c, d.PodMonitor), nil }},
		{stepResize, func() ([]kit.Event, error) { return r.resizePods(ctx, o, d.ResizePods), nil }},
		{stepManagerUpdate, func() ([]kit.Event, error) { return r.updateManager(ctx, o, d.UpdateManager), nil }},
	}
	var createErr error
	for _, s := range steps {
		if createErr != nil && (s.step == stepDetach || s.step == stepDeletePods) {
			continue
		}
		ev, err := s.run()
		events = append(events, ev...)
		if err != nil {
			if s.step == stepCreate && errors.Is(err, errPodRefused) {
				// A Pod the API server refuses (reported as InstanceRefused; its PVC exists, so
				// its serial is taken) must not hold back the failover, the Services, the labels
				// and the status: the other steps that change instances are skipped, the rest
				// run, and the error ends the reconcile. A refused PVC still stops everything: the
				// status would record a serial and a target primary that have no volume.
				createErr = err
				continue
			}
			if s.step == stepServices {
				// A Service that cannot be applied (a quota, a refused template) must not keep the
				// labels that take suspected, fenced or diverged instances out of routing from
				// being applied: they were applied before the Services until rw moved by selector.
				ev, rerr := r.relabel(ctx, o, d.relabelAfterDeletions(), d.relabelEvents, demoted)
				events = append(events, ev...)
				if rerr == nil {
					events = append(events, d.Events[stepRelabel]...)
					d.countTransitions(c.Namespace, c.Name, stepRelabel)
					demoted()
				}
				return errors.Join(err, rerr)
			}
			if s.step == stepFailover {
				// A failed failover step (a fence that failed, a replica that did not stop its
				// receiver) must not keep a suspected primary in -rw: the labels are still applied.
				changes := d.Relabel
				if errors.Is(err, mysql.ErrFenceRefused) {
					// The old primary's Pod was deleted all the same (actFailover).
					changes = d.relabelAfterDeletions()
				}
				ev, rerr := r.relabel(ctx, o, changes, d.relabelEvents, demoted)
				events = append(events, ev...)
				if rerr == nil {
					events = append(events, d.Events[stepRelabel]...)
					d.countTransitions(c.Namespace, c.Name, stepRelabel)
					demoted()
				}
			}
			return err
		}
		events = append(events, d.Events[s.step]...)
		d.countTransitions(c.Namespace, c.Name, s.step)
		if s.step == stepRelabel {
			demoted()
		}
	}
	return createErr
}

// relabelAfterDeletions is d.Relabel without the Pods this act deletes (a detached instance's,
// one a rolling update replaces, the old primary's in a failover): being deleted, they leave the
// Services' endpoints anyway, and the deletion changed them since they were read, so a patch of
// their labels would fail on the optimistic lock and end the reconcile before the status is
// written (planRelabel leaves Pods already being deleted alone for the same reason).
func (d Decision) relabelAfterDeletions() []podRelabel {
	deleted := append(slices.Clone(d.DeletePods), d.Detach, d.Failover.DeletePod)
	return slices.DeleteFunc(slices.Clone(d.Relabel), func(ch podRelabel) bool { return slices.Contains(deleted, ch.Pod) })
}

// patchStatus writes st as c's status when it differs from the status c was read with.
func (r *Reconciler) patchStatus(ctx context.Context, c *v1.Cluster, st v1.ClusterStatus) error {
	if !statusChanged(c.Status, st) {
		return nil
	}
	next := c.DeepCopy()
	next.Status = st
	return kit.PatchStatus(ctx, r.Client, next, c)
}

// errPodRefused marks a Pod the API server refused to create.
var errPodRefused = errors.New("the API server refused an instance Pod")

// createInstances creates the planned PVCs, then the Pods; an object that already exists counts
// as created when the Cluster controls it (a previous reconcile got that far), and stops the step
// when it does not (refuseForeign reports it on the next reconcile).
//
// An object the API server refuses (a Pod label it finds invalid, a PriorityClass that does not
// exist, a quota) is reported as a Warning Event with the API server's reason: the Cluster's spec
// needs a person's change, and retrying alone will not help.
func (r *Reconciler) createInstances(ctx context.Context, c *v1.Cluster, d Decision) ([]kit.Event, error) {
	refused := func(kind, name string, err error) []kit.Event {
		if apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err) {
			return []kit.Event{evInstanceRefused.With(kind, name, err.Error())}
		}
		return nil
	}
	for _, pvc := range d.CreatePVCs {
		if err := r.createOwned(ctx, c, pvc, &corev1.PersistentVolumeClaim{}, "PVC"); err != nil {
			return refused("PVC", pvc.Name, err), err
		}
	}
	for _, pod := range d.CreatePods {
		if err := r.createOwned(ctx, c, pod, &corev1.Pod{}, "Pod"); err != nil {
			if ev := refused("Pod", pod.Name, err); ev != nil {
				return ev, fmt.Errorf("%w: %w", errPodRefused, err)
			}
			return nil, err
		}
	}
	return nil, nil
}

// detachAndDelete detaches instance (detach) and deletes the detached PVCs named.
func (r *Reconciler) detachAndDelete(ctx context.Context, o *Observation, instance string, pvcs []string) ([]kit.Event, error) {
	if err := r.detach(ctx, o, instance); err != nil {
		return nil, err
	}
	var events []kit.Event
	for _, name := range pvcs {
		pvc := &corev1.PersistentVolumeClaim{}
		pvc.Name, pvc.Namespace = name, o.Cluster.Namespace
		// Read afresh: only a PVC still detached (its instance removed) is ever deleted.
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(pvc), pvc); client.IgnoreNotFound(err) != nil {
			return events, fmt.Errorf("reading PVC %s: %w", name, err)
		} else if err != nil || pvc.Annotations[specs.DetachedAnnotation] == "" || pvc.Annotations[specs.DeleteWhenDetachedAnnotation] != "true" {
			continue
		}
		if deleted, err := r.deleteControlled(ctx, o.Cluster, pvc, "PVC"); err != nil {
			return events, err
		} else if deleted {
			events = append(events, evPVCDeleted.With(name))
		}
	}
	return events, nil
}

// detach marks the instance's PVC detached (so it is never recreated nor counted), then deletes
// its Pod and its server certificate. The PVC and its data stay.
func (r *Reconciler) detach(ctx context.Context, o *Observation, instance string) error {
	if instance == "" {
		return nil
	}
	for i := range o.PVCs {
		pvc := &o.PVCs[i]
		if pvc.Name != instance {
			continue
		}
		old := pvc.DeepCopy()
		if pvc.Annotations == nil {
			pvc.Annotations = map[string]string{}
		}
		pvc.Annotations[specs.DetachedAnnotation] = o.Now.UTC().Format("2006-01-02T15:04:05Z")
		if o.Cluster.Spec.Storage.WhenScaledDown == v1.PVCDelete {
			pvc.Annotations[specs.DeleteWhenDetachedAnnotation] = "true"
		}
		if err := kit.PatchSpec(ctx, r.Client, pvc, old); err != nil {
			return fmt.Errorf("marking PVC %s detached: %w", instance, err)
		}
	}
	pod := &corev1.Pod{}
	pod.Name, pod.Namespace = instance, o.Cluster.Namespace
	if _, err := r.deleteControlled(ctx, o.Cluster, pod, "Pod"); err != nil {
		return err
	}
	// The serial is never used again, so neither is its server certificate.
	secret := &corev1.Secret{}
	secret.Name, secret.Namespace = specs.ServerCertSecretName(instance), o.Cluster.Namespace
	if _, err := r.deleteControlled(ctx, o.Cluster, secret, "Secret"); err != nil {
		return err
	}
	log.FromContext(ctx).Info("removed instance, kept its PVC", "instance", instance)
	return nil
}

// deletePods deletes the named Pods of c (never their PVCs).
func (r *Reconciler) deletePods(ctx context.Context, c *v1.Cluster, names []string) error {
	for _, name := range names {
		pod := &corev1.Pod{}
		pod.Name, pod.Namespace = name, c.Namespace
		deleted, err := r.deleteControlled(ctx, c, pod, "Pod")
		if err != nil {
			return err
		}
		if deleted {
			log.FromContext(ctx).Info("deleted Pod of a detached instance", "pod", name)
		}
	}
	return nil
}

// relabel patches role and routable labels in the planned order (demotions first).
func (r *Reconciler) relabel(ctx context.Context, o *Observation, changes []podRelabel, events map[string]kit.Event,
	demoted func()) ([]kit.Event, error) {
	var done []kit.Event
	for _, ch := range changes {
		for i := range o.Pods {
			pod := &o.Pods[i]
			if pod.Name != ch.Pod {
				continue
			}
			old := pod.DeepCopy()
			pod.Labels = specs.InstanceLabels(o.Cluster.Name, pod.Name, ch.Role, ch.Routable)
			for k, val := range old.Labels {
				if k != v1.RoleLabel && k != v1.RoutableLabel {
					pod.Labels[k] = val
				}
			}
			if err := kit.PatchSpec(ctx, r.Client, pod, old); err != nil {
				return done, fmt.Errorf("relabelling Pod %s: %w", pod.Name, err)
			}
			if old.Labels[v1.RoleLabel] == v1.RolePrimary && ch.Role != v1.RolePrimary && demoted != nil {
				demoted()
			}
			log.FromContext(ctx).Info("relabelled Pod", "pod", pod.Name, "role", ch.Role, "routable", ch.Routable)
			if ev, ok := events[pod.Name]; ok {
				done = append(done, ev)
			}
		}
	}
	return done, nil
}

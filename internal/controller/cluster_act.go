package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// act performs exactly d: Secrets and certificates first (Pods mount them), the instances'
// ServiceAccount, Role, RoleBinding and the PDB, then instances, labels, Services and the status.
// Each step's Events are emitted once that step is done, even when a later one fails; the status
// Events only once the status is written.
func (r *ClusterReconciler) act(ctx context.Context, o *clusterObservation, d clusterDecision) error {
	c := o.Cluster
	events, err := r.ensureSecrets(ctx, c, d.Instances, o.Now)
	defer func() { emit(r.Recorder, c, mergeEvents(events)) }()
	if err != nil {
		return err
	}
	if err := r.applyOwned(ctx, d); err != nil {
		return err
	}
	steps := []struct {
		step actStep
		run  func() error
	}{
		{stepCreate, func() error { return r.createInstances(ctx, d) }},
		{stepDetach, func() error { return r.detach(ctx, o, d.Detach) }},
		{stepDeletePods, func() error { return r.deletePods(ctx, o.Cluster.Namespace, d.DeletePods) }},
		{stepRelabel, func() error { return r.relabel(ctx, o, d.Relabel) }},
		{stepServices, func() error {
			ev, err := r.applyServices(ctx, o.Services, d)
			events = append(events, ev...)
			return err
		}},
	}
	for _, s := range steps {
		if err := s.run(); err != nil {
			return err
		}
		events = append(events, d.Events[s.step]...)
	}
	if statusChanged(c.Status, d.Status) {
		next := c.DeepCopy()
		next.Status = d.Status
		if err := patchStatus(ctx, r.Client, next, c); err != nil {
			return err
		}
	}
	events = append(events, d.StatusEvents...)
	return nil
}

// createInstances creates the planned PVCs, then the Pods; an object that already exists counts
// as created (a previous reconcile got that far).
func (r *ClusterReconciler) createInstances(ctx context.Context, d clusterDecision) error {
	for _, pvc := range d.CreatePVCs {
		if err := r.Client.Create(ctx, pvc); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating PVC %s: %w", pvc.Name, err)
		}
		log.FromContext(ctx).Info("created PVC", "pvc", pvc.Name)
	}
	for _, pod := range d.CreatePods {
		if err := r.Client.Create(ctx, pod); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating Pod %s: %w", pod.Name, err)
		}
		log.FromContext(ctx).Info("created Pod", "pod", pod.Name)
	}
	return nil
}

// detach marks the instance's PVC detached (so it is never recreated nor counted), then deletes
// its Pod and its server certificate. The PVC and its data stay.
func (r *ClusterReconciler) detach(ctx context.Context, o *clusterObservation, instance string) error {
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
		if err := r.Client.Patch(ctx, pvc, client.MergeFromWithOptions(old, client.MergeFromWithOptimisticLock{})); err != nil {
			return fmt.Errorf("marking PVC %s detached: %w", instance, err)
		}
	}
	pod := &corev1.Pod{}
	pod.Name, pod.Namespace = instance, o.Cluster.Namespace
	if err := r.Client.Delete(ctx, pod); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting Pod %s: %w", instance, err)
	}
	// The serial is never used again, so neither is its server certificate.
	secret := &corev1.Secret{}
	secret.Name, secret.Namespace = specs.ServerCertSecretName(instance), o.Cluster.Namespace
	if err := r.Client.Delete(ctx, secret); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting Secret %s: %w", secret.Name, err)
	}
	log.FromContext(ctx).Info("removed instance, kept its PVC", "instance", instance)
	return nil
}

// deletePods deletes the named Pods (never their PVCs).
func (r *ClusterReconciler) deletePods(ctx context.Context, namespace string, names []string) error {
	for _, name := range names {
		pod := &corev1.Pod{}
		pod.Name, pod.Namespace = name, namespace
		if err := r.Client.Delete(ctx, pod); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting Pod %s: %w", name, err)
		}
		log.FromContext(ctx).Info("deleted Pod of a detached instance", "pod", name)
	}
	return nil
}

// relabel patches role and routable labels in the planned order (demotions first).
func (r *ClusterReconciler) relabel(ctx context.Context, o *clusterObservation, changes []podRelabel) error {
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
			if err := r.Client.Patch(ctx, pod, client.MergeFromWithOptions(old, client.MergeFromWithOptimisticLock{})); err != nil {
				return fmt.Errorf("relabelling Pod %s: %w", pod.Name, err)
			}
			log.FromContext(ctx).Info("relabelled Pod", "pod", pod.Name, "role", ch.Role, "routable", ch.Routable)
		}
	}
	return nil
}

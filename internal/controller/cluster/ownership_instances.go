package cluster

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// An instance's Pod mounts its PVC, its server certificate and the replication client
// certificate by name, and trusts the CA those certificates carry. A Pod is therefore created
// only when each of them is this Cluster's, or does not exist yet: a PVC someone else made under
// an instance's name must never be mounted (its data would become a member of the Cluster), and
// a certificate or CA someone else made must never be trusted. Deletions carry the UID of the
// object this Cluster controls, so one replaced under the same name is never deleted.

// readForeignInstanceObjects looks up the PVC, Pod and ServiceAccount of each instance this
// reconcile may create (certInstances: the active ones and the next serial) that the Cluster's
// own lists lack (the ServiceAccount: when it lacks the Pod), and
// returns those that exist with another controller, by instance name. A Cluster with all its
// instances costs no read.
func (r *Reconciler) readForeignInstanceObjects(ctx context.Context, o *Observation) (map[string][]string, error) {
	c := o.Cluster
	out := map[string][]string{}
	for _, name := range certInstances(c, o.PVCs, o.Pods) {
		// The ServiceAccount is read when the Pod is to be created, or replaced (a Pod of an
		// earlier operator runs as the Cluster's shared account; the rolling update replaces it).
		podRunsAsOwn := slices.ContainsFunc(o.Pods, func(p corev1.Pod) bool {
			return p.Name == name && p.Spec.ServiceAccountName == specs.InstanceServiceAccountName(name)
		})
		hasPod := slices.ContainsFunc(o.Pods, func(p corev1.Pod) bool { return p.Name == name })
		for _, probe := range []struct {
			kind string
			cur  client.Object
			have bool
		}{
			{"PersistentVolumeClaim", &corev1.PersistentVolumeClaim{}, slices.ContainsFunc(o.PVCs, func(p corev1.PersistentVolumeClaim) bool { return p.Name == name })},
			{"Pod", &corev1.Pod{}, hasPod},
			// The ServiceAccount its Pod runs as (read only when the Pod is to be created).
			{"ServiceAccount", &corev1.ServiceAccount{}, podRunsAsOwn},
		} {
			if probe.have {
				continue
			}
			// The cache first (an instance's ServiceAccount is labelled, and read on every
			// reconcile while a Pod runs as the shared one), the API server for what it lacks.
			key := client.ObjectKey{Namespace: c.Namespace, Name: name}
			err := r.Client.Get(ctx, key, probe.cur)
			if apierrors.IsNotFound(err) {
				err = r.APIReader.Get(ctx, key, probe.cur)
			}
			if apierrors.IsNotFound(err) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("reading %s %s: %w", probe.kind, name, err)
			}
			if !controlledBy(c, probe.cur) {
				out[name] = append(out[name], probe.kind+" "+name)
			}
		}
	}
	return out, nil
}

// refuseForeignInstance reports whether the instance name must not get a Pod because something
// it would mount or trust is controlled elsewhere: its PVC or a Pod of its name (o.ForeignObjects),
// its server certificate, the replication client certificate or the CA. The objects are recorded
// in d.RefusedObjects.
func (d *Decision) refuseForeignInstance(c *v1.Cluster, o Observation, name string) bool {
	objs := foreignInstanceObjects(c, o, name)
	d.RefusedObjects = append(d.RefusedObjects, objs...)
	return len(objs) > 0
}

// foreignInstanceObjects are the objects, controlled elsewhere, that keep instance name from
// getting a Pod (refuseForeignInstance), as "Kind name".
func foreignInstanceObjects(c *v1.Cluster, o Observation, name string) []string {
	objs := slices.Clone(o.ForeignObjects[name])
	for _, s := range []string{specs.CASecretName(c.Name), specs.ServerCertSecretName(name), specs.ReplicationClientSecretName(c.Name)} {
		if live := o.Secrets[s]; live != nil && !controlledBy(c, live) {
			objs = append(objs, "Secret "+s)
		}
	}
	return objs
}

// createOwned creates obj; when it already exists it must be c's (a previous reconcile created
// it), else the error says so and nothing after it is created.
func (r *Reconciler) createOwned(ctx context.Context, c *v1.Cluster, obj, cur client.Object, kind string) error {
	err := r.Client.Create(ctx, obj)
	if err == nil {
		log.FromContext(ctx).Info("created "+kind, "name", obj.GetName())
		return nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating %s %s: %w", kind, obj.GetName(), err)
	}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(obj), cur); err != nil {
		return fmt.Errorf("reading %s %s, which exists: %w", kind, obj.GetName(), err)
	}
	if !controlledBy(c, cur) {
		return fmt.Errorf("%s %s exists and is not controlled by Cluster %s: not using it", kind, obj.GetName(), c.Name)
	}
	return nil
}

// deleteControlled deletes the object cur names (kind, namespace and name set) only when c controls
// it, with a precondition on the UID read: one made by someone else, or replaced under the same
// name since, is left alone. deleted says whether the delete was sent; a missing object is not an
// error.
func (r *Reconciler) deleteControlled(ctx context.Context, c *v1.Cluster, cur client.Object, kind string, opts ...client.DeleteOption) (deleted bool, err error) {
	err = r.APIReader.Get(ctx, client.ObjectKeyFromObject(cur), cur)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading %s %s before deleting it: %w", kind, cur.GetName(), err)
	}
	if !controlledBy(c, cur) {
		log.FromContext(ctx).Info("not deleting an object this Cluster does not control", "kind", kind, "name", cur.GetName())
		return false, nil
	}
	uid := cur.GetUID()
	err = r.Client.Delete(ctx, cur, append(opts, client.Preconditions{UID: &uid})...)
	if apierrors.IsConflict(err) {
		log.FromContext(ctx).Info("not deleting: replaced under the same name since it was read", "kind", kind, "name", cur.GetName())
		return false, nil
	}
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("deleting %s %s: %w", kind, cur.GetName(), err)
	}
	return true, nil
}

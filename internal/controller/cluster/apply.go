package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
)

// appliedHashAnnotation records the hash of what the operator last applied to a Service or PDB,
// so an unchanged desired object costs no write.
const appliedHashAnnotation = "mysql.cloudnative-mysql.io/applied-hash"

// clusterFieldOwner is the server-side apply field manager of the Cluster controller.
const clusterFieldOwner = client.FieldOwner("cloudnative-mysql-cluster")

// applyServices applies the desired Services that differ from the live ones and deletes the owned
// Services no longer desired.
func (r *Reconciler) applyServices(ctx context.Context, c *v1.Cluster, live []corev1.Service, d Decision) ([]kit.Event, error) {
	byName := map[string]*corev1.Service{}
	for i := range live {
		byName[live[i].Name] = &live[i]
	}
	var events []kit.Event
	for _, want := range d.Services {
		want.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Service"))
		cur := byName[want.Name]
		hash := stampHash(want)
		if cur != nil && cur.Annotations[appliedHashAnnotation] == hash && reflect.DeepEqual(cur.Spec.Selector, want.Spec.Selector) {
			continue
		}
		if err := r.Client.Patch(ctx, want, client.Apply, clusterFieldOwner, client.ForceOwnership); err != nil {
			return events, fmt.Errorf("applying Service %s: %w", want.Name, err)
		}
		log.FromContext(ctx).Info("applied Service", "service", want.Name)
		if cur == nil {
			events = append(events, evServiceCreated.With(want.Name))
		} else {
			events = append(events, evServiceUpdated.With(want.Name))
		}
	}
	for _, name := range d.DeleteServices {
		svc := &corev1.Service{}
		svc.Name, svc.Namespace = name, byName[name].Namespace
		deleted, err := r.deleteControlled(ctx, c, svc, "Service")
		if err != nil {
			return events, err
		}
		if deleted {
			log.FromContext(ctx).Info("deleted Service", "service", name)
		}
	}
	return events, nil
}

// applyOwned applies each object (the PDB, the instances' ServiceAccounts, Roles and
// RoleBindings) unless the live one carries the same applied hash. ServiceAccounts come first and
// bindings last, so a binding never names an account that is not there yet.
func (r *Reconciler) applyOwned(ctx context.Context, d Decision) error {
	type owned struct {
		want, cur client.Object
		gvk       schema.GroupVersionKind
	}
	var objs []owned
	for _, sa := range d.ServiceAccounts {
		objs = append(objs, owned{sa, &corev1.ServiceAccount{}, corev1.SchemeGroupVersion.WithKind("ServiceAccount")})
	}
	for _, role := range d.Roles {
		objs = append(objs, owned{role, &rbacv1.Role{}, rbacv1.SchemeGroupVersion.WithKind("Role")})
	}
	for _, b := range d.RoleBindings {
		objs = append(objs, owned{b, &rbacv1.RoleBinding{}, rbacv1.SchemeGroupVersion.WithKind("RoleBinding")})
	}
	if d.PDB != nil { // nil: refused, controlled by something else
		objs = append(objs, owned{d.PDB, &policyv1.PodDisruptionBudget{}, policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget")})
	}
	for _, o := range objs {
		o.want.GetObjectKind().SetGroupVersionKind(o.gvk)
		hash := stampHash(o.want)
		err := r.Client.Get(ctx, client.ObjectKeyFromObject(o.want), o.cur)
		if client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("reading %s %s: %w", o.gvk.Kind, o.want.GetName(), err)
		}
		if err == nil && o.cur.GetAnnotations()[appliedHashAnnotation] == hash {
			continue
		}
		if err := r.Client.Patch(ctx, o.want, client.Apply, clusterFieldOwner, client.ForceOwnership); err != nil {
			return fmt.Errorf("applying %s %s: %w", o.gvk.Kind, o.want.GetName(), err)
		}
		log.FromContext(ctx).Info("applied object", "kind", o.gvk.Kind, "name", o.want.GetName())
	}
	return nil
}

// stampHash hashes obj as built and records the hash in its annotations.
func stampHash(obj client.Object) string {
	data, _ := json.Marshal(obj) // built objects always marshal
	sum := sha256.Sum256(data)
	hash := hex.EncodeToString(sum[:8])
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[appliedHashAnnotation] = hash
	obj.SetAnnotations(ann)
	return hash
}

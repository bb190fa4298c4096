package cluster

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// A Cluster writes only objects it controls. Its children are named after it, so a Cluster named
// default would otherwise bind (and, through its owner reference, later garbage-collect) the
// namespace's default ServiceAccount, or overwrite a Service or Secret someone else made. An
// object the decision would write that exists without a controller owner reference to this
// Cluster is left alone: the rest of the decision goes on, and the Cluster reports the refusal
// in its OwnershipConflict condition and a Warning Event.

// ConditionOwnershipConflict is true while objects the Cluster needs are controlled by
// something else; absent otherwise.
const ConditionOwnershipConflict = "OwnershipConflict"

const reasonControlledElsewhere = "ControlledElsewhere"

var evOwnershipConflict = kit.EventKind{Type: corev1.EventTypeWarning, Reason: "OwnershipConflict",
	Format: "Not changing objects this Cluster does not control: %s; rename them or the Cluster"}

// refuseForeign removes from d every write to an existing object c does not control, and sets
// or clears the OwnershipConflict condition of d's status (with an Event when it appears or its
// list changes).
func (r *Reconciler) refuseForeign(ctx context.Context, o *Observation, d Decision) (Decision, error) {
	c := o.Cluster
	foreign := slices.Clone(d.RefusedObjects)
	refuse := func(kind, name string) { foreign = append(foreign, kind+" "+name) }
	// controlledElsewhere reads kind/name into cur: true when it exists and c is not its controller.
	// The cache holds only labelled objects, so a name it does not know is looked up in the API
	// server: an unlabelled object of that name (a namespace's default ServiceAccount) is
	// someone else's.
	controlledElsewhere := func(kind string, cur client.Object, name string) (bool, error) {
		key := client.ObjectKey{Namespace: c.Namespace, Name: name}
		err := r.Client.Get(ctx, key, cur)
		if apierrors.IsNotFound(err) {
			err = r.APIReader.Get(ctx, key, cur)
		}
		if err != nil {
			return false, client.IgnoreNotFound(err)
		}
		if controlledBy(c, cur) {
			return false, nil
		}
		refuse(kind, name)
		return true, nil
	}
	if d.ServiceAccount != nil {
		if bad, err := controlledElsewhere("ServiceAccount", &corev1.ServiceAccount{}, d.ServiceAccount.Name); err != nil {
			return d, err
		} else if bad {
			// Binding the Role to a ServiceAccount this Cluster does not control would grant its
			// permissions to every Pod that runs as it.
			d.ServiceAccount, d.RoleBinding = nil, nil
		}
	}
	if d.Role != nil {
		if bad, err := controlledElsewhere("Role", &rbacv1.Role{}, d.Role.Name); err != nil {
			return d, err
		} else if bad {
			d.Role, d.RoleBinding = nil, nil
		}
	}
	if d.RoleBinding != nil {
		if bad, err := controlledElsewhere("RoleBinding", &rbacv1.RoleBinding{}, d.RoleBinding.Name); err != nil {
			return d, err
		} else if bad {
			d.RoleBinding = nil
		}
	}
	if d.PDB != nil {
		if bad, err := controlledElsewhere("PodDisruptionBudget", &policyv1.PodDisruptionBudget{}, d.PDB.Name); err != nil {
			return d, err
		} else if bad {
			d.PDB = nil
		}
	}
	owned := map[string]bool{}
	for _, s := range o.Services {
		owned[s.Name] = true
	}
	services := make([]*corev1.Service, 0, len(d.Services))
	for _, s := range d.Services {
		if !owned[s.Name] {
			if bad, err := controlledElsewhere("Service", &corev1.Service{}, s.Name); err != nil {
				return d, err
			} else if bad {
				continue
			}
		}
		services = append(services, s)
	}
	d.Services = services
	d.Secrets = refuseForeignSecrets(c, o.Secrets, d.Secrets, refuse)
	// Sorted, each once: a foreign CA is refused for its certificates and for each instance.
	foreign = slices.Compact(slices.Sorted(slices.Values(foreign)))
	d.Status = withOwnershipCondition(c, d.Status, foreign, metav1.NewTime(o.Now))
	if n := meta.FindStatusCondition(d.Status.Conditions, ConditionOwnershipConflict); n != nil {
		if old := meta.FindStatusCondition(c.Status.Conditions, ConditionOwnershipConflict); old == nil || old.Message != n.Message {
			log.FromContext(ctx).Info("refusing objects controlled elsewhere", "objects", foreign)
			events := map[actStep][]kit.Event{}
			for step, ev := range d.Events {
				events[step] = ev
			}
			events[stepSecrets] = append([]kit.Event{evOwnershipConflict.With(strings.Join(foreign, ", "))}, events[stepSecrets]...)
			d.Events = events
		}
	}
	return d, nil
}

// refuseForeignSecrets drops the certificate work on Secrets c does not control. When the CA
// Secret is someone else's, no certificate is issued at all: its key must not sign for c.
func refuseForeignSecrets(c *v1.Cluster, live map[string]*corev1.Secret, w SecretWork, refuse func(kind, name string)) SecretWork {
	caName := specs.CASecretName(c.Name)
	if ca := live[caName]; ca != nil && !controlledBy(c, ca) {
		refuse("Secret", caName)
		w.CA, w.RenewCA, w.CASecret, w.Certificates = nil, "", nil, nil
		return w
	}
	certs := make([]CertWork, 0, len(w.Certificates))
	for _, cw := range w.Certificates {
		if s := live[cw.Secret]; s != nil && !controlledBy(c, s) {
			refuse("Secret", cw.Secret)
			continue
		}
		certs = append(certs, cw)
	}
	w.Certificates = certs
	return w
}

// controlledBy reports whether c is obj's controller.
func controlledBy(c *v1.Cluster, obj metav1.Object) bool {
	ref := metav1.GetControllerOf(obj)
	return ref != nil && ref.UID == c.UID
}

// withOwnershipCondition sets OwnershipConflict on st while foreign (sorted, each once) is not
// empty, and removes it once nothing is refused.
func withOwnershipCondition(c *v1.Cluster, st v1.ClusterStatus, foreign []string, now metav1.Time) v1.ClusterStatus {
	st.Conditions = append([]metav1.Condition(nil), st.Conditions...)
	if len(foreign) == 0 {
		meta.RemoveStatusCondition(&st.Conditions, ConditionOwnershipConflict)
		return st
	}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: ConditionOwnershipConflict, Status: metav1.ConditionTrue,
		Reason: reasonControlledElsewhere, ObservedGeneration: c.Generation, LastTransitionTime: now,
		Message: fmt.Sprintf("not changed, controlled by something else: %s", strings.Join(foreign, ", "))})
	return st
}

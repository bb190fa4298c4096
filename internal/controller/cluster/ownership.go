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
	// lookup reads name into cur and says whether it exists. The cache holds only labelled
	// objects, so a name it does not know is looked up in the API server: an unlabelled object of
	// that name (a namespace's default ServiceAccount) is someone else's.
	lookup := func(cur client.Object, name string) (bool, error) {
		key := client.ObjectKey{Namespace: c.Namespace, Name: name}
		err := r.Client.Get(ctx, key, cur)
		if apierrors.IsNotFound(err) {
			err = r.APIReader.Get(ctx, key, cur)
		}
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	}
	// controlledElsewhere reads kind/name into cur: true when it exists and c is not its controller.
	controlledElsewhere := func(kind string, cur client.Object, name string) (bool, error) {
		if found, err := lookup(cur, name); !found {
			return false, err
		}
		if controlledBy(c, cur) {
			return false, nil
		}
		refuse(kind, name)
		return true, nil
	}
	// An instance's ServiceAccount this Cluster does not control is never bound: that would grant
	// the instances' permissions to every Pod that runs as it (its instance gets no Pod either,
	// refuseForeignInstance).
	var accounts []*corev1.ServiceAccount
	foreignAccounts := map[string]bool{}
	for _, sa := range d.ServiceAccounts {
		if bad, err := controlledElsewhere("ServiceAccount", &corev1.ServiceAccount{}, sa.Name); err != nil {
			return d, err
		} else if bad {
			foreignAccounts[sa.Name] = true
			continue
		}
		accounts = append(accounts, sa)
	}
	d.ServiceAccounts = accounts
	// A Pod created before each instance had its own account runs as the Cluster's shared one: it
	// stays bound only while the Cluster controls it (a Cluster named default never binds the
	// namespace's default ServiceAccount).
	if shared := specs.SharedServiceAccountName(c.Name); !slices.ContainsFunc(d.ServiceAccounts,
		func(sa *corev1.ServiceAccount) bool { return sa.Name == shared }) && bindsAccount(d.RoleBindings, shared) {
		sa := &corev1.ServiceAccount{}
		found, err := lookup(sa, shared)
		switch {
		case err != nil:
			return d, err
		case !found:
			foreignAccounts[shared] = true // not bound until it exists as the Cluster's
		case !controlledBy(c, sa):
			refuse("ServiceAccount", shared)
			foreignAccounts[shared] = true
		}
	}
	var roles []*rbacv1.Role
	foreignRoles := map[string]bool{}
	for _, role := range d.Roles {
		if bad, err := controlledElsewhere("Role", &rbacv1.Role{}, role.Name); err != nil {
			return d, err
		} else if bad {
			foreignRoles[role.Name] = true
			continue
		}
		roles = append(roles, role)
	}
	d.Roles = roles
	var bindings []*rbacv1.RoleBinding
	for _, b := range d.RoleBindings {
		if foreignRoles[b.RoleRef.Name] {
			continue // binding a Role someone else controls would grant what they wrote
		}
		if bad, err := controlledElsewhere("RoleBinding", &rbacv1.RoleBinding{}, b.Name); err != nil {
			return d, err
		} else if bad {
			continue
		}
		b.Subjects = slices.DeleteFunc(b.Subjects, func(s rbacv1.Subject) bool { return foreignAccounts[s.Name] })
		bindings = append(bindings, b)
	}
	d.RoleBindings = bindings
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

// bindsAccount reports whether one of bindings names the ServiceAccount account.
func bindsAccount(bindings []*rbacv1.RoleBinding, account string) bool {
	return slices.ContainsFunc(bindings, func(b *rbacv1.RoleBinding) bool {
		return slices.ContainsFunc(b.Subjects, func(s rbacv1.Subject) bool { return s.Name == account })
	})
}

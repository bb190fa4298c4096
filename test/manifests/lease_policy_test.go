package manifests_test

import (
	"context"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
)

// leaseActor is who sends a request: a user, and the Pod its bound token names (none when
// empty).
type leaseActor struct{ user, pod, uid string }

// leaseOp is one request on a Lease: create, renew (update) or delete, with the holderIdentity a
// create or renewal writes.
type leaseOp struct{ verb, holder string }

// TestPrimaryLeasePolicy installs config/default and checks, against the API server, who may
// create, renew and delete (release) a Cluster's primary Lease: the Cluster's instances (each from
// its own Pod, naming itself) and the operator; the holder's Pod alone among the instances
// releases it. Every actor's RBAC allows the request, so a refusal is the policy's.
func TestPrimaryLeasePolicy(t *testing.T) {
	env := kubetest.StartT(t, kubetest.Options{})
	k := newKubectl(t, env)
	k.must("apply", "--server-side", "--force-conflicts", "-k", "config/default")
	ns := env.NewNamespace(t)
	ctx := context.Background()
	for _, name := range []string{"db", "other"} {
		createInstanceRBAC(t, env, testCluster(t, env, ns, name))
	}
	// A Cluster named like instance db-2, the target (and like its ServiceAccount): db-2's own
	// account is not this Cluster's shared one, so the create policy does not hold it to the Lease
	// db-2-primary.
	testCluster(t, env, ns, "db-2")
	// db-2 is the target of a promotion: the one instance that may create the Lease or take it
	// from its holder (db-1).
	var db v1.Cluster
	check.Must(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db"}, &db))
	db.Status.TargetPrimary = "db-2"
	check.Must(t, env.Client.Status().Update(ctx, &db))
	// Every ServiceAccount of the namespace may do anything with its Leases (a tenant's leader
	// election, say, granted broadly), and so, by RBAC alone, with the primary Lease too.
	check.Must(t, env.Client.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"},
			Verbs: []string{"get", "create", "update", "patch", "delete"}}}}))
	check.Must(t, env.Client.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tenant"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "tenant"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "system:serviceaccounts:" + ns}}}))

	// A user with the built-in edit role in the namespace: it grants every verb on Leases
	// (system:aggregate-to-edit, which edit and admin aggregate), so RBAC alone lets any editor
	// of the namespace delete the primary Lease.
	check.Must(t, env.Client.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "editor"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:aggregate-to-edit"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "editor"}}}))
	if out := k.must("auth", "can-i", "--as=editor", "-n", ns, "delete", "leases.coordination.k8s.io/db-primary"); strings.TrimSpace(out) != "yes" {
		t.Errorf("the built-in edit role no longer grants Leases (%s): docs/security.md says it does", out)
	}

	sa := func(name string) string { return "system:serviceaccount:" + ns + ":" + name }
	operator := leaseActor{user: operatorAccount}
	tenant := leaseActor{user: sa("tenant"), pod: "tenant-7c9f", uid: "uid-tenant"}
	holderPod := leaseActor{user: sa("db"), pod: "db-1", uid: "uid-db-1"}
	const heldBy = "db-1/uid-db-1"
	// send performs op on the Lease name as actor; the Lease is first set, by the operator, to
	// name holder (none: absent).
	send := func(t *testing.T, name, holder string, actor leaseActor, op leaseOp) error {
		t.Helper()
		setLease(t, clientAs(t, env, operator.user, ""), ns, name, holder)
		as := clientAsPod(t, env, actor.user, actor.pod, actor.uid)
		l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		switch op.verb {
		case "create":
			l.Spec.HolderIdentity = ptr.To(op.holder)
			return as.Create(ctx, l)
		case "renew":
			if err := as.Get(ctx, client.ObjectKeyFromObject(l), l); err != nil {
				return err
			}
			now := metav1.NewMicroTime(time.Now())
			l.Spec.HolderIdentity, l.Spec.RenewTime = ptr.To(op.holder), &now
			return as.Update(ctx, l)
		default:
			return as.Delete(ctx, l)
		}
	}
	// The policy takes effect a moment after it is created.
	check.Eventually(t, 30*time.Second, "the primary Lease policy refuses a tenant", func(context.Context) (bool, error) {
		err := send(t, "db-primary", heldBy, tenant, leaseOp{verb: "renew", holder: "tenant"})
		return err != nil && strings.Contains(err.Error(), "may write the Lease db-primary"), nil
	})
	// ... and sees the target primary (the Cluster reaches the policy through a watch).
	check.Eventually(t, 30*time.Second, "the primary Lease policy sees db-2 as the target primary", func(context.Context) (bool, error) {
		err := send(t, "db-primary", "", leaseActor{sa("db"), "db-3", "uid-db-3"}, leaseOp{"create", "db-3/uid-db-3"})
		return err != nil && strings.Contains(err.Error(), "only as the Cluster's target primary (db-2)"), nil
	})

	for _, tc := range []struct {
		rule    string
		lease   string
		holder  string
		actor   leaseActor
		op      leaseOp
		allowed bool
	}{
		{"a tenant's ServiceAccount never creates the primary Lease", "db-primary", "", tenant, leaseOp{"create", "tenant"}, false},
		{"a tenant's ServiceAccount never renews or takes it", "db-primary", heldBy, tenant, leaseOp{"renew", "tenant"}, false},
		{"a tenant's ServiceAccount never deletes it", "db-primary", heldBy, tenant, leaseOp{verb: "delete"}, false},
		{"a namespace editor never deletes it", "db-primary", heldBy, leaseActor{user: "editor"}, leaseOp{verb: "delete"}, false},
		{"a namespace editor never renews or takes it", "db-primary", heldBy, leaseActor{user: "editor"}, leaseOp{"renew", "editor"}, false},
		{"another Cluster's instances never write it", "db-primary", heldBy,
			leaseActor{sa("other"), "other-1", "uid-other-1"}, leaseOp{"renew", "other-1/uid-other-1"}, false},
		{"another Cluster's instances never delete it", "db-primary", heldBy,
			leaseActor{sa("other"), "other-1", "uid-other-1"}, leaseOp{verb: "delete"}, false},
		{"an instance never writes it without its Pod's token", "db-primary", heldBy,
			leaseActor{user: sa("db")}, leaseOp{"renew", "db-1"}, false},
		{"a Pod of the instances' ServiceAccount not named like an instance never writes it", "db-primary", heldBy,
			leaseActor{sa("db"), "db-debug", "uid-debug"}, leaseOp{"renew", "db-debug/uid-debug"}, false},
		{"the target primary creates it naming its own Pod", "db-primary", "", leaseActor{sa("db"), "db-2", "uid-db-2"},
			leaseOp{"create", "db-2/uid-db-2"}, true},
		{"an instance that is not the target primary never creates it", "db-primary", "", leaseActor{sa("db"), "db-3", "uid-db-3"},
			leaseOp{"create", "db-3/uid-db-3"}, false},
		{"an instance never creates it naming another Pod", "db-primary", "", leaseActor{sa("db"), "db-2", "uid-db-2"},
			leaseOp{"create", heldBy}, false},
		{"the holder renews it though another instance is the target (a switchover demoting it)", "db-primary", heldBy,
			holderPod, leaseOp{"renew", heldBy}, true},
		{"the target primary takes it over naming its own Pod (MayTakeLease decides when)", "db-primary", heldBy,
			leaseActor{sa("db"), "db-2", "uid-db-2"}, leaseOp{"renew", "db-2/uid-db-2"}, true},
		{"an instance that is not the target primary never takes it from the holder", "db-primary", heldBy,
			leaseActor{sa("db"), "db-3", "uid-db-3"}, leaseOp{"renew", "db-3/uid-db-3"}, false},
		{"a Pod recreated under the holder's name takes it only as the target primary", "db-primary", heldBy,
			leaseActor{sa("db"), "db-1", "uid-db-1-recreated"}, leaseOp{"renew", "db-1/uid-db-1-recreated"}, false},
		{"an instance never names another Pod as the holder", "db-primary", heldBy,
			leaseActor{sa("db"), "db-2", "uid-db-2"}, leaseOp{"renew", "db-3/uid-db-3"}, false},
		{"an instance never names itself with another Pod's UID", "db-primary", heldBy,
			leaseActor{sa("db"), "db-2", "uid-db-2"}, leaseOp{"renew", "db-2/uid-db-1"}, false},
		{"an older instance manager renews it naming its instance alone", "db-primary", "db-1", holderPod, leaseOp{"renew", "db-1"}, true},
		{"an older instance manager's Lease is renewed in the current format", "db-primary", "db-1", holderPod, leaseOp{"renew", heldBy}, true},
		{"a non-holder Pod never deletes (releases) it", "db-primary", heldBy,
			leaseActor{sa("db"), "db-2", "uid-db-2"}, leaseOp{verb: "delete"}, false},
		{"a Pod recreated under the holder's name never releases the earlier Pod's Lease", "db-primary", heldBy,
			leaseActor{sa("db"), "db-1", "uid-db-1-recreated"}, leaseOp{verb: "delete"}, false},
		{"an instance never deletes it once released (no holder)", "db-primary", "-", holderPod, leaseOp{verb: "delete"}, false},
		{"the holder's Pod releases it", "db-primary", heldBy, holderPod, leaseOp{verb: "delete"}, true},
		{"the Pod named by an older instance manager's Lease releases it", "db-primary", "db-1", holderPod, leaseOp{verb: "delete"}, true},
		{"an instance's own ServiceAccount, from its Pod, creates it as the target (a Cluster named db-2 beside it changes nothing)", "db-primary", "",
			leaseActor{sa("db-2"), "db-2", "uid-db-2"}, leaseOp{"create", "db-2/uid-db-2"}, true},
		{"an instance's own ServiceAccount, from its Pod, takes it over as the target", "db-primary", heldBy,
			leaseActor{sa("db-2"), "db-2", "uid-db-2"}, leaseOp{"renew", "db-2/uid-db-2"}, true},
		{"the holder's own ServiceAccount renews it", "db-primary", heldBy,
			leaseActor{sa("db-1"), "db-1", "uid-db-1"}, leaseOp{"renew", heldBy}, true},
		{"the holder's own ServiceAccount releases it", "db-primary", heldBy,
			leaseActor{sa("db-1"), "db-1", "uid-db-1"}, leaseOp{verb: "delete"}, true},
		{"an instance's own ServiceAccount never writes it from another Pod", "db-primary", heldBy,
			leaseActor{sa("db-2"), "db-3", "uid-db-3"}, leaseOp{"renew", "db-3/uid-db-3"}, false},
		{"an instance's own ServiceAccount never writes it without its Pod's token", "db-primary", heldBy,
			leaseActor{user: sa("db-2")}, leaseOp{"renew", "db-2"}, false},
		{"another Cluster's instance, from its own ServiceAccount, never writes it", "db-primary", heldBy,
			leaseActor{sa("other-1"), "other-1", "uid-other-1"}, leaseOp{"renew", "other-1/uid-other-1"}, false},
		{"the operator deletes it", "db-primary", heldBy, operator, leaseOp{verb: "delete"}, true},
		{"the operator writes it", "db-primary", heldBy, operator, leaseOp{"renew", "db-2/uid-db-2"}, true},
		{"Leases of any other name are not affected", "tenant-leader", "tenant", tenant, leaseOp{"renew", "tenant"}, true},
		{"Leases of any other name are not affected, delete", "tenant-leader", "tenant", tenant, leaseOp{verb: "delete"}, true},
		{"a Lease named -primary without a Cluster of that name is not affected", "app-primary", "tenant", tenant, leaseOp{verb: "delete"}, true},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			err := send(t, tc.lease, tc.holder, tc.actor, tc.op)
			if (err == nil) != tc.allowed {
				t.Errorf("allowed %v, want %v (%v)", err == nil, tc.allowed, err)
			}
			if err != nil && !refusedByLeasePolicy(err) {
				t.Errorf("refused with %v, want a refusal by a rule of the policy cloudnative-mysql-primary-lease", err)
			}
		})
	}

	t.Run("a Cluster being deleted no longer protects its Lease (garbage collection removes it)", func(t *testing.T) {
		setLease(t, clientAs(t, env, operatorAccount, ""), ns, "other-primary", "other-1/uid-other-1")
		var c v1.Cluster
		check.Must(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "other"}, &c))
		// A finalizer keeps the Cluster, being deleted, in place.
		hold := client.MergeFrom(c.DeepCopy())
		c.Finalizers = append(c.Finalizers, "test.cloudnative-mysql.io/hold")
		check.Must(t, env.Client.Patch(ctx, &c, hold))
		check.Must(t, env.Client.Delete(ctx, &c))
		t.Cleanup(func() {
			release := client.MergeFrom(c.DeepCopy())
			c.Finalizers = nil
			if err := env.Client.Patch(ctx, &c, release); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("removing the test's finalizer: %v", err)
			}
		})
		check.Eventually(t, 30*time.Second, "the tenant deletes the Lease of the Cluster being deleted", func(ctx context.Context) (bool, error) {
			err := clientAsPod(t, env, tenant.user, tenant.pod, tenant.uid).Delete(ctx,
				&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "other-primary"}})
			return err == nil || apierrors.IsNotFound(err), nil
		})
	})
}

// setLease makes the Lease name in ns name holder, as c (the operator) writes it: created or
// updated; "" deletes it; "-" leaves it without a holder.
func setLease(t *testing.T, c client.Client, ns, name, holder string) {
	t.Helper()
	ctx := context.Background()
	var l coordinationv1.Lease
	err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &l)
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	exists := err == nil
	if holder == "" {
		if exists {
			check.Must(t, c.Delete(ctx, &l))
		}
		return
	}
	now := metav1.NewMicroTime(time.Now())
	l.Namespace, l.Name = ns, name
	l.Spec = coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder), RenewTime: &now, LeaseDurationSeconds: ptr.To[int32](15)}
	if holder == "-" {
		l.Spec.HolderIdentity = nil
	}
	if exists {
		check.Must(t, c.Update(ctx, &l))
	} else {
		check.Must(t, c.Create(ctx, &l))
	}
}

// refusedByLeasePolicy: err is a refusal by a rule of the primary Lease policy, not by RBAC nor
// an expression that failed to evaluate.
func refusedByLeasePolicy(err error) bool {
	msg := err.Error()
	return apierrors.IsForbidden(err) && strings.Contains(msg, "ValidatingAdmissionPolicy 'cloudnative-mysql-primary-lease'") &&
		!strings.Contains(msg, "resulted in error")
}

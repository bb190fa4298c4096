package manifests_test

import (
	"context"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/failover"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instance"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
)

// podNameExtra and podUIDExtra are the user extras the API server sets from a bound
// ServiceAccount token: the Pod it was issued to.
const (
	podNameExtra = "authentication.kubernetes.io/pod-name"
	podUIDExtra  = "authentication.kubernetes.io/pod-uid"
)

// clientAs is a client that impersonates user; pod, when set, is the Pod a bound token names.
func clientAs(t *testing.T, env *kubetest.Env, user, pod string) client.Client {
	t.Helper()
	return clientAsPod(t, env, user, pod, "")
}

// clientAsPod is a client that impersonates user with a bound token of Pod pod, UID uid (each
// left out when empty), as the API server authenticates a Pod's ServiceAccount token.
func clientAsPod(t *testing.T, env *kubetest.Env, user, pod, uid string) client.Client {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Extra: map[string][]string{}}
	if pod != "" {
		cfg.Impersonate.Extra[podNameExtra] = []string{pod}
	}
	if uid != "" {
		cfg.Impersonate.Extra[podUIDExtra] = []string{uid}
	}
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func lease(ns, name string) *coordinationv1.Lease {
	return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

// TestInstancePolicies installs config/default and checks what its admission policies let a
// Cluster's instances do beyond what their Role says, and that they leave everyone else alone.
func TestInstancePolicies(t *testing.T) {
	env := kubetest.StartT(t, kubetest.Options{})
	k := newKubectl(t, env)
	k.must("apply", "--server-side", "--force-conflicts", "-k", "config/default")
	ns := env.NewNamespace(t)
	ctx := context.Background()
	c := testCluster(t, env, ns, "db")
	c.Status = v1.ClusterStatus{CurrentPrimary: "db-1", TargetPrimary: "db-2", FencedInstances: []string{"db-3"},
		DivergedInstances: []string{"db-4"}, Instances: 4}
	check.Must(t, env.Client.Status().Update(ctx, c))
	createInstanceRBAC(t, env, c)
	// Another workload of the namespace that may create Leases (say, its own leader election).
	other := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"create"}}}}
	check.Must(t, env.Client.Create(ctx, other))
	check.Must(t, env.Client.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "app"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "app", Namespace: ns}}}))

	instanceSA := "system:serviceaccount:" + ns + ":db"
	// The policies take effect a moment after they are created.
	check.Eventually(t, 30*time.Second, "the Lease policy refuses another name to the instances", func(ctx context.Context) (bool, error) {
		err := clientAs(t, env, instanceSA, "db-2").Create(ctx, lease(ns, "not-the-primary"))
		return err != nil && strings.Contains(err.Error(), "may create only the Lease db-primary"), nil
	})
	ownSA := func(pod string) string { return "system:serviceaccount:" + ns + ":" + pod }
	for _, tc := range []struct {
		rule, user, pod, lease string
		allowed                bool
	}{
		{"an instance's own ServiceAccount creates its Cluster's primary Lease from its Pod", ownSA("db-2"), "db-2", "db-primary", true},
		{"an instance's own ServiceAccount never creates another Lease", ownSA("db-2"), "db-2", "other-primary", false},
		{"an instance's own ServiceAccount never acts from another Pod", ownSA("db-2"), "db-3", "db-primary", false},
	} {
		l := lease(ns, tc.lease)
		l.Spec.HolderIdentity = ptr.To(tc.pod + "/uid-" + tc.pod)
		err := clientAsPod(t, env, tc.user, tc.pod, "uid-"+tc.pod).Create(ctx, l)
		if (err == nil) != tc.allowed {
			t.Errorf("%s: allowed %v, want %v (%v)", tc.rule, err == nil, tc.allowed, err)
		}
		if err == nil { // the operator removes it (the primary Lease policy refuses anyone else)
			check.Must(t, clientAs(t, env, operatorAccount, "").Delete(ctx, l))
		}
	}
	for _, tc := range []struct {
		rule, user, lease string
		allowed           bool
	}{
		{"an instance creates its Cluster's primary Lease", instanceSA, "db-primary", true},
		{"an instance never creates another Cluster's Lease", instanceSA, "other-primary", false},
		{"another ServiceAccount of the namespace creates its own Leases", "system:serviceaccount:" + ns + ":app", "app-leader", true},
		{"the operator creates any Lease", operatorAccount, "any-name", true},
	} {
		// As the instance manager creates it: from its Pod, naming that Pod as the holder.
		l := lease(ns, tc.lease)
		l.Spec.HolderIdentity = ptr.To("db-2/uid-db-2")
		err := clientAsPod(t, env, tc.user, "db-2", "uid-db-2").Create(ctx, l)
		if (err == nil) != tc.allowed {
			t.Errorf("%s: allowed %v, want %v (%v)", tc.rule, err == nil, tc.allowed, err)
		}
	}

	// The status: each row is a change an instance (Pod pod) tries on the Cluster as it is now.
	check.Eventually(t, 30*time.Second, "the status policy refuses targetPrimary to the instances", func(ctx context.Context) (bool, error) {
		err := patchStatus(ctx, clientAs(t, env, instanceSA, "db-2"), c, func(st *v1.ClusterStatus) { st.TargetPrimary = "db-3" })
		return err != nil && strings.Contains(err.Error(), "status.targetPrimary"), nil
	})
	// An instance's own ServiceAccount <c>-<n> is that instance, with or without its Pod's token.
	for _, tc := range []struct {
		rule, user, pod string
		change          func(*v1.ClusterStatus)
		allowed         bool
	}{
		{"an own ServiceAccount never changes fencedInstances", ownSA("db-2"), "db-2",
			func(st *v1.ClusterStatus) { st.FencedInstances = nil }, false},
		{"an own ServiceAccount never acts from another Pod", ownSA("db-3"), "db-2",
			func(st *v1.ClusterStatus) { st.DivergedInstances = append(st.DivergedInstances, "db-2") }, false},
		{"an own ServiceAccount without a Pod's token is still only itself", ownSA("db-3"), "",
			func(st *v1.ClusterStatus) { st.DivergedInstances = append(st.DivergedInstances, "db-1") }, false},
		{"an own ServiceAccount never records another as the primary", ownSA("db-3"), "",
			func(st *v1.ClusterStatus) { st.CurrentPrimary, st.CurrentPrimaryTimestamp = "db-2", ptrTime() }, false},
		{"an own ServiceAccount adds its instance to divergedInstances", ownSA("db-3"), "db-3",
			func(st *v1.ClusterStatus) { st.DivergedInstances = append(st.DivergedInstances, "db-3") }, true},
	} {
		err := patchStatus(ctx, clientAs(t, env, tc.user, tc.pod), c, tc.change)
		if (err == nil) != tc.allowed {
			t.Errorf("%s: allowed %v, want %v (%v)", tc.rule, err == nil, tc.allowed, err)
		}
	}
	for _, tc := range []struct {
		rule, pod string
		change    func(*v1.ClusterStatus)
		allowed   bool
	}{
		{"never fencedInstances", "db-2", func(st *v1.ClusterStatus) { st.FencedInstances = nil }, false},
		{"never conditions", "db-2", func(st *v1.ClusterStatus) {
			st.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Forged", LastTransitionTime: metav1.Now()}}
		}, false},
		{"never a condition but Recovered", "db-2", func(st *v1.ClusterStatus) {
			st.Conditions = append(st.Conditions, metav1.Condition{Type: "Recovered", Status: metav1.ConditionTrue, Reason: "Restored", LastTransitionTime: metav1.Now()},
				metav1.Condition{Type: "Degraded", Status: metav1.ConditionFalse, Reason: "Forged", LastTransitionTime: metav1.Now()})
		}, false},
		{"never the Recovered condition without bootstrap.recovery", "db-1", func(st *v1.ClusterStatus) {
			st.Conditions = append(st.Conditions, metav1.Condition{Type: "Recovered", Status: metav1.ConditionFalse, Reason: "BackupNotFound", LastTransitionTime: metav1.Now()})
		}, false},
		{"never status.recovery without bootstrap.recovery", "db-1", func(st *v1.ClusterStatus) {
			st.Recovery = &v1.RecoveryStatus{Backup: "forged"}
		}, false},
		{"never failingPrimary, which decides whether a replica keeps a failover's stopped receiver", "db-2",
			func(st *v1.ClusterStatus) { st.FailingPrimary = "db-1" }, false},
		{"never targetPrimaryCatchUp, which a target that cannot read the old primary must execute before it accepts writes", "db-2",
			func(st *v1.ClusterStatus) { st.TargetPrimaryCatchUp = &v1.PrimaryCatchUp{Instance: "db-2"} }, false},
		{"never the semi-sync status", "db-2", func(st *v1.ClusterStatus) { st.SemiSync = &v1.SemiSyncStatus{Active: true} }, false},
		{"never the failover readiness", "db-1", func(st *v1.ClusterStatus) {
			st.FailoverReadiness = &v1.FailoverReadiness{Safe: true, Reason: "CandidateReady"}
		}, false},
		{"never another instance's replication facts", "db-2", func(st *v1.ClusterStatus) {
			st.InstanceReplication = map[string]v1.InstanceReplicationStatus{"db-3": {IORunning: true}}
		}, false},
		{"never the pending updates", "db-1", func(st *v1.ClusterStatus) {
			st.PendingUpdates = []v1.PendingUpdate{{Kind: v1.PendingPodSpec, Instances: []string{"db-1"}}}
		}, false},
		{"never primaryRestart, which holds failovers back while the primary restarts", "db-1", func(st *v1.ClusterStatus) {
			st.PrimaryRestart = &v1.PrimaryRestart{Instance: "db-1", PodUID: "x", RequestedAt: metav1.Now()}
		}, false},
		{"currentPrimary never names another instance than targetPrimary", "db-3", func(st *v1.ClusterStatus) { st.CurrentPrimary = "db-3" }, false},
		{"a Pod never records another as the primary", "db-3", func(st *v1.ClusterStatus) {
			st.CurrentPrimary, st.CurrentPrimaryTimestamp = "db-2", ptrTime()
		}, false},
		{"currentPrimaryTimestamp changes only with currentPrimary", "db-2", func(st *v1.ClusterStatus) { st.CurrentPrimaryTimestamp = ptrTime() }, false},
		{"a Pod never adds another to divergedInstances", "db-3", func(st *v1.ClusterStatus) {
			st.DivergedInstances = append(st.DivergedInstances, "db-1")
		}, false},
		{"an instance adds itself to divergedInstances", "db-3", func(st *v1.ClusterStatus) {
			st.DivergedInstances = append(st.DivergedInstances, "db-3")
		}, true},
		{"never removes one", "db-3", func(st *v1.ClusterStatus) { st.DivergedInstances = []string{"db-3"} }, false},
		{"the current primary's archiver keeps the BinlogArchiving condition", "db-1", func(st *v1.ClusterStatus) {
			st.Conditions = append(st.Conditions, metav1.Condition{Type: "BinlogArchiving", Status: metav1.ConditionTrue, Reason: "Archiving", LastTransitionTime: metav1.Now()})
		}, true},
		{"a replica never writes the BinlogArchiving condition", "db-3", func(st *v1.ClusterStatus) {
			st.Conditions = append(st.Conditions, metav1.Condition{Type: "BinlogArchiving", Status: metav1.ConditionFalse, Reason: "Forged", LastTransitionTime: metav1.Now()})
		}, false},
		{"the current primary's archiver writes status.binlogArchive", "db-1", func(st *v1.ClusterStatus) {
			st.BinlogArchive = &v1.BinlogArchiveStatus{Instance: "db-1"}
		}, true},
		{"a replica never writes status.binlogArchive", "db-3", func(st *v1.ClusterStatus) {
			st.BinlogArchive = &v1.BinlogArchiveStatus{Instance: "db-3"}
		}, false},
		{"the target records itself as the current primary", "db-2", func(st *v1.ClusterStatus) {
			st.CurrentPrimary, st.CurrentPrimaryTimestamp = "db-2", ptrTime()
		}, true},
	} {
		err := patchStatus(ctx, clientAs(t, env, instanceSA, tc.pod), c, tc.change)
		if (err == nil) != tc.allowed {
			t.Errorf("%s: allowed %v, want %v (%v)", tc.rule, err == nil, tc.allowed, err)
		}
	}
	// A Cluster with bootstrap.recovery: its restoring instance records the outcome, and nothing else.
	recovering := testCluster(t, env, ns, "rec")
	recovering.Spec.Bootstrap = &v1.BootstrapConfiguration{Recovery: &v1.BootstrapRecovery{Backup: &v1.LocalObjectReference{Name: "b"}}}
	check.Must(t, env.Client.Update(ctx, recovering))
	recovering.Status = v1.ClusterStatus{CurrentPrimary: "rec-1", TargetPrimary: "rec-1", Instances: 1}
	check.Must(t, env.Client.Status().Update(ctx, recovering))
	createInstanceRBAC(t, env, recovering)
	recSA := "system:serviceaccount:" + ns + ":rec"
	for _, tc := range []struct {
		rule    string
		change  func(*v1.ClusterStatus)
		allowed bool
	}{
		{"a recovering instance records the Recovered condition and status.recovery", func(st *v1.ClusterStatus) {
			st.Conditions = append(st.Conditions, metav1.Condition{Type: "Recovered", Status: metav1.ConditionTrue, Reason: "Restored", LastTransitionTime: metav1.Now()})
			st.Recovery = &v1.RecoveryStatus{Backup: "b"}
		}, true},
		{"a recovering instance never writes another condition", func(st *v1.ClusterStatus) {
			st.Conditions = append(st.Conditions, metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Forged", LastTransitionTime: metav1.Now()})
		}, false},
	} {
		err := patchStatus(ctx, clientAs(t, env, recSA, "rec-1"), recovering, tc.change)
		if (err == nil) != tc.allowed {
			t.Errorf("%s: allowed %v, want %v (%v)", tc.rule, err == nil, tc.allowed, err)
		}
	}
	// Everyone else is unaffected: the operator writes any field.
	check.Must(t, patchStatus(ctx, clientAs(t, env, operatorAccount, ""), c, func(st *v1.ClusterStatus) {
		st.TargetPrimary, st.FencedInstances = "db-1", nil
	}))

	t.Run("the instance manager's Lease code under these permissions", func(t *testing.T) {
		ns := env.NewNamespace(t)
		c := testCluster(t, env, ns, "db")
		createInstanceRBAC(t, env, c)
		owner := metav1.OwnerReference{APIVersion: v1.GroupVersion.String(), Kind: "Cluster", Name: c.Name, UID: c.UID}
		// keeperIn is the Lease keeper of instance pod in its Pod of UID uid, with that Pod's token.
		keeperIn := func(name, pod, uid string) *instance.PrimaryLease {
			as := clientAsPod(t, env, "system:serviceaccount:"+ns+":db", pod, uid)
			l := instance.NewPrimaryLease(as, types.NamespacedName{Namespace: ns, Name: name}, failover.LeaseHolder{Instance: pod, PodUID: uid},
				clock.RealClock{}, func(context.Context) error { return nil }, logr.Discard())
			l.Configure(true, owner)
			return l
		}
		keeper := func(name string) *instance.PrimaryLease { return keeperIn(name, "db-1", "uid-db-1") }
		own := keeper("db-primary")
		// An instance creates the Lease only as the target primary; the policy sees the Cluster
		// through a watch, a moment after the operator writes it.
		check.Must(t, patchStatus(ctx, clientAs(t, env, operatorAccount, ""), c, func(st *v1.ClusterStatus) { st.TargetPrimary = "db-1" }))
		check.Eventually(t, 30*time.Second, "db-1 creates the Lease as the target primary", func(ctx context.Context) (bool, error) {
			return own.Acquire(ctx) == nil, nil
		})
		check.Must(t, own.Acquire(ctx)) // renewed
		check.Must(t, own.Release(ctx))
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db-primary"}, &coordinationv1.Lease{}); !apierrors.IsNotFound(err) {
			t.Errorf("the released Lease is still there: %v", err)
		}
		if err := keeper("other-primary").Acquire(ctx); err == nil {
			t.Errorf("an instance acquired another Cluster's Lease")
		}
	})
}

func ptrTime() *metav1.Time {
	now := metav1.NewTime(time.Now().Add(time.Hour).Truncate(time.Second))
	return &now
}

// patchStatus reads the Cluster as admin would and sends change as c sends it: a merge patch of
// the status under an optimistic lock, the way the instance manager records itself.
func patchStatus(ctx context.Context, c client.Client, key *v1.Cluster, change func(*v1.ClusterStatus)) error {
	var cur v1.Cluster
	if err := c.Get(ctx, client.ObjectKeyFromObject(key), &cur); err != nil {
		return err
	}
	patch := client.MergeFromWithOptions(cur.DeepCopy(), client.MergeFromWithOptimisticLock{})
	change(&cur.Status)
	return c.Status().Patch(ctx, &cur, patch)
}

// TestInstanceStatusPolicyCoversEveryField: each field of the Cluster status is either one an
// instance writes or one the status policy keeps unchanged, so a new field is never left open.
func TestInstanceStatusPolicyCoversEveryField(t *testing.T) {
	data, err := os.ReadFile(kubetest.RepoRoot() + "/config/rbac/instance_policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	written := map[string]bool{"currentPrimary": true, "currentPrimaryTimestamp": true, "divergedInstances": true,
		"recovery": true, "conditions": true, "binlogArchive": true}
	st := reflect.TypeOf(v1.ClusterStatus{})
	for i := range st.NumField() {
		name, _, _ := strings.Cut(st.Field(i).Tag.Get("json"), ",")
		guarded := strings.Contains(string(data), `"an instance may not change status.`+name+`"`)
		if written[name] == guarded {
			t.Errorf("status.%s: written by instances %v, kept unchanged by the policy %v; exactly one must hold",
				name, written[name], guarded)
		}
	}
}

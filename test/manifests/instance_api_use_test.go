package manifests_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instance"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
)

// TestInstanceWatchAndRoutesUnderItsRole runs the instance manager's Cluster watch and its check
// of the write Services' EndpointSlices as the instances' ServiceAccount, under the Role the
// operator builds: the watch wakes the role reconciler when the Cluster changes, and the check
// sees the Pod in the -rw EndpointSlice and then out of it.
func TestInstanceWatchAndRoutesUnderItsRole(t *testing.T) {
	env := kubetest.StartT(t, kubetest.Options{})
	ns := env.NewNamespace(t)
	ctx := t.Context()
	c := testCluster(t, env, ns, "db")
	createInstanceRBAC(t, env, c)
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":db",
		Extra: map[string][]string{podNameExtra: {"db-1"}, podUIDExtra: {"uid-db-1"}}}
	as, err := client.NewWithWatch(cfg, client.Options{Scheme: env.Scheme})
	check.Must(t, err)

	t.Run("the Cluster's watch wakes the role reconciler", func(t *testing.T) {
		wake := make(chan struct{}, 1)
		wctx, stop := context.WithCancel(ctx)
		defer stop()
		w := &instance.ClusterWatch{Client: as, Cluster: types.NamespacedName{Namespace: ns, Name: "db"}, Wake: wake,
			Clock: clock.RealClock{}, Log: testr.New(t)}
		go w.Run(wctx)
		// The watch sends the Cluster as it is first; then each change.
		select {
		case <-wake:
		case <-time.After(20 * time.Second):
			t.Fatal("the watch sent nothing within 20s (its Role must allow watching the Cluster by name)")
		}
		check.Must(t, patchStatus(ctx, env.Client, c, func(st *v1.ClusterStatus) { st.TargetPrimary = "db-2" }))
		select {
		case <-wake:
		case <-time.After(20 * time.Second):
			t.Fatal("a change of status.targetPrimary did not wake the role reconciler within 20s")
		}
	})

	t.Run("the write Services' EndpointSlices tell whether the Pod is routed", func(t *testing.T) {
		routes := instance.WriteRoutes{Client: as, Cluster: types.NamespacedName{Namespace: ns, Name: "db"}, Pod: "db-1"}
		routed, err := routes.Routed(ctx)
		if err != nil || routed {
			t.Fatalf("without EndpointSlices: routed %v, %v; want false and no error", routed, err)
		}
		slice := &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: "db-rw-abcde", Labels: map[string]string{discoveryv1.LabelServiceName: "db-rw"}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
				TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "db-1"}}},
		}
		check.Must(t, env.Client.Create(ctx, slice))
		if routed, err := routes.Routed(ctx); err != nil || !routed {
			t.Fatalf("listed by db-rw's EndpointSlice: routed %v, %v; want true", routed, err)
		}
		other := routes
		other.Pod = "db-2"
		if routed, err := other.Routed(ctx); err != nil || routed {
			t.Errorf("db-2, not listed: routed %v, %v; want false", routed, err)
		}
		slice.Endpoints[0].TargetRef.Name = "db-2"
		check.Must(t, env.Client.Update(ctx, slice))
		if routed, err := routes.Routed(ctx); err != nil || routed {
			t.Errorf("once the EndpointSlice lists another Pod: routed %v, %v; want false", routed, err)
		}
	})
}

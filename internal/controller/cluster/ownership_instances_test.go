package cluster_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/certs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/cluster"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/instances"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// TestInstancesUseOnlyOwnedObjects: a PVC, Pod, certificate or CA Secret someone else made under
// the name of the Cluster's first instance is never mounted, changed or deleted; no Pod is created
// for that instance, and the Cluster reports the object in its OwnershipConflict condition and a
// Warning Event. Each row places one foreign object before the Cluster's first reconcile.
func TestInstancesUseOnlyOwnedObjects(t *testing.T) {
	labels := map[string]string{v1.ClusterLabel: "db"} // as if it were the Cluster's
	for _, tc := range []struct {
		name  string
		obj   func(ns string) clientObject
		names string
	}{
		{name: "a PVC under the instance's name is never mounted", names: "PersistentVolumeClaim db-1",
			obj: func(ns string) clientObject {
				return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "db-1", Namespace: ns, Labels: labels},
					Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
						Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
			}},
		{name: "a Pod under the instance's name is left alone", names: "Pod db-1",
			obj: func(ns string) clientObject {
				return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "db-1", Namespace: ns, Labels: labels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "someone/else"}}}}
			}},
		{name: "a server certificate under the instance's name is never mounted", names: "Secret " + specs.ServerCertSecretName("db-1"),
			obj: func(ns string) clientObject {
				return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: specs.ServerCertSecretName("db-1"), Namespace: ns},
					Data: map[string][]byte{certs.CertKey: []byte("someone else's")}}
			}},
		{name: "a replication client certificate under the Cluster's name is never mounted", names: "Secret " + specs.ReplicationClientSecretName("db"),
			obj: func(ns string) clientObject {
				return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: specs.ReplicationClientSecretName("db"), Namespace: ns},
					Data: map[string][]byte{certs.CertKey: []byte("someone else's")}}
			}},
		{name: "a CA under the Cluster's name signs nothing and no Pod trusts it", names: "Secret " + specs.CASecretName("db"),
			obj: func(ns string) clientObject { return foreignCA(t, ns) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newClusterWorld(t, nil)
			foreign := tc.obj(w.NS)
			w.Create(foreign)
			before := foreign.GetResourceVersion()
			for range 2 { // the second pass sees the refused object again, and still leaves it
				w.reconcileOK()
			}
			live := foreign.DeepCopyObject().(clientObject)
			w.Get(foreign.GetName(), live)
			if live.GetResourceVersion() != before || len(live.GetOwnerReferences()) != 0 {
				t.Errorf("the foreign %s was changed: resourceVersion %s -> %s, owners %v", tc.names, before,
					live.GetResourceVersion(), live.GetOwnerReferences())
			}
			var pod corev1.Pod
			err := w.Client.Get(w.Ctx, w.Key("db-1"), &pod)
			switch _, isPod := foreign.(*corev1.Pod); {
			case isPod && err != nil:
				t.Fatalf("the foreign Pod is gone: %v", err)
			case !isPod && !apierrors.IsNotFound(err):
				t.Errorf("Pod db-1 was created beside the foreign %s (err %v)", tc.names, err)
			}
			var c v1.Cluster
			w.Get("db", &c)
			cond := meta.FindStatusCondition(c.Status.Conditions, cluster.ConditionOwnershipConflict)
			if cond == nil || cond.Status != metav1.ConditionTrue || !strings.Contains(cond.Message, tc.names) {
				t.Errorf("OwnershipConflict = %+v, want it to name %s", cond, tc.names)
			}
			events := strings.Join(w.Events(), "\n")
			if strings.Count(events, "Warning OwnershipConflict") != 1 || strings.Contains(events, ", ;") || strings.Contains(events, ", ,") {
				t.Errorf("want one OwnershipConflict Warning naming each object once over two reconciles, got:\n%s", events)
			}

			// Once the foreign object is gone, the instance is made from the Cluster's own objects.
			live.SetFinalizers(nil) // a PVC's protection finalizer: no kube-controller-manager here
			if err := w.Client.Update(w.Ctx, live); err != nil {
				t.Fatal(err)
			}
			if err := w.Client.Delete(w.Ctx, live); err != nil {
				t.Fatal(err)
			}
			w.Eventually("the foreign object to be gone", w.Gone(live))
			for range 2 { // certificates first, then the instance
				w.reconcileOK()
			}
			w.Get("db-1", &pod)
			if ref := metav1.GetControllerOf(&pod); ref == nil || ref.UID != c.UID {
				t.Errorf("Pod db-1 is not the Cluster's: owners %v", pod.OwnerReferences)
			}
			w.Get("db", &c)
			if cond := meta.FindStatusCondition(c.Status.Conditions, cluster.ConditionOwnershipConflict); cond != nil {
				t.Errorf("OwnershipConflict still set: %+v", cond)
			}
		})
	}
}

// TestOperatorNeverTrustsAForeignCA: the operator's mTLS client to the instances trusts the
// Cluster's CA and presents its client certificate only while the Cluster controls both Secrets;
// a CA Secret replaced by someone else's (same data, no owner) is refused before any connection.
func TestOperatorNeverTrustsAForeignCA(t *testing.T) {
	w := newClusterWorld(t, nil)
	w.reconcileOK()
	var c v1.Cluster
	w.Get("db", &c)
	pod := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "db-1", Namespace: w.NS},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "127.0.0.1"}}
	mtls := instances.MTLS{Reader: w.Client, Timeout: 200_000_000}
	_, errs := mtls.InstanceStatuses(w.Ctx, &c, []corev1.Pod{pod})
	if errs["db-1"] == nil || errors.Is(errs["db-1"], instances.ErrNotControlled) {
		t.Fatalf("with the Cluster's own CA: error %v, want a connection error (nothing listens)", errs["db-1"])
	}

	owned := w.secret(specs.CASecretName("db"))
	if err := w.Client.Delete(w.Ctx, owned); err != nil {
		t.Fatal(err)
	}
	w.Eventually("the CA Secret to be gone", w.Gone(owned.DeepCopy()))
	w.Create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: owned.Name, Namespace: w.NS}, Data: owned.Data})
	_, errs = mtls.InstanceStatuses(w.Ctx, &c, []corev1.Pod{pod})
	if !errors.Is(errs["db-1"], instances.ErrNotControlled) {
		t.Errorf("with a CA Secret the Cluster does not control: error %v, want ErrNotControlled", errs["db-1"])
	}
}

// TestFailoverDeletesOnlyTheClustersPod: the failover deletes the old primary's Pod only while
// the Cluster controls it; a Pod someone else made under such a name stays.
func TestFailoverDeletesOnlyTheClustersPod(t *testing.T) {
	w := newClusterWorld(t, nil)
	for range 2 { // certificates first, then the instance db-1
		w.reconcileOK()
	}
	var c v1.Cluster
	w.Get("db", &c)
	w.Create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "db-7", Namespace: w.NS},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "someone/else"}}}})
	for _, name := range []string{"db-7", "db-1"} {
		if _, err := w.rec.ActFailover(w.Ctx, &c, cluster.FailoverWork{DeletePod: name}); err != nil {
			t.Fatalf("failover act deleting %s: %v", name, err)
		}
	}
	var pod corev1.Pod
	w.Get("db-7", &pod)
	if pod.DeletionTimestamp != nil {
		t.Errorf("the foreign Pod db-7 is being deleted")
	}
	own := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "db-1", Namespace: w.NS}}
	w.Eventually("the Cluster's Pod db-1 to be deleted", func(ctx context.Context) (bool, error) {
		err := w.Client.Get(ctx, w.Key("db-1"), own)
		return apierrors.IsNotFound(err) || (err == nil && own.DeletionTimestamp != nil), client.IgnoreNotFound(err)
	})
}

// clientObject is what a row places: any object of the namespace.
type clientObject = client.Object

// foreignCA is a CA Secret under the Cluster's CA name that someone else made: a real CA, no owner.
func foreignCA(t *testing.T, ns string) *corev1.Secret {
	ca, err := certs.NewCA("someone-else", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: specs.CASecretName("db"), Namespace: ns},
		Data: map[string][]byte{specs.CACertKey: ca.CertPEM, specs.CAKeyKey: ca.KeyPEM}}
}

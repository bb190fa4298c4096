package cluster_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/cluster"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// TestClusterNamedDefaultLeavesForeignObjectsAlone: a Cluster named default must not take over
// the namespace's default ServiceAccount (binding the instances' Roles to it, and later
// garbage-collecting it with the Cluster: its instances run as default-<n>), a Service or a
// certificate Secret someone else made under the names it would use. It reports them and
// reconciles everything else.
func TestClusterNamedDefaultLeavesForeignObjectsAlone(t *testing.T) {
	w := newClusterWorld(t, func(c *v1.Cluster) { c.Name = "default" })
	if err := w.Client.Create(w.Ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: w.NS}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	ro := specs.RoleServiceName("default", v1.ServiceSelectorTypeRO)
	w.Create(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: ro, Namespace: w.NS, Labels: map[string]string{"app": "web"}},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}}})
	tls := specs.ReplicationClientSecretName("default")
	w.Create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: tls, Namespace: w.NS},
		Data: map[string][]byte{"tls.crt": []byte("someone else's")}})

	for range 2 { // the second pass sees the refused objects again, and still leaves them
		if _, err := w.rec.Reconcile(w.Ctx, ctrl.Request{NamespacedName: w.Key("default")}); err != nil {
			t.Fatalf("reconcile: %v", err)
		}
	}

	var sa corev1.ServiceAccount
	w.Get("default", &sa)
	if len(sa.OwnerReferences) != 0 || sa.Annotations[v1.GroupVersion.Group+"/applied-hash"] != "" {
		t.Errorf("the default ServiceAccount was taken over: owners %v, annotations %v", sa.OwnerReferences, sa.Annotations)
	}
	for _, name := range []string{specs.RoleName("default"), specs.PrimaryRoleName("default")} {
		var rb rbacv1.RoleBinding
		if err := w.Client.Get(w.Ctx, w.Key(name), &rb); client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
		for _, s := range rb.Subjects {
			if s.Name == "default" {
				t.Errorf("RoleBinding %s grants the instances' Role to the default ServiceAccount: %v", name, rb.Subjects)
			}
		}
	}
	var svc corev1.Service
	w.Get(ro, &svc)
	if len(svc.OwnerReferences) != 0 || svc.Spec.Selector["app"] != "web" || len(svc.Spec.Selector) != 1 {
		t.Errorf("the foreign Service %s was changed: owners %v, selector %v", ro, svc.OwnerReferences, svc.Spec.Selector)
	}
	if s := w.secret(tls); string(s.Data["tls.crt"]) != "someone else's" || len(s.OwnerReferences) != 0 {
		t.Errorf("the foreign Secret %s was overwritten", tls)
	}

	// Everything else was reconciled: the rw Service, the CA, the status.
	w.Get(specs.RoleServiceName("default", v1.ServiceSelectorTypeRW), &svc)
	w.secret(specs.CASecretName("default"))
	var c v1.Cluster
	w.Get("default", &c)
	if c.Status.TargetPrimary != "" {
		t.Errorf("targetPrimary %q: the first instance would mount the foreign Secret %s", c.Status.TargetPrimary, tls)
	}
	cond := meta.FindStatusCondition(c.Status.Conditions, cluster.ConditionOwnershipConflict)
	if cond == nil || cond.Status != metav1.ConditionTrue {
		t.Fatalf("no OwnershipConflict condition: %+v", c.Status.Conditions)
	}
	for _, want := range []string{"Service " + ro, "Secret " + tls} {
		if !strings.Contains(cond.Message, want) {
			t.Errorf("OwnershipConflict %q does not name %s", cond.Message, want)
		}
	}
	events := strings.Join(w.Events(), "\n")
	if strings.Count(events, "Warning OwnershipConflict") != 1 {
		t.Errorf("want one OwnershipConflict Warning over two reconciles, got:\n%s", events)
	}

	// Once the foreign Service and Secret are gone, the Cluster makes its own; the condition
	// names only what is still foreign.
	var foreignSvc corev1.Service
	w.Get(ro, &foreignSvc)
	if err := w.Client.Delete(w.Ctx, &foreignSvc); err != nil {
		t.Fatal(err)
	}
	if err := w.Client.Delete(w.Ctx, w.secret(tls)); err != nil {
		t.Fatal(err)
	}
	if _, err := w.rec.Reconcile(w.Ctx, ctrl.Request{NamespacedName: w.Key("default")}); err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	if _, err := w.rec.Reconcile(w.Ctx, ctrl.Request{NamespacedName: w.Key("default")}); err != nil {
		t.Fatalf("reconcile: %v", err) // the certificate first, then the instance
	}
	w.Get("default", &c)
	if c.Status.TargetPrimary != "default-1" {
		t.Errorf("targetPrimary %q once the Cluster's own Secret exists, want default-1", c.Status.TargetPrimary)
	}
	w.Get(ro, &svc)
	if ref := metav1.GetControllerOf(&svc); ref == nil || ref.Name != "default" {
		t.Errorf("the Cluster did not create its own %s: owners %v", ro, svc.OwnerReferences)
	}
	w.Get("default", &c)
	cond = meta.FindStatusCondition(c.Status.Conditions, cluster.ConditionOwnershipConflict)
	if cond != nil {
		t.Errorf("OwnershipConflict = %+v once the foreign objects are gone, want none (the instances run as default-1..., never as default)", cond)
	}
	var own corev1.ServiceAccount
	w.Get("default-1", &own)
	if ref := metav1.GetControllerOf(&own); ref == nil || ref.Name != "default" {
		t.Errorf("the first instance's ServiceAccount default-1 is not the Cluster's: owners %v", own.OwnerReferences)
	}
}

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mysqlv1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

const mysqlImage = "cloudnative-mysql/mysql:9.7"

// A three-instance Cluster becomes Ready; a row written on the Pod behind -rw is read on the Pods
// behind -ro. Instance Pods reach each other by Service DNS names, so the local cluster needs its
// DNS (see docs/development.md, "Local cluster").
func TestClusterThreeInstancesReplicate(t *testing.T) {
	var dns corev1.Service
	if err := env.c.Get(context.Background(), client.ObjectKey{Namespace: "kube-system", Name: "kube-dns"}, &dns); err != nil {
		t.Fatal("the local cluster has no cluster DNS (kube-system/kube-dns): replicas clone from " +
			"db-1.<namespace>.svc, which does not resolve without it")
	}
	ns := Namespace(t)
	Apply(t, ns, `
apiVersion: mysql.cloudnative-mysql.io/v1alpha1
kind: Cluster
metadata: {name: db}
spec:
  instances: 3
  imageName: `+mysqlImage+`
  storage: {size: 1Gi}
`)
	cl := &mysqlv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"}}
	ConditionTrue(t, cl, "Ready", 10*time.Minute, func() []metav1.Condition { return cl.Status.Conditions })

	// root@localhost has the password of db-root and matches the local socket only
	// (skip_name_resolve): the test speaks SQL inside the Pods the role Services route to.
	var rootSecret corev1.Secret
	if err := env.c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "db-root"}, &rootSecret); err != nil {
		t.Fatal(err)
	}
	rootPassword := string(rootSecret.Data[corev1.BasicAuthPasswordKey])
	sql := func(pod, stmt string) string {
		t.Helper()
		out, stderr, err := RootSQL(ns, pod, rootPassword, stmt)
		if err != nil {
			t.Fatalf("%s on %s: %v\n%s", stmt, pod, err, stderr)
		}
		return strings.TrimSpace(out)
	}

	rw := servicePods(t, ns, "db-rw")
	if len(rw) != 1 || rw[0] != cl.Status.CurrentPrimary {
		t.Fatalf("db-rw routes to %v, the primary is %s", rw, cl.Status.CurrentPrimary)
	}
	sql(rw[0], "CREATE DATABASE IF NOT EXISTS e2e; CREATE TABLE IF NOT EXISTS e2e.t (id INT PRIMARY KEY, v VARCHAR(32)); REPLACE INTO e2e.t VALUES (1, 'written-on-rw')")

	var ro []string
	WaitFor(t, 2*time.Minute, "two replicas behind db-ro", func() (bool, error) {
		ro = servicePods(t, ns, "db-ro")
		return len(ro) == 2, fmt.Errorf("db-ro routes to %v", ro)
	})
	for _, pod := range ro {
		WaitFor(t, time.Minute, "the row on "+pod, func() (bool, error) {
			out, _, err := RootSQL(ns, pod, rootPassword, "SELECT v FROM e2e.t WHERE id = 1")
			return strings.TrimSpace(out) == "written-on-rw", err
		})
	}
}

// servicePods returns the names of the ready Pods behind a Service.
func servicePods(t *testing.T, ns, svc string) []string {
	t.Helper()
	var slices discoveryv1.EndpointSliceList
	if err := env.c.List(context.Background(), &slices, client.InNamespace(ns),
		client.MatchingLabels{discoveryv1.LabelServiceName: svc}); err != nil {
		t.Fatal(err)
	}
	var pods []string
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			if e.TargetRef != nil && (e.Conditions.Ready == nil || *e.Conditions.Ready) {
				pods = append(pods, e.TargetRef.Name)
			}
		}
	}
	return pods
}

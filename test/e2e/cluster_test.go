//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mysqlv1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
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

	// The namespace enforces the "restricted" Pod Security profile, so the API server admitted
	// these Pods only because they run as non-root without capabilities; mysqld itself runs as
	// uid 999 in a data directory below the volume's root.
	var namespace corev1.Namespace
	if err := env.c.Get(context.Background(), client.ObjectKey{Name: ns}, &namespace); err != nil {
		t.Fatal(err)
	}
	if namespace.Labels["pod-security.kubernetes.io/enforce"] != "restricted" {
		t.Fatalf("namespace %s does not enforce the restricted profile: labels %v", ns, namespace.Labels)
	}
	for _, pod := range append(rw, ro...) {
		uids := mysqldUIDs(t, ns, pod)
		for _, uid := range uids {
			if uid == "0" {
				t.Errorf("%s: mysqld runs as root (Uid: %v)", pod, uids)
			}
		}
		t.Logf("%s: mysqld runs as uid %v", pod, uids)
		if got := sql(pod, "SELECT @@datadir"); got != "/var/lib/mysql/data/" {
			t.Errorf("%s: datadir %q, want /var/lib/mysql/data/ (a subdirectory of the volume)", pod, got)
		}
	}
	checkVolumesNotWorldWritable(t, ns)
}

// checkVolumesNotWorldWritable checks the host directories of the namespace's volumes (the local
// node's hostPath provisioner): nothing for others, writable by the instances' group.
func checkVolumesNotWorldWritable(t *testing.T, ns string) {
	t.Helper()
	var pvcs corev1.PersistentVolumeClaimList
	if err := env.c.List(context.Background(), &pvcs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, pvc := range pvcs.Items {
		var pv corev1.PersistentVolume
		if err := env.c.Get(context.Background(), client.ObjectKey{Name: pvc.Spec.VolumeName}, &pv); err != nil {
			t.Fatal(err)
		}
		if pv.Spec.HostPath == nil {
			t.Fatalf("volume %s of %s is not a hostPath volume of the local node", pv.Name, pvc.Name)
		}
		fi, err := os.Stat(pv.Spec.HostPath.Path)
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if fi.Mode().Perm()&0o007 != 0 || st.Gid != uint32(specs.MySQLGID) || fi.Mode().Perm()&0o070 != 0o070 {
			t.Errorf("volume of %s (%s): mode %s, group %d; want nothing for others, group %d with rwx",
				pvc.Name, pv.Spec.HostPath.Path, fi.Mode(), st.Gid, specs.MySQLGID)
		}
	}
}

// mysqldUIDs returns the real, effective, saved and filesystem uids of mysqld in an instance Pod,
// read from /proc inside its container.
func mysqldUIDs(t *testing.T, ns, pod string) []string {
	t.Helper()
	pid, stderr, err := Exec(ns, pod, "mysql", "cat", "/controller/run/mysqld.pid")
	if err != nil {
		t.Fatalf("%s: reading mysqld's pid file: %v\n%s", pod, err, stderr)
	}
	status, stderr, err := Exec(ns, pod, "mysql", "cat", "/proc/"+strings.TrimSpace(pid)+"/status")
	if err != nil {
		t.Fatalf("%s: reading mysqld's status: %v\n%s", pod, err, stderr)
	}
	for _, line := range strings.Split(status, "\n") {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			if uids := strings.Fields(rest); len(uids) == 4 {
				return uids
			}
		}
	}
	t.Fatalf("%s: no Uid line in mysqld's /proc status:\n%s", pod, status)
	return nil
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

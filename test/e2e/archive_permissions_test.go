//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mysqlv1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/plugin"
)

// Each instance runs as its own ServiceAccount, and only the primary's may read the object
// store's credentials: on the local node, a two-instance Cluster archives its binary logs from
// its primary; after a switchover the grant follows the new primary (the old one loses it) and
// the new primary's archiver, which reads the credentials only then, archives what is written
// after it.
func TestArchiveFollowsThePrimaryUnderItsOwnAccount(t *testing.T) {
	storeSecret, store := storeManifests(t)
	ns := Namespace(t)
	ctx := context.Background()
	Apply(t, ns, storeSecret+`---
apiVersion: mysql.cloudnative-mysql.io/v1alpha1
kind: Cluster
metadata: {name: arc}
spec:
  instances: 2
  imageName: `+mysqlImage+`
  storage: {size: 1Gi}
  backup:
    archiveTimeout: 2s
    objectStore:`+store+`
`)
	arc := &mysqlv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "arc"}}
	ConditionTrue(t, arc, "Ready", 6*time.Minute, func() []metav1.Condition { return arc.Status.Conditions })
	for _, name := range []string{"arc-1", "arc-2"} {
		var pod corev1.Pod
		if err := env.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &pod); err != nil {
			t.Fatal(err)
		}
		if pod.Spec.ServiceAccountName != name {
			t.Errorf("Pod %s runs as ServiceAccount %q, want its own, %s", name, pod.Spec.ServiceAccountName, name)
		}
	}
	canRead := func(account, what string) bool {
		out, _ := kubectl("auth", "can-i", "get", what, "-n", ns, "--as=system:serviceaccount:"+ns+":"+account)
		return strings.TrimSpace(out) == "yes"
	}
	grantsFollow := func(primary, replica string) {
		t.Helper()
		WaitFor(t, time.Minute, "the object store's Secret readable by "+primary+" alone", func() (bool, error) {
			p, r := canRead(primary, "secret/store"), canRead(replica, "secret/store")
			return p && !r, fmt.Errorf("%s may read it: %v, %s may: %v", primary, p, replica, r)
		})
		if !canRead(replica, "pods/"+primary) || canRead(replica, "pods/not-an-instance") {
			t.Errorf("%s should read the instances' Pods and no other", replica)
		}
	}
	archivedBy := func(instance string, sql func(pod, stmts string) string, row int) {
		t.Helper()
		wrote := time.Now().Add(-time.Second)
		sql(instance, fmt.Sprintf("INSERT INTO e2e.t VALUES (%d)", row))
		WaitFor(t, 2*time.Minute, instance+"'s archiver archiving row "+fmt.Sprint(row), func() (bool, error) {
			if err := env.c.Get(ctx, client.ObjectKeyFromObject(arc), arc); err != nil {
				return false, err
			}
			a := arc.Status.BinlogArchive
			if a == nil {
				return false, fmt.Errorf("no status.binlogArchive yet")
			}
			return a.Instance == instance && a.LastArchivedTime != nil && !a.LastArchivedTime.Time.Before(wrote),
				fmt.Errorf("archive status %+v", *a)
		})
	}
	sql := rootSQL(t, ns, "arc")
	sql("arc-1", "CREATE DATABASE e2e; CREATE TABLE e2e.t (id INT PRIMARY KEY)")
	grantsFollow("arc-1", "arc-2")
	archivedBy("arc-1", sql, 1)

	// --force: the status may not show arc-2's GTID set yet; the operator checks the target itself.
	if err := plugin.Promote(ctx, env.c, clock.RealClock{}, ns, "arc", "arc-2", true); err != nil {
		t.Fatal(err)
	}
	WaitFor(t, 2*time.Minute, "arc-2 the primary", func() (bool, error) {
		if err := env.c.Get(ctx, client.ObjectKeyFromObject(arc), arc); err != nil {
			return false, err
		}
		return arc.Status.CurrentPrimary == "arc-2", fmt.Errorf("currentPrimary %q", arc.Status.CurrentPrimary)
	})
	grantsFollow("arc-2", "arc-1")
	archivedBy("arc-2", sql, 2)
}

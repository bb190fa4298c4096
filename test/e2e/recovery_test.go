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
	"sigs.k8s.io/controller-runtime/pkg/client"

	mysqlv1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// rootSQL returns a function running statements as root in a Pod of Cluster cluster, with the
// password of <cluster>-root.
func rootSQL(t *testing.T, ns, cluster string) func(pod, stmts string) string {
	t.Helper()
	var secret corev1.Secret
	if err := env.c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: cluster + "-root"}, &secret); err != nil {
		t.Fatal(err)
	}
	password := string(secret.Data[corev1.BasicAuthPasswordKey])
	return func(pod, stmts string) string {
		t.Helper()
		out, stderr, err := RootSQL(ns, pod, password, stmts)
		if err != nil {
			t.Fatalf("%s on %s: %v\n%s", stmts, pod, err, stderr)
		}
		return strings.TrimSpace(out)
	}
}

// A Cluster recovered on the local node from another Cluster's base backup and archived binlogs,
// with no Kubernetes object of the first one needed (bootstrap.recovery.source): rows written
// after the backup come back through the replay of the archive (targetLatest), and the recovered
// Cluster holds exactly the source's rows.
func TestRecoveryFromBackupAndBinlogs(t *testing.T) {
	storeSecret, store := storeManifests(t)
	ns := Namespace(t)
	Apply(t, ns, storeSecret+`---
apiVersion: mysql.cloudnative-mysql.io/v1alpha1
kind: Cluster
metadata: {name: src}
spec:
  instances: 1
  imageName: `+mysqlImage+`
  storage: {size: 1Gi}
  backup:
    archiveTimeout: 2s
    objectStore:`+store+`
`)
	src := &mysqlv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "src"}}
	ConditionTrue(t, src, "Ready", 5*time.Minute, func() []metav1.Condition { return src.Status.Conditions })
	sql := rootSQL(t, ns, "src")
	sql("src-1", "CREATE DATABASE e2e; CREATE TABLE e2e.t (id INT PRIMARY KEY); INSERT INTO e2e.t VALUES (1), (2)")

	takeBackup(t, ns, "src", "base")
	// Written after the base backup: only the archived binlogs carry these.
	wroteAt := time.Now().Add(-time.Second)
	sql("src-1", "INSERT INTO e2e.t VALUES (3), (4), (5); DELETE FROM e2e.t WHERE id = 2")
	want := sql("src-1", "SELECT GROUP_CONCAT(id ORDER BY id) FROM e2e.t")
	executed := sql("src-1", "SELECT @@GLOBAL.gtid_executed")
	WaitFor(t, 2*time.Minute, "the source's archive reaching its last write", func() (bool, error) {
		if err := env.c.Get(context.Background(), client.ObjectKeyFromObject(src), src); err != nil {
			return false, err
		}
		a := src.Status.BinlogArchive
		if a == nil {
			return false, fmt.Errorf("no status.binlogArchive yet")
		}
		return a.LastArchivedTime != nil && !a.LastArchivedTime.Time.Before(wroteAt), fmt.Errorf("archive status %+v", *a)
	})

	Apply(t, ns, `
apiVersion: mysql.cloudnative-mysql.io/v1alpha1
kind: Cluster
metadata: {name: restored}
spec:
  instances: 1
  imageName: `+mysqlImage+`
  storage: {size: 1Gi}
  bootstrap:
    recovery:
      source:
        clusterName: src
        objectStore:`+strings.ReplaceAll(store, "\n      ", "\n          ")+`
      recoveryTarget: {targetLatest: true}
`)
	restored := &mysqlv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "restored"}}
	ConditionTrue(t, restored, "Ready", 8*time.Minute, func() []metav1.Condition { return restored.Status.Conditions })
	ConditionTrue(t, restored, mysqlv1.ConditionRecovered, time.Minute, func() []metav1.Condition { return restored.Status.Conditions })
	rsql := rootSQL(t, ns, "restored")
	if got := rsql("restored-1", "SELECT GROUP_CONCAT(id ORDER BY id) FROM e2e.t"); got != want {
		t.Errorf("the recovered Cluster holds rows %q, the source %q", got, want)
	}
	// The recovered instance holds all the source executed; its own accounts, written once it
	// became primary, come after, under its own server UUID.
	if got := rsql("restored-1", "SELECT GTID_SUBSET('"+executed+"', @@GLOBAL.gtid_executed)"); got != "1" {
		t.Errorf("the recovered gtid_executed lacks some of the source's %s", executed)
	}
	t.Logf("recovered rows %s; the source's gtid_executed %s; status.recovery %+v", want, executed, restored.Status.Recovery)
}

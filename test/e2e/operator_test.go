//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mysqlv1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// The operator runs as a Pod of its Deployment, from the locally built image, and is ready.
func TestOperatorDeploymentReady(t *testing.T) {
	d := DeploymentAvailable(t, operatorNamespace, operatorDeployment, 2*time.Minute)
	if got := d.Spec.Template.Spec.Containers[0].Image; got != "cloudnative-mysql/operator:dev" {
		t.Fatalf("operator image %q", got)
	}
	var pods corev1.PodList
	if err := env.c.List(context.Background(), &pods, client.InNamespace(operatorNamespace),
		client.MatchingLabels(d.Spec.Selector.MatchLabels)); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 1 {
		t.Fatalf("%d operator Pods, want 1", len(pods.Items))
	}
	p := pods.Items[0]
	if p.Status.Phase != corev1.PodRunning || p.Spec.NodeName == "" {
		t.Fatalf("operator Pod %s: phase %s on node %q", p.Name, p.Status.Phase, p.Spec.NodeName)
	}
	logs, err := Logs(operatorNamespace, p.Name, "manager", false)
	if err != nil || !strings.Contains(logs, "Starting workers") {
		t.Fatalf("operator log shows no started controller (err %v):\n%s", err, tail(logs, 20))
	}
}

// A ScheduledBackup of a Cluster creates its immediate Backup, owned by it and labelled with its
// name. The next one waits until that Backup ends (no overlap), which needs a Ready Cluster and a
// reachable object store: that is left to the Cluster tests.
func TestScheduledBackupProducesBackups(t *testing.T) {
	ns := Namespace(t)
	Apply(t, ns, `
apiVersion: v1
kind: Secret
metadata: {name: store}
stringData: {ACCESS_KEY_ID: e2e, SECRET_ACCESS_KEY: e2e-secret}
---
apiVersion: mysql.cloudnative-mysql.io/v1alpha1
kind: Cluster
metadata: {name: db}
spec:
  instances: 1
  imageName: `+mysqlImage+`
  storage: {size: 1Gi}
  backup:
    objectStore:
      bucket: backups
      endpoint: http://127.0.0.1:9000
      forcePathStyle: true
      credentials:
        accessKeyId: {name: store, key: ACCESS_KEY_ID}
        secretAccessKey: {name: store, key: SECRET_ACCESS_KEY}
`)
	sb := &mysqlv1.ScheduledBackup{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "every-minute"},
		Spec: mysqlv1.ScheduledBackupSpec{
			Schedule:             "0 * * * * *", // the most frequent the default --min-schedule-interval accepts
			Cluster:              mysqlv1.LocalObjectReference{Name: "db"},
			Immediate:            ptr.To(true),
			BackupOwnerReference: mysqlv1.BackupOwnerReferenceSelf,
		},
	}
	if err := env.c.Create(context.Background(), sb); err != nil {
		t.Fatal(err)
	}
	var backups mysqlv1.BackupList
	WaitFor(t, 90*time.Second, "a Backup of the ScheduledBackup", func() (bool, error) {
		if err := env.c.List(context.Background(), &backups, client.InNamespace(ns),
			client.MatchingLabels{mysqlv1.ScheduledBackupLabel: sb.Name}); err != nil {
			return false, err
		}
		return len(backups.Items) >= 1, fmt.Errorf("%d Backups", len(backups.Items))
	})
	// The status is written after the Backup is created.
	WaitFor(t, 30*time.Second, "the ScheduledBackup's lastScheduleTime", func() (bool, error) {
		if err := env.c.Get(context.Background(), client.ObjectKeyFromObject(sb), sb); err != nil {
			return false, err
		}
		return sb.Status.LastScheduleTime != nil, nil
	})
	for _, b := range backups.Items {
		if b.Spec.Cluster.Name != sb.Spec.Cluster.Name {
			t.Errorf("Backup %s is of cluster %q", b.Name, b.Spec.Cluster.Name)
		}
		owned := false
		for _, o := range b.OwnerReferences {
			owned = owned || o.UID == sb.UID
		}
		if !owned {
			t.Errorf("Backup %s is not owned by the ScheduledBackup", b.Name)
		}
	}
	// A schedule firing every 5 seconds is refused by the installed operator's default
	// --min-schedule-interval (1m): not ready, a Warning, no Backup.
	fast := &mysqlv1.ScheduledBackup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "every-5s"},
		Spec: mysqlv1.ScheduledBackupSpec{Schedule: "*/5 * * * * *", Cluster: mysqlv1.LocalObjectReference{Name: "db"},
			Immediate: ptr.To(true)}}
	if err := env.c.Create(context.Background(), fast); err != nil {
		t.Fatal(err)
	}
	WaitFor(t, 30*time.Second, "the 5-second schedule refused", func() (bool, error) {
		if err := env.c.Get(context.Background(), client.ObjectKeyFromObject(fast), fast); err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(fast.Status.Conditions, "Ready")
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == "ScheduleTooFrequent", fmt.Errorf("Ready %+v", c)
	})
	WarningEvent(t, ns, "", "ScheduleTooFrequent", "--min-schedule-interval 1m0s", 30*time.Second)
	if err := env.c.List(context.Background(), &backups, client.InNamespace(ns),
		client.MatchingLabels{mysqlv1.ScheduledBackupLabel: fast.Name}); err != nil || len(backups.Items) != 0 {
		t.Errorf("the refused schedule created %d Backups (%v)", len(backups.Items), err)
	}
}

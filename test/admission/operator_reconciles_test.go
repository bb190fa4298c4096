package admission_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
)

// hostileButAdmitted are objects the sweep shows the API server accepts although they can never
// work: odd names, references to nothing, values a Pod or a parser refuses, the largest numbers.
var hostileButAdmitted = []string{
	`{apiVersion: mysql.cloudnative-mysql.io/v1alpha1, kind: Backup, metadata: {name: a.b}, spec: {cluster: {name: a.b}, timeout: 720h}}`,
	`{apiVersion: mysql.cloudnative-mysql.io/v1alpha1, kind: Backup, metadata: {name: 1db}, spec: {cluster: {name: hostile-cpu}, timeout: 1s, online: false}}`,
	`{apiVersion: mysql.cloudnative-mysql.io/v1alpha1, kind: Backup, metadata: {name: ` + strings.Repeat("b", 63) + `}, spec: {cluster: {name: hostile-recovery}}}`,
	`{apiVersion: mysql.cloudnative-mysql.io/v1alpha1, kind: ScheduledBackup, metadata: {name: snow.man}, spec: {schedule: "0 0 2 * * ☃", cluster: {name: hostile-cpu}, immediate: true}}`,
	`{apiVersion: mysql.cloudnative-mysql.io/v1alpha1, kind: ScheduledBackup, metadata: {name: every-second}, spec: {schedule: "* * * * * *", cluster: {name: a.b}, successfulBackupsHistoryLimit: 2147483647, failedBackupsHistoryLimit: 0, timeout: 1s}}`,
	`{apiVersion: mysql.cloudnative-mysql.io/v1alpha1, kind: Cluster, metadata: {name: hostile-cpu}, spec: {instances: 64, resources: {requests: {example.com/dongle: "-1"}}, storage: {size: 8Ei, storageClass: fast.ssd}, failoverDelay: 2147483647, maxSwitchoverDelay: 2147483647, mysql: {parameters: {"a\nb": x, server_id: "7", max_connections: "☃"}}}}`,
	`{apiVersion: mysql.cloudnative-mysql.io/v1alpha1, kind: Cluster, metadata: {name: hostile-recovery}, spec: {instances: 1, storage: {size: 1}, bootstrap: {recovery: {backup: {name: a.b}}}}}`,
	`{apiVersion: mysql.cloudnative-mysql.io/v1alpha1, kind: Cluster, metadata: {name: ` + strings.Repeat("d", 50) + `}, spec: {instances: 2, storage: {size: 1Gi}, managed: {services: {additional: [{name: x, selectorType: r, serviceTemplate: {spec: {type: LoadBalancer, externalTrafficPolicy: Local, loadBalancerSourceRanges: ["::/0"], healthCheckNodePort: 65535}}}]}}}}`,
}

// hostileRefused are writes the API server once admitted although the operator's informers cannot
// decode them: one such object made every list of its kind fail, and the operator reconciled no
// object of that kind in any namespace (measured on a real node with the first). A write with a
// status creates the object, then sends the status through the status subresource.
var hostileRefused = []struct {
	manifest string
	status   map[string]any
	wantErr  string
}{
	{manifest: `{apiVersion: mysql.cloudnative-mysql.io/v1alpha1, kind: Cluster, metadata: {name: hostile-quantity}, spec: {instances: 1, storage: {size: 1Gi}, resources: {limits: {example.com/x: "1e1.5"}}}}`,
		wantErr: "resources.limits values must be quantities"},
	{manifest: `{apiVersion: mysql.cloudnative-mysql.io/v1alpha1, kind: Cluster, metadata: {name: hostile-microtime}, spec: {instances: 1, storage: {size: 1Gi}}}`,
		status:  map[string]any{"binlogArchive": map[string]any{"lastArchivedTime": "2026-11-25T04:00:00Z", "lagSeconds": int64(0)}},
		wantErr: "binlogArchive.lastArchivedTime in body should match"},
	{manifest: `{apiVersion: mysql.cloudnative-mysql.io/v1alpha1, kind: Cluster, metadata: {name: hostile-time}, spec: {instances: 1, storage: {size: 1Gi}}}`,
		status:  map[string]any{"currentPrimaryTimestamp": "2026-11-25t04:00:00z"},
		wantErr: "currentPrimaryTimestamp in body should match"},
	{manifest: `{apiVersion: mysql.cloudnative-mysql.io/v1alpha1, kind: Cluster, metadata: {name: hostile-segments}, spec: {instances: 1, storage: {size: 1Gi}}}`,
		status: map[string]any{"recovery": map[string]any{"pointInTime": map[string]any{
			"target": "latest", "segments": int64(2147483648), "transactions": int64(1), "gtidExecuted": ""}}},
		wantErr: "status.recovery.pointInTime.segments: Invalid value: 2147483648"},
	{manifest: `{apiVersion: mysql.cloudnative-mysql.io/v1alpha1, kind: Backup, metadata: {name: hostile-started}, spec: {cluster: {name: hostile-time}}}`,
		status:  map[string]any{"startedAt": "2026-11-25T04:00:00z"},
		wantErr: "startedAt in body should match"},
	{manifest: `{apiVersion: mysql.cloudnative-mysql.io/v1alpha1, kind: ScheduledBackup, metadata: {name: hostile-slot}, spec: {schedule: "0 0 2 * * *", cluster: {name: hostile-time}}}`,
		status:  map[string]any{"lastScheduleTime": "2026-11-25t02:00:00Z"},
		wantErr: "lastScheduleTime in body should match"},
}

// createHostile creates the hostile-but-admitted objects in ns and tries every hostile write,
// which the API server must refuse. A write it admits is reported, and the test goes on: the
// healthy Cluster's reconcile then shows what that write does to the operator.
func createHostile(t *testing.T, env *kubetest.Env, ns string) {
	t.Helper()
	ctx := context.Background()
	for _, manifest := range hostileButAdmitted {
		u := decode(t, manifest)
		u.SetNamespace(ns)
		if err := env.Client.Create(ctx, u); err != nil {
			t.Fatalf("creating hostile %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
	for _, w := range hostileRefused {
		u := decode(t, w.manifest)
		u.SetNamespace(ns)
		err := env.Client.Create(ctx, u)
		verb := "creating"
		if w.status != nil && err == nil {
			u.Object["status"] = w.status
			err, verb = env.Client.Status().Update(ctx, u), "writing the status of"
		}
		switch {
		case err == nil:
			t.Errorf("%s hostile %s %s was admitted; the operator cannot decode it", verb, u.GetKind(), u.GetName())
		case !strings.Contains(err.Error(), w.wantErr):
			t.Errorf("%s hostile %s %s was refused with\n  %v\nwant a message containing %q", verb, u.GetKind(), u.GetName(), err, w.wantErr)
		}
	}
}

// TestOperatorKeepsReconcilingBesideHostileObjects runs every controller of the operator, watching
// all namespaces as in production, with the hostile-but-admitted objects in one namespace, after
// the hostile writes it cannot decode were refused: a healthy Cluster in another still gets its
// Secrets, Services and status.
func TestOperatorKeepsReconcilingBesideHostileObjects(t *testing.T) {
	env := shared.Get(t)
	ctx := context.Background()
	hostileNS, healthyNS := env.NewNamespace(t), env.NewNamespace(t)
	createHostile(t, env, hostileNS)

	ctrl.SetLogger(zap.New(zap.WriteTo(testWriter{t})))
	startOperator(t, env)

	healthy := decode(t, strings.ReplaceAll(validCluster, "%NAME%", "healthy"))
	healthy.SetNamespace(healthyNS)
	if err := env.Client.Create(ctx, healthy); err != nil {
		t.Fatalf("creating the healthy Cluster: %v", err)
	}
	check.Eventually(t, time.Minute, "the healthy Cluster has its rw Service, app Secret and a status", func(ctx context.Context) (bool, error) {
		var svc corev1.Service
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: healthyNS, Name: "healthy-rw"}, &svc); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		var app corev1.Secret
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: healthyNS, Name: "healthy-app"}, &app); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		var c v1.Cluster
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: healthyNS, Name: "healthy"}, &c); err != nil {
			return false, err
		}
		return c.Status.TargetPrimary != "" && len(c.Status.Conditions) > 0, nil
	})

	// The hostile objects were reconciled too, not skipped: the Backup of a Cluster that does not
	// exist failed, and the Clusters whose Pods the API server accepts got their rw Services (those
	// whose hostile status was refused among them).
	// (hostile-cpu's Pods are refused for their negative extended-resource request: its reconcile
	// stops there and is retried, without holding up the others.)
	check.Eventually(t, time.Minute, "the hostile Backup of a missing Cluster is failed", func(ctx context.Context) (bool, error) {
		var b v1.Backup
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: hostileNS, Name: "a.b"}, &b)
		return err == nil && b.Status.Phase == v1.BackupPhaseFailed, err
	})
	for _, name := range []string{"hostile-recovery", strings.Repeat("d", 50), "hostile-microtime", "hostile-time", "hostile-segments"} {
		check.Eventually(t, time.Minute, "hostile Cluster "+name+" has its rw Service", func(ctx context.Context) (bool, error) {
			var svc corev1.Service
			err := env.Client.Get(ctx, client.ObjectKey{Namespace: hostileNS, Name: name + "-rw"}, &svc)
			return err == nil, client.IgnoreNotFound(err)
		})
	}
}

// testWriter sends the operator's log to the test's, shown when it fails or with -v.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

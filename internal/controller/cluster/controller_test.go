package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/certs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/cluster"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/ctrlworld"
)

// clusterWorld is a namespace on the real API server with one Cluster and the reconciler under
// test, called directly (no manager, no kubelet: Pods stay Pending).
type clusterWorld struct {
	*ctrlworld.World
	instances *fakeInstances
	rec       *cluster.Reconciler
}

func newClusterWorld(t *testing.T, mutate func(*v1.Cluster)) *clusterWorld {
	t.Helper()
	w := &clusterWorld{World: ctrlworld.New(t, shared), instances: &fakeInstances{reports: map[string]*instanceclient.Status{}}}
	w.rec = &cluster.Reconciler{Client: w.Client, APIReader: w.Client, Recorder: w.Recorder, Clock: w.Clock,
		OperatorImage: "operator:test", Instances: w.instances}
	c := &v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: w.NS},
		Spec: v1.ClusterSpec{Instances: 1, ImageName: "mysql:test", MaxSwitchoverDelay: 3600,
			Storage: v1.StorageConfiguration{Size: resource.MustParse("1Gi")}}}
	if mutate != nil {
		mutate(c)
	}
	w.Create(c)
	return w
}

// reconcile runs one reconcile of the Cluster and returns its error.
func (w *clusterWorld) reconcile() error {
	_, err := w.rec.Reconcile(w.Ctx, ctrl.Request{NamespacedName: w.Key("db")})
	return err
}

func (w *clusterWorld) reconcileOK() {
	w.T.Helper()
	if err := w.reconcile(); err != nil {
		w.T.Fatalf("reconcile: %v", err)
	}
}

func (w *clusterWorld) secret(name string) *corev1.Secret {
	return ctrlworld.Get[corev1.Secret](w.World, name)
}

// fakeInstances stands in for the instance managers: it answers with the reports the test set
// and records the semi-sync counts and participations the reconciler applies, failing them while setErr is set.
type fakeInstances struct {
	mu      sync.Mutex
	reports map[string]*instanceclient.Status
	set     []string
	setErr  error
}

func (f *fakeInstances) InstanceStatuses(context.Context, *v1.Cluster, []corev1.Pod) (map[string]*instanceclient.Status, map[string]error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reports, nil
}

func (f *fakeInstances) SetSemiSync(_ context.Context, _ *v1.Cluster, pod corev1.Pod, req instanceclient.SemiSyncRequest) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.setErr != nil {
		return f.setErr
	}
	f.set = append(f.set, fmt.Sprintf("%s=%d", pod.Name, req.WaitForReplicaCount))
	return nil
}

func (f *fakeInstances) SetSemiSyncReplica(_ context.Context, _ *v1.Cluster, pod corev1.Pod, req instanceclient.SemiSyncReplicaRequest) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.setErr != nil {
		return f.setErr
	}
	f.set = append(f.set, fmt.Sprintf("%s participant=%v", pod.Name, req.Participant))
	return nil
}

// TestSecretsAndCARenewal: the first reconcile writes the password Secrets, the CA and every
// certificate; a CA that no longer parses is replaced and every certificate is reissued under the
// new one, the passwords staying; a converged Cluster writes no Secret.
func TestSecretsAndCARenewal(t *testing.T) {
	w := newClusterWorld(t, nil)
	w.reconcileOK()
	leaves := []string{"db-1-server-tls", "db-operator-client-tls", "db-replication-client-tls"}
	passwords := map[string]string{}
	for _, user := range specs.Users {
		name := specs.UserSecretName("db", user)
		passwords[name] = w.secret(name).ResourceVersion
	}
	before := map[string]string{}
	for _, name := range leaves {
		before[name] = string(w.secret(name).Data[certs.CertKey])
	}
	events := strings.Join(w.Events(), "\n")
	for _, want := range []string{"Normal SecretCreated", "Normal CertificateIssued Issued db-ca (missing)", "db-1-server-tls (missing)"} {
		if !strings.Contains(events, want) {
			t.Errorf("first reconcile: events %q, want %q", events, want)
		}
	}

	metrics := w.secret(specs.MetricsSecretName("db"))
	if token := metrics.Data[specs.MetricsTokenKey]; len(token) < 16 ||
		string(metrics.Data[specs.MetricsCAKey]) != string(w.secret("db-ca").Data[specs.CACertKey]) || metrics.Data[specs.CAKeyKey] != nil {
		t.Errorf("metrics Secret: token of %d bytes, ca.crt the CA's: %v, the CA key in it: %v", len(token),
			string(metrics.Data[specs.MetricsCAKey]) == string(w.secret("db-ca").Data[specs.CACertKey]), metrics.Data[specs.CAKeyKey] != nil)
	}
	ca := w.secret("db-ca")
	ca.Data[specs.CAKeyKey] = []byte("garbage")
	if err := w.Client.Update(w.Ctx, ca); err != nil {
		t.Fatal(err)
	}
	w.reconcileOK()
	newCA := w.secret("db-ca")
	kp, err := certs.ParseKeyPair(newCA.Data[specs.CACertKey], newCA.Data[specs.CAKeyKey])
	if err != nil {
		t.Fatalf("the CA was not replaced: %v", err)
	}
	for _, name := range leaves {
		data := w.secret(name).Data[certs.CertKey]
		cert, err := certs.ParseCertificate(data)
		if err != nil || string(data) == before[name] || cert.CheckSignatureFrom(kp.Cert) != nil {
			t.Errorf("%s is not reissued under the new CA: %v", name, err)
		}
	}
	for name, rv := range passwords {
		if got := w.secret(name).ResourceVersion; got != rv {
			t.Errorf("password Secret %s was written (resourceVersion %s -> %s)", name, rv, got)
		}
	}
	if events := strings.Join(w.Events(), "\n"); !strings.Contains(events, "Issued db-ca (unparsable); Issued db-1-server-tls (not signed by the current CA)") {
		t.Errorf("CA renewal: events %q", events)
	}

	versions := map[string]string{}
	for _, name := range append(leaves, "db-ca") {
		versions[name] = w.secret(name).ResourceVersion
	}
	w.reconcileOK()
	for name, rv := range versions {
		if got := w.secret(name).ResourceVersion; got != rv {
			t.Errorf("converged: Secret %s was written (resourceVersion %s -> %s)", name, rv, got)
		}
	}
	if events := strings.Join(w.Events(), "\n"); strings.Contains(events, "Secret") || strings.Contains(events, "Issued") {
		t.Errorf("converged: events %q", events)
	}
	after := w.secret(specs.MetricsSecretName("db"))
	if string(after.Data[specs.MetricsCAKey]) != string(newCA.Data[specs.CACertKey]) ||
		string(after.Data[specs.MetricsTokenKey]) != string(metrics.Data[specs.MetricsTokenKey]) {
		t.Errorf("after the CA renewal the metrics Secret holds the new CA: %v, its token kept: %v",
			string(after.Data[specs.MetricsCAKey]) == string(newCA.Data[specs.CACertKey]),
			string(after.Data[specs.MetricsTokenKey]) == string(metrics.Data[specs.MetricsTokenKey]))
	}
}

// TestSemiSyncCountSetOnPrimary: with preferred durability and no healthy replica, the count the
// primary reports (minSyncReplicas 2) is lowered to one on the primary's Pod, with an Event; a
// failure to set it fails the reconcile, without the Event, and is retried.
func TestSemiSyncCountSetOnPrimary(t *testing.T) {
	w := newClusterWorld(t, func(c *v1.Cluster) {
		c.Spec.Instances, c.Spec.MinSyncReplicas, c.Spec.MaxSyncReplicas = 3, 2, 2
		c.Spec.MySQL.SemiSync = &v1.SemiSyncConfiguration{Enabled: true, TimeoutMillis: 1000,
			DataDurability: v1.DataDurabilityPreferred}
	})
	w.reconcileOK() // creates db-1; the others wait for it to be ready
	var c v1.Cluster
	w.Get("db", &c)
	c.Status.CurrentPrimary = "db-1"
	w.UpdateStatus(&c)
	w.instances.reports["db-1"] = &instanceclient.Status{Role: v1.RolePrimary,
		SemiSync: &instanceclient.SemiSyncStatus{Active: true, WaitForReplicaCount: 2}}
	w.Events()

	w.instances.setErr = errors.New("control API unreachable")
	if err := w.reconcile(); err == nil || !strings.Contains(err.Error(), "control API unreachable") {
		t.Fatalf("a failed count must fail the reconcile: %v", err)
	}
	if events := strings.Join(w.Events(), "\n"); strings.Contains(events, "SemiSyncAdjusted") {
		t.Errorf("no Event for a count not set: %q", events)
	}

	w.instances.setErr = nil
	w.reconcileOK()
	if len(w.instances.set) != 1 || w.instances.set[0] != "db-1=1" {
		t.Errorf("counts set %v, want db-1=1", w.instances.set)
	}
	want := "Normal SemiSyncAdjusted Set the acknowledgement count of primary db-1 from 2 to 1 (0 of 0 replicas healthy, dataDurability preferred)"
	if events := strings.Join(w.Events(), "\n"); !strings.Contains(events, want) {
		t.Errorf("events %q, want %q", events, want)
	}
}

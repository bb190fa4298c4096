package instance

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/certs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
)

// TestRunFailsFastWhenTheControlAPIPortIsTaken: once the probes serve, a failure (here the
// control API's port held by another process) ends Run with that error within seconds, instead
// of waiting forever for the probe server to stop.
func TestRunFailsFastWhenTheControlAPIPortIsTaken(t *testing.T) {
	dir := t.TempDir()
	cfg := &RunConfig{Instance: "db-1", Namespace: "ns", Cluster: "db", MysqldCommand: []string{"sleep", "60"},
		DataDir: filepath.Join(dir, "data"), RunDir: filepath.Join(dir, "run"), ServerTLSDir: filepath.Join(dir, "tls"),
		ClientTLSDir: filepath.Join(dir, "client"), Port: 3306, ReportHost: "db-1.ns.svc", ReconcileInterval: time.Second,
		GracePeriod: time.Second, ProbeAddr: "127.0.0.1:0"}
	// A data directory in place: no bootstrap, straight to serving.
	must(t, os.MkdirAll(cfg.DataDir, 0o750))
	must(t, os.WriteFile(filepath.Join(cfg.DataDir, "mysql.ibd"), nil, 0o600))
	writeTestTLS(t, cfg.ServerTLSDir, cfg.ClientTLSDir)
	writeTestPasswords(t, dir)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer taken.Close()
	cfg.ManagerAddr = taken.Addr().String()

	cluster := &v1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns"}}
	k8s := fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(cluster).Build()
	done := make(chan error, 1)
	go func() {
		done <- Run(t.Context(), cfg, RunDeps{Client: k8s, Factory: mysql.NewFactory(), Passwords: FilePasswords{Dir: dir},
			Clock: clock.RealClock{}, Log: testr.New(t)})
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "listening for the control API") {
			t.Fatalf("Run = %v, want the control API's listen error", err)
		}
		if errors.Is(err, context.Canceled) {
			t.Errorf("Run = %v: the error is the listen failure, not a cancellation", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run still running 20s after the control API could not listen: serve hangs on its own goroutines")
	}
}

// writeTestTLS writes a CA, a server certificate and a client certificate in the layout the
// instance manager reads.
func writeTestTLS(t *testing.T, serverDir, clientDir string) {
	t.Helper()
	now := time.Now()
	ca, err := certs.NewCA("test CA", now)
	must(t, err)
	server, err := certs.Issue(ca, certs.Request{CommonName: "db-1", DNSNames: []string{"db-1.ns.svc"}}, now)
	must(t, err)
	client, err := certs.Issue(ca, certs.Request{CommonName: "db-replication", Client: true}, now)
	must(t, err)
	for dir, kp := range map[string]*certs.KeyPair{serverDir: server, clientDir: client} {
		must(t, os.MkdirAll(dir, 0o750))
		files := tlsFilesIn(dir)
		must(t, os.WriteFile(files.CA, ca.CertPEM, 0o600))
		must(t, os.WriteFile(files.Cert, kp.CertPEM, 0o600))
		must(t, os.WriteFile(files.Key, kp.KeyPEM, 0o600))
	}
}

package instance

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// TestRunStopsCleanlyWhileWaiting: a replica of a cluster without a primary waits to bootstrap,
// renders my.cnf meanwhile, and a stop request ends the wait without an error.
func TestRunStopsCleanlyWhileWaiting(t *testing.T) {
	dir := t.TempDir()
	cluster := &v1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns"}}
	k8s := fake.NewClientBuilder().WithScheme(testScheme(t)).WithObjects(cluster).Build()
	cfg := &RunConfig{Instance: "db-2", Namespace: "ns", Cluster: "db", MysqldCommand: []string{"false"},
		DataDir: filepath.Join(dir, "data"), RunDir: filepath.Join(dir, "run"), ServerTLSDir: filepath.Join(dir, "tls"),
		ClientTLSDir: filepath.Join(dir, "client"), Port: 3306, ReportHost: "db-2.ns.svc", ReconcileInterval: time.Second}
	writeTestPasswords(t, dir)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	time.AfterFunc(500*time.Millisecond, cancel) // SIGTERM
	err := Run(ctx, cfg, RunDeps{Client: k8s, Factory: mysql.NewFactory(), Passwords: FilePasswords{Dir: dir},
		Clock: clock.RealClock{}, Log: testr.New(t)})
	if err != nil {
		t.Fatalf("Run = %v, want a clean stop", err)
	}
	if has, _ := HasData(cfg.DataDir); has {
		t.Error("a waiting replica initialized its data directory")
	}
	if _, err := os.Stat(cfg.myCnfPath()); err != nil {
		t.Errorf("my.cnf not rendered: %v", err)
	}
}

// testScheme has the built-in kinds and this project's API; internal/operator's scheme cannot be
// used here, since the operator imports this package through its controllers.
func testScheme(t *testing.T) *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// writeTestPasswords writes a password for each of the Cluster's accounts in the layout
// FilePasswords reads: <dir>/<user>/password.
func writeTestPasswords(t *testing.T, dir string) {
	t.Helper()
	for _, user := range specs.Users {
		if err := os.MkdirAll(filepath.Join(dir, user), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, user, "password"), []byte(user+"-pw\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mysqlv1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/proc"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
	"github.com/cloudnative-mysql/cloudnative-mysql/test/chaos"
)

// nodeIP is the local node's address in its network namespace (hack/localcluster.sh).
const nodeIP = "172.30.255.2"

// nodeStore is a versitygw on the node that a test may stop and start again, same data and port.
type nodeStore struct {
	t                        *testing.T
	dir, port                string
	endpoint, access, secret string
	child                    *proc.Child
	log                      *os.File
}

func startNodeStore(t *testing.T) *nodeStore {
	t.Helper()
	if os.Getenv("CNM_VERSITYGW") == "" {
		t.Fatal("CNM_VERSITYGW is not set: run with eval \"$(bash hack/substrate.sh env)\" (make e2e does)")
	}
	s := &nodeStore{t: t, dir: t.TempDir(), port: strconv.Itoa(19000 + os.Getpid()%1000),
		access: "e2e-access", secret: "e2e-secret-0123456789"}
	if err := os.MkdirAll(filepath.Join(s.dir, "backups"), 0o700); err != nil {
		t.Fatal(err)
	}
	s.endpoint = fmt.Sprintf("http://%s:%s", nodeIP, s.port)
	s.start()
	t.Cleanup(s.stop)
	return s
}

// start runs versitygw (again) on the store's directory and port.
func (s *nodeStore) start() {
	s.t.Helper()
	cmd := exec.Command("nsenter", "--net="+chaos.NodeNetns, "--", os.Getenv("CNM_VERSITYGW"), "--access", s.access, "--secret", s.secret,
		"--port", nodeIP+":"+s.port, "posix", s.dir)
	log, err := os.Create(filepath.Join(s.t.TempDir(), "versitygw.log"))
	if err != nil {
		s.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	child, err := proc.StartTied(cmd)
	if err != nil {
		s.t.Fatalf("starting versitygw on the node: %v", err)
	}
	s.child, s.log = child, log
}

// stop stops versitygw: every request to the store is refused until start.
func (s *nodeStore) stop() {
	if s.child != nil {
		_ = s.child.Stop(5 * time.Second)
		s.log.Close()
		s.child = nil
	}
}

// storeManifests starts an object store on the node (startNodeStore), with a bucket "backups"
// where Pods reach it, and returns it as
// manifests use it: the Secret "store" holding its keys (a whole document), and the body of a
// Cluster's objectStore: key (each line indented by six spaces, for spec.backup.objectStore).
func storeManifests(t *testing.T) (secret, objectStore string) {
	t.Helper()
	return startNodeStore(t).manifests()
}

// manifests are the Secret "store" and the objectStore body of storeManifests, for this store.
func (s *nodeStore) manifests() (secret, objectStore string) {
	endpoint, access, key := s.endpoint, s.access, s.secret
	secret = `
apiVersion: v1
kind: Secret
metadata: {name: store}
stringData: {ACCESS_KEY_ID: ` + access + `, SECRET_ACCESS_KEY: ` + key + `}
`
	objectStore = `
      bucket: backups
      endpoint: ` + endpoint + `
      allowInsecureEndpoint: true   # the node's own network namespace
      forcePathStyle: true
      credentials:
        accessKeyId: {name: store, key: ACCESS_KEY_ID}
        secretAccessKey: {name: store, key: SECRET_ACCESS_KEY}`
	return secret, objectStore
}

// storeCluster is the manifest of a one-instance Cluster db backing up to objectStore (a body of
// storeManifests), with backupExtra (lines indented by four spaces, each after a newline) under
// spec.backup.
func storeCluster(objectStore, backupExtra string) string {
	return `
apiVersion: mysql.cloudnative-mysql.io/v1alpha1
kind: Cluster
metadata: {name: db}
spec:
  instances: 1
  imageName: ` + mysqlImage + `
  storage: {size: 1Gi}
  backup:` + backupExtra + `
    objectStore:` + objectStore + `
`
}

// takeBackup creates Backup name of Cluster cluster and waits until it completed; a failed
// Backup fails the test.
func takeBackup(t *testing.T, ns, cluster, name string) *mysqlv1.Backup {
	t.Helper()
	b := &mysqlv1.Backup{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: mysqlv1.BackupSpec{Cluster: mysqlv1.LocalObjectReference{Name: cluster}}}
	if err := env.c.Create(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	WaitFor(t, 5*time.Minute, "the Backup "+name+" completed", func() (bool, error) {
		if err := env.c.Get(context.Background(), client.ObjectKeyFromObject(b), b); err != nil {
			return false, err
		}
		if b.Status.Phase == mysqlv1.BackupPhaseFailed {
			t.Fatalf("the Backup failed: %+v", b.Status)
		}
		return b.Status.Phase == mysqlv1.BackupPhaseCompleted, fmt.Errorf("phase %q", b.Status.Phase)
	})
	return b
}

// A backup of a Cluster in a namespace enforcing the "restricted" Pod Security profile: the API
// server admits the backup Job's Pod, whose private mysqld (the clone recipient) runs as uid 999
// with a read-only root filesystem, and the backup completes in the object store.
func TestBackupUnderRestrictedProfile(t *testing.T) {
	storeSecret, store := storeManifests(t)
	ns := Namespace(t)
	Apply(t, ns, storeSecret+"---"+storeCluster(store, ""))
	cl := &mysqlv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"}}
	ConditionTrue(t, cl, "Ready", 5*time.Minute, func() []metav1.Condition { return cl.Status.Conditions })

	b := takeBackup(t, ns, "db", "restricted")

	var pods corev1.PodList
	if err := env.c.List(context.Background(), &pods, client.InNamespace(ns),
		client.MatchingLabels{mysqlv1.BackupLabel: b.Name}); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 1 {
		t.Fatalf("%d Pods of the backup Job, want 1", len(pods.Items))
	}
	sc := pods.Items[0].Spec.SecurityContext
	if sc == nil || sc.RunAsUser == nil || *sc.RunAsUser != specs.MySQLUID || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		t.Errorf("the backup Job's Pod does not run as non-root uid %d: %+v", specs.MySQLUID, sc)
	}
}

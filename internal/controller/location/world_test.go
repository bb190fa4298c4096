package location_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/location"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/ctrlworld"
)

// locWorld is a namespace on the real API server with a real versitygw bucket: the location
// reconciler claims there as it does in the operator.
type locWorld struct {
	*ctrlworld.World
	store *ctrlworld.Store
}

func newLocWorld(t *testing.T) *locWorld {
	t.Helper()
	w := &locWorld{World: ctrlworld.New(t, shared)}
	w.store = w.StartStore("s3", "")
	return w
}

// elsewhere is a world in another namespace sharing the bucket, with its own s3 Secret.
func (w *locWorld) elsewhere() *locWorld {
	w.T.Helper()
	o := &locWorld{World: w.Elsewhere(), store: w.store}
	o.Create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s3", Namespace: o.NS},
		Data: map[string][]byte{"id": []byte(w.store.S3.AccessKey), "secret": []byte(w.store.S3.SecretKey)}})
	return o
}

// cluster is a Cluster name backing up to the bucket under path "prod", changed by mutate.
func (w *locWorld) cluster(name string, mutate ...func(*v1.Cluster)) *v1.Cluster {
	c := &v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.NS},
		Spec: v1.ClusterSpec{Instances: 1, ImageName: "mysql:test", MaxSwitchoverDelay: 3600,
			Storage: v1.StorageConfiguration{Size: resource.MustParse("1Gi")},
			Backup:  &v1.BackupConfiguration{ObjectStore: w.store.Config("s3", "prod", false)}}}
	for _, m := range mutate {
		m(c)
	}
	return c
}

// create creates the Cluster and writes its first status as the Cluster controller does when it
// creates the first instance (status.latestGeneratedNode); the location reconciler waits for it.
func (w *locWorld) create(c *v1.Cluster) {
	w.T.Helper()
	w.Create(c)
	c.Status.LatestGeneratedNode = 1
	w.UpdateStatus(c)
}

// reconcile runs a fresh location reconciler on the Cluster name and returns its claim status.
func (w *locWorld) reconcile(name string) *v1.ObjectStoreLocationStatus {
	w.T.Helper()
	return w.ClaimLocation(name, nil)
}

// direct reads the bucket under "prod".
func (w *locWorld) direct() *objectstore.Client {
	w.T.Helper()
	c, err := w.store.Direct("prod")
	return check.Value(w.T, c, err)
}

// marker is the location's marker of dir, nil when there is none.
func (w *locWorld) marker(dir string) *objectstore.Claim {
	w.T.Helper()
	claim, _, err := w.direct().ReadClaim(w.Ctx, dir)
	if err != nil {
		return nil
	}
	return claim
}

// archive writes what an archiver and a backup Job of the incarnation uid leave in dir: a
// binlog index whose segment holds archived, and a complete backup holding backedUp.
func (w *locWorld) archive(dir, uid, archived, backedUp string) {
	w.T.Helper()
	store := w.direct()
	index := objectstore.NewIndex()
	t0 := time.Now().Add(-time.Hour).UTC()
	index.Upsert(objectstore.Segment{Name: "seg-000001", Size: 10, SHA256: strings.Repeat("ab", 32),
		FirstEventTime: t0, LastEventTime: t0.Add(time.Minute), GTIDRange: archived})
	if _, err := store.WriteIndex(w.Ctx, dir, index, ""); err != nil {
		w.T.Fatal(err)
	}
	data := []byte("archive bytes")
	_, err := store.UploadBackup(w.Ctx, objectstore.UploadRequest{
		Backup: objectstore.BackupRef{Cluster: dir, Name: "nightly", ID: "20261129T000000Z"}, Namespace: w.NS, ClusterUID: uid,
		Method: "clone", Format: objectstore.FormatTar, Compression: objectstore.CompressionZstd,
		Archive: strings.NewReader(string(data)),
		Finish: func() (objectstore.ProducerResult, error) {
			return objectstore.ProducerResult{Size: int64(len(data)), SHA256: sha256Hex(data), GTIDExecuted: backedUp,
				ServerVersion: "9.7.4", StartedAt: t0, StoppedAt: t0.Add(time.Minute)}, nil
		}})
	check.Must(w.T, err)
}

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func wantInUse(t *testing.T, st *v1.ObjectStoreLocationStatus, parts ...string) {
	t.Helper()
	if st == nil || st.Phase != v1.LocationInUse || st.Reason != location.ReasonInUse {
		t.Fatalf("claim %+v, want InUse (ObjectStoreInUse)", st)
	}
	for _, p := range append(parts, "spec.backup.objectStore.path", "spec.backup.serverName", "spec.backup.continueHistory") {
		if !strings.Contains(st.Message, p) {
			t.Errorf("message %q does not say %q", st.Message, p)
		}
	}
}

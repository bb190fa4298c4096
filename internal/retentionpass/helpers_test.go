package retentionpass_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
)

const (
	testCluster = "pc1"
	archiveSize = 2048
	day         = 24 * time.Hour
)

// storeConfig resolves the configuration a Cluster would carry for server s, reached at
// endpoint (the server or a proxy in front of it), under path.
func storeConfig(t *testing.T, s *s3test.Server, endpoint, path string) objectstore.Config {
	t.Helper()
	return s.StoreConfig(t, endpoint, path)
}

// newClient returns a client for cfg; with retries off each injected fault surfaces.
func newClient(t *testing.T, cfg objectstore.Config, retries bool) *objectstore.Client {
	t.Helper()
	return s3test.StoreClient(t, cfg, retries)
}

func ref(name, id string) objectstore.BackupRef {
	return objectstore.BackupRef{Cluster: testCluster, Name: name, ID: id}
}

// backupSpec is one base backup of a fixture: it stopped at now minus age and took 10 minutes.
type backupSpec struct {
	name string
	age  time.Duration
}

func (b backupSpec) ref() objectstore.BackupRef { return ref(b.name, "id-"+b.name) }

func (b backupSpec) times(now time.Time) (time.Time, time.Time) {
	stopped := now.Add(-b.age)
	return stopped.Add(-10 * time.Minute), stopped
}

// uploadBackup writes a complete backup of small random content with UploadBackup, with no
// namespace in its metadata.json (as written before the namespace was recorded).
func uploadBackup(t *testing.T, c *objectstore.Client, b backupSpec, now time.Time) {
	t.Helper()
	uploadBackupIn(t, c, b, now, "")
}

// uploadBackupIn is uploadBackup by a Cluster of namespace.
func uploadBackupIn(t *testing.T, c *objectstore.Client, b backupSpec, now time.Time, namespace string) {
	t.Helper()
	uploadBackupOf(t, c, b, now, namespace, "")
}

// uploadBackupOf is uploadBackupIn for the Cluster incarnation uid ("" records none).
func uploadBackupOf(t *testing.T, c *objectstore.Client, b backupSpec, now time.Time, namespace, uid string) {
	t.Helper()
	data := make([]byte, archiveSize)
	r := rand.NewChaCha8([32]byte{byte(len(b.name)), b.name[0], b.name[len(b.name)-1]})
	_, _ = r.Read(data)
	sum := sha256.Sum256(data)
	started, stopped := b.times(now)
	_, err := c.UploadBackup(t.Context(), objectstore.UploadRequest{
		Backup: b.ref(), Namespace: namespace, ClusterUID: uid, Method: "clone", Format: objectstore.FormatTar, Compression: objectstore.CompressionZstd,
		Archive: struct{ io.Reader }{bytes.NewReader(data)},
		Finish: func() (objectstore.ProducerResult, error) {
			return objectstore.ProducerResult{Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:]),
				GTIDExecuted: "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-42", ServerVersion: "9.7.0",
				StartedAt: started, StoppedAt: stopped}, nil
		},
	})
	if err != nil {
		t.Fatalf("uploading backup %s: %v", b.name, err)
	}
}

// putObject writes a small object directly on the server.
func putObject(t *testing.T, s *s3test.Server, key string, data []byte) {
	t.Helper()
	_, err := s.Client().PutObject(t.Context(), s.Bucket, key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{})
	if err != nil {
		t.Fatalf("writing %s: %v", key, err)
	}
}

// segmentSpec is one archived binlog segment of a fixture: its last event is now minus age
// (unknown when age is zero), its first an hour earlier.
type segmentSpec struct {
	name string
	age  time.Duration
}

// writeSegments writes each segment's object and an index listing them all.
func writeSegments(t *testing.T, s *s3test.Server, c *objectstore.Client, prefix string, segs []segmentSpec, now time.Time) {
	t.Helper()
	index := objectstore.NewIndex()
	for _, sg := range segs {
		data := []byte("binlog segment " + sg.name)
		sum := sha256.Sum256(data)
		putObject(t, s, objectstore.BinlogKey(prefix, testCluster, sg.name), data)
		seg := objectstore.Segment{Name: sg.name, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
		if sg.age > 0 {
			seg.LastEventTime = now.Add(-sg.age)
			seg.FirstEventTime = seg.LastEventTime.Add(-time.Hour)
		}
		index.Upsert(seg)
	}
	if _, err := c.WriteIndex(t.Context(), testCluster, index, ""); err != nil {
		t.Fatalf("writing the index: %v", err)
	}
}

// objectExists reports whether key exists on the server.
func objectExists(t *testing.T, s *s3test.Server, key string) bool {
	t.Helper()
	_, err := s.Client().StatObject(t.Context(), s.Bucket, key, minio.StatObjectOptions{})
	if err == nil {
		return true
	}
	if minio.ToErrorResponse(err).StatusCode == 404 {
		return false
	}
	t.Fatalf("stat %s: %v", key, err)
	return false
}

// keysUnder lists every key under prefix.
func keysUnder(t *testing.T, s *s3test.Server, prefix string) []string {
	t.Helper()
	var keys []string
	for o := range s.Client().ListObjects(t.Context(), s.Bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			t.Fatalf("listing %s: %v", prefix, o.Err)
		}
		keys = append(keys, o.Key)
	}
	return keys
}

// checkBackupWhole fails unless the backup's metadata and archive read back and verify.
func checkBackupWhole(ctx context.Context, t *testing.T, c *objectstore.Client, r objectstore.BackupRef, what string) {
	t.Helper()
	md, err := c.DownloadBackup(ctx, r, io.Discard)
	if err != nil {
		t.Errorf("%s: backup %s/%s is not whole: %v", what, r.Name, r.ID, err)
		return
	}
	if md.Size != archiveSize {
		t.Errorf("%s: backup %s/%s has size %d, want %d", what, r.Name, r.ID, md.Size, archiveSize)
	}
}

// checkBackupGone fails unless nothing is left of the backup's directory.
func checkBackupGone(t *testing.T, s *s3test.Server, prefix string, r objectstore.BackupRef, what string) {
	t.Helper()
	if keys := keysUnder(t, s, objectstore.BackupDir(prefix, r)); len(keys) > 0 {
		t.Errorf("%s: backup %s/%s should be gone, has %v", what, r.Name, r.ID, keys)
	}
}

// readIndex reads and validates the stored index and returns the names it lists.
func readIndex(t *testing.T, s *s3test.Server, prefix string) map[string]bool {
	t.Helper()
	obj, err := s.Client().GetObject(t.Context(), s.Bucket, objectstore.IndexKey(prefix, testCluster), minio.GetObjectOptions{})
	if err != nil {
		t.Fatalf("reading the index: %v", err)
	}
	defer obj.Close()
	data, err := io.ReadAll(obj)
	if err != nil {
		t.Fatalf("reading the index: %v", err)
	}
	index, err := objectstore.DecodeIndex(data)
	if err != nil {
		t.Fatalf("the index does not decode and validate: %v", err)
	}
	names := map[string]bool{}
	for _, sg := range index.Segments {
		names[sg.Name] = true
	}
	return names
}

func segName(i int) string { return fmt.Sprintf("binlog.%06d", i) }

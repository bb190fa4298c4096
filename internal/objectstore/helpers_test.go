package objectstore_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
)

const (
	testPrefix  = "backups/prod"
	testCluster = "pc1"
)

// storeConfig resolves the configuration a Cluster would carry for server s, reached at
// endpoint (the server or a proxy in front of it).
func storeConfig(t *testing.T, s *s3test.Server, endpoint, path string) objectstore.Config {
	t.Helper()
	cfg := s.StoreConfig(t, endpoint, path)
	cfg.PartSize = objectstore.MinPartSize
	return cfg
}

// newClient returns a client for cfg, with retries off unless retries is set: each injected
// fault then surfaces instead of being absorbed.
func newClient(t *testing.T, cfg objectstore.Config, retries bool) *objectstore.Client {
	t.Helper()
	return s3test.StoreClient(t, cfg, retries)
}

func ref(name, id string) objectstore.BackupRef {
	return objectstore.BackupRef{Cluster: testCluster, Name: name, ID: id}
}

// producer stands for a backup producer: it emits size pseudo-random bytes (seeded, so a test
// can regenerate them), accounts for what it emitted as a real producer would, and can fail.
type producer struct {
	src      io.Reader
	left     int64
	hash     hash.Hash
	n        int64
	failAt   int64 // fail the Read that reaches this offset; 0: never
	finished bool
}

var errProducer = errors.New("producer crashed")

func newProducer(seed uint64, size int64) *producer {
	return &producer{src: rand.NewChaCha8(seedBytes(seed)), left: size, hash: sha256.New()}
}

func seedBytes(seed uint64) [32]byte {
	var s [32]byte
	for i := range 8 {
		s[i] = byte(seed >> (8 * i))
	}
	return s
}

func (p *producer) Read(b []byte) (int, error) {
	if p.failAt > 0 && p.n+int64(len(b)) >= p.failAt {
		return 0, errProducer
	}
	if p.left == 0 {
		return 0, io.EOF
	}
	if int64(len(b)) > p.left {
		b = b[:p.left]
	}
	n, _ := p.src.Read(b)
	p.hash.Write(b[:n])
	p.n += int64(n)
	p.left -= int64(n)
	return n, nil
}

// result is what the producer reports once it is done.
func (p *producer) result() objectstore.ProducerResult {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	return objectstore.ProducerResult{
		Size:           p.n,
		SHA256:         hex.EncodeToString(p.hash.Sum(nil)),
		GTIDExecuted:   "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-42",
		BinlogFile:     "binlog.000007",
		BinlogPosition: 4711,
		ServerVersion:  "9.7.0",
		StartedAt:      start,
		StoppedAt:      start.Add(3 * time.Minute),
	}
}

func (p *producer) finish() (objectstore.ProducerResult, error) {
	p.finished = true
	return p.result(), nil
}

// request is an upload of the producer's stream, as an unknown-length reader.
func request(r objectstore.BackupRef, p *producer) objectstore.UploadRequest {
	return objectstore.UploadRequest{
		Backup: r, Method: "clone", Format: objectstore.FormatTar, Compression: objectstore.CompressionZstd,
		Archive: struct{ io.Reader }{p}, Finish: p.finish,
	}
}

func sha256Hex(r io.Reader) (string, int64, error) {
	h := sha256.New()
	n, err := io.Copy(h, r)
	return hex.EncodeToString(h.Sum(nil)), n, err
}

// checkNothingLeft fails the test if anything remains under a backup directory: an object
// (metadata.json or archive) or an open multipart upload.
func checkNothingLeft(t *testing.T, s *s3test.Server, dir, context string) {
	t.Helper()
	direct := s.Client()
	for o := range direct.ListObjects(t.Context(), s.Bucket, minio.ListObjectsOptions{Prefix: dir, Recursive: true}) {
		if o.Err != nil {
			t.Fatalf("%s: listing %s: %v", context, dir, o.Err)
		}
		what := "object"
		if strings.HasSuffix(o.Key, "/"+objectstore.MetadataName) {
			what = "METADATA"
		}
		t.Errorf("%s: %s %s (%d bytes) left behind", context, what, o.Key, o.Size)
	}
	checkNoUploads(t, s, dir, context)
}

func checkNoUploads(t *testing.T, s *s3test.Server, prefix, context string) {
	t.Helper()
	for u := range s.Client().ListIncompleteUploads(t.Context(), s.Bucket, prefix, true) {
		if u.Err != nil {
			t.Fatalf("%s: listing incomplete uploads: %v", context, u.Err)
		}
		t.Errorf("%s: multipart upload %s of %s left open", context, u.UploadID, u.Key)
	}
}

package backup_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup/backuptest"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3proxy"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
)

// fixedProducer streams an existing snapshot directory, as the clone producer does after its
// clone, so that every fault reuses one clone.
type fixedProducer struct {
	dir    string
	coords backup.Coordinates
}

func (fixedProducer) Method() v1alpha1.BackupMethod { return v1alpha1.BackupMethodClone }
func (fixedProducer) Format() string                { return objectstore.FormatTar }
func (fixedProducer) Compression() string           { return objectstore.CompressionZstd }
func (p fixedProducer) Start(ctx context.Context) (*backup.Stream, error) {
	return backup.DirStream(ctx, time.Now(), p.dir, p.coords), nil
}

// testFaultAtEveryS3Call fails each S3 request of a clone backup in turn, then cuts a part upload
// mid-body: every run fails, leaves no metadata.json and no open multipart upload, and the source
// keeps its data.
func testFaultAtEveryS3Call(t *testing.T, src *source, s3 *s3test.Server) {
	// ~12 MB of incompressible rows make an archive of three parts.
	src.exec(t, "CREATE TABLE audit.noise (id INT PRIMARY KEY AUTO_INCREMENT, b LONGBLOB)")
	for range 5 {
		src.exec(t, "INSERT INTO audit.noise (b) SELECT CONCAT(RANDOM_BYTES(1024), RANDOM_BYTES(1024), "+
			"RANDOM_BYTES(1024), RANDOM_BYTES(1024), RANDOM_BYTES(1024), RANDOM_BYTES(1024), RANDOM_BYTES(1024), "+
			"RANDOM_BYTES(1024)) FROM shop.orders")
	}
	proxy := s3proxy.Start(t, s3.Endpoint)
	direct := backuptest.Store(t, s3, s3.Endpoint, "faults")
	viaProxy := backuptest.Store(t, s3, proxy.URL, "faults")
	wantSums, wantGTID := src.checksums(t)

	clone := src.producer(t)
	coords, err := clone.Snapshot(t.Context())
	check.Must(t, err)
	p := fixedProducer{dir: clone.SnapshotDir(), coords: coords}

	// A clean run through the proxy counts the requests of one backup.
	cleanRef := objectstore.BackupRef{Cluster: "pc1", Name: "clean", ID: "1"}
	proxy.Reset()
	if _, err := backup.Run(t.Context(), viaProxy, cleanRef, backup.Owner{}, p); err != nil {
		t.Fatalf("clean backup: %v", err)
	}
	total := proxy.Total()
	t.Logf("a clean backup makes %d S3 requests: %v", total, proxy.Counts())

	faults := []struct {
		name  string
		fault s3proxy.Fault
	}{}
	for n := 1; n <= total; n++ {
		faults = append(faults, struct {
			name  string
			fault s3proxy.Fault
		}{fmt.Sprintf("request %d answers 500", n), s3proxy.Fault{Match: s3proxy.Nth(n), Action: s3proxy.Status(http.StatusInternalServerError), Times: 1}})
	}
	faults = append(faults, struct {
		name  string
		fault s3proxy.Fault
	}{"a part upload is cut mid-body", s3proxy.Fault{Match: s3proxy.OfKind(s3proxy.UploadPart), Action: s3proxy.CutRequestBody(1 << 20), Times: 1}})

	for i, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			ref := objectstore.BackupRef{Cluster: "pc1", Name: "faulty", ID: fmt.Sprint(i)}
			proxy.Reset()
			proxy.Inject(f.fault)
			md, err := backup.Run(t.Context(), viaProxy, ref, backup.Owner{}, p)
			if err == nil {
				t.Fatalf("backup succeeded despite the fault (fired %d): %+v", proxy.Fired(), md)
			}
			if _, rerr := direct.ReadMetadata(t.Context(), ref); !errors.Is(rerr, objectstore.ErrNotFound) {
				t.Errorf("metadata.json after a failed backup: %v", rerr)
			}
			checkNoUploads(t, s3, direct.BackupDir(ref))
		})
	}
	t.Run("the producer fails after streaming two parts", func(t *testing.T) {
		dir := t.TempDir()
		noise := make([]byte, 12<<20)
		_, _ = rand.Read(noise)
		check.Must(t, os.WriteFile(filepath.Join(dir, "a.ibd"), noise, 0o640))
		check.Must(t, os.Symlink("/etc/passwd", filepath.Join(dir, "z-link")))
		ref := objectstore.BackupRef{Cluster: "pc1", Name: "broken-stream", ID: "1"}
		if _, err := backup.Run(t.Context(), direct, ref, backup.Owner{}, fixedProducer{dir: dir, coords: coords}); err == nil {
			t.Fatal("a backup whose stream broke succeeded")
		} else {
			t.Logf("failed as it must: %v", err)
		}
		if _, rerr := direct.ReadMetadata(t.Context(), ref); !errors.Is(rerr, objectstore.ErrNotFound) {
			t.Errorf("metadata.json after a failed backup: %v", rerr)
		}
		checkNoUploads(t, s3, direct.BackupDir(ref))
	})
	sums, executed := src.checksums(t)
	if !maps.Equal(sums, wantSums) || executed != wantGTID {
		t.Errorf("the source changed: %v %s, want %v %s", sums, executed, wantSums, wantGTID)
	}
}

func checkNoUploads(t *testing.T, s *s3test.Server, prefix string) {
	t.Helper()
	for u := range s.Client().ListIncompleteUploads(t.Context(), s.Bucket, prefix, true) {
		if u.Err != nil {
			t.Fatalf("listing incomplete uploads: %v", u.Err)
		}
		t.Errorf("multipart upload %s of %s left open", u.UploadID, u.Key)
	}
}

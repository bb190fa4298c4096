package objectstore_test

import (
	"bytes"
	"errors"
	"io"
	"regexp"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3proxy"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
)

func TestDownloadRefusesWhatDoesNotMatchTheMetadata(t *testing.T) {
	s := s3test.Start(t)
	proxy := s3proxy.Start(t, s.Endpoint)
	client := newClient(t, storeConfig(t, s, proxy.URL, testPrefix), false)
	const size = 6 << 20
	r := ref("verify", "id1")
	md, err := client.UploadBackup(t.Context(), request(r, newProducer(9, size)))
	if err != nil {
		t.Fatal(err)
	}
	archiveKey := client.BackupDir(r) + "backup.tar.zst"
	original := readDirect(t, s, archiveKey)

	archiveGet := s3proxy.And(s3proxy.OfKind(s3proxy.GetObject), s3proxy.MethodPath("", regexp.MustCompile(`/backup\.tar\.zst$`)))
	t.Run("a bit flipped in transit", func(t *testing.T) {
		proxy.Inject(s3proxy.Fault{Match: archiveGet, Action: s3proxy.CorruptResponseBody(size - 10), Times: 1})
		fired := proxy.Fired()
		_, err := client.DownloadBackup(t.Context(), r, io.Discard)
		if !errors.Is(err, objectstore.ErrChecksumMismatch) || proxy.Fired() != fired+1 {
			t.Errorf("got %v after %d faults, want ErrChecksumMismatch after 1", err, proxy.Fired()-fired)
		}
	})
	t.Run("the body cut in transit", func(t *testing.T) {
		proxy.Inject(s3proxy.Fault{Match: archiveGet, Action: s3proxy.CutResponseBody(1 << 20), Times: 1})
		fired := proxy.Fired()
		if _, err := client.DownloadBackup(t.Context(), r, io.Discard); err == nil || proxy.Fired() != fired+1 {
			t.Errorf("got %v after %d faults, want an error after 1", err, proxy.Fired()-fired)
		}
	})
	for name, content := range map[string][]byte{
		"same size, other bytes": append(append([]byte(nil), original[:size-1]...), original[size-1]^1),
		"truncated":              original[:size-1],
		"longer":                 append(append([]byte(nil), original...), 0),
	} {
		t.Run("archive replaced: "+name, func(t *testing.T) {
			writeDirect(t, s, archiveKey, content)
			var out bytes.Buffer
			_, err := client.DownloadBackup(t.Context(), r, &out)
			if !errors.Is(err, objectstore.ErrChecksumMismatch) {
				t.Errorf("got %v, want ErrChecksumMismatch", err)
			}
			rc, _, err := client.OpenBackup(t.Context(), r)
			if err != nil {
				t.Fatal(err)
			}
			_, err = io.Copy(io.Discard, rc)
			rc.Close()
			if !errors.Is(err, objectstore.ErrChecksumMismatch) {
				t.Errorf("OpenBackup: read to the end: got %v, want ErrChecksumMismatch", err)
			}
		})
	}
	writeDirect(t, s, archiveKey, original)
	if got, err := client.DownloadBackup(t.Context(), r, io.Discard); err != nil || *got != *md {
		t.Errorf("restored archive: %v", err)
	}
	t.Run("no metadata.json", func(t *testing.T) {
		if err := s.Client().RemoveObject(t.Context(), s.Bucket, client.BackupDir(r)+"metadata.json", minio.RemoveObjectOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := client.DownloadBackup(t.Context(), r, io.Discard); !errors.Is(err, objectstore.ErrNotFound) {
			t.Errorf("got %v, want ErrNotFound", err)
		}
	})
}

func readDirect(t *testing.T, s *s3test.Server, key string) []byte {
	t.Helper()
	obj, err := s.Client().GetObject(t.Context(), s.Bucket, key, minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	data, err := io.ReadAll(obj)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func writeDirect(t *testing.T, s *s3test.Server, key string, data []byte) {
	t.Helper()
	_, err := s.Client().PutObject(t.Context(), s.Bucket, key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

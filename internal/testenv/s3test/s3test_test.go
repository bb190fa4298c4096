package s3test_test

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
)

const (
	objectSize = 12 << 20
	partSize   = 5 << 20 // the S3 minimum: 3 parts
)

func TestSmoke(t *testing.T) {
	begin := time.Now()
	s := s3test.Start(t)
	t.Logf("versitygw ready with its bucket in %s", time.Since(begin).Round(time.Millisecond))
	if !strings.HasPrefix(s.Endpoint, "http://127.0.0.1:") || s.Region != "us-east-1" {
		t.Errorf("endpoint %s, region %s", s.Endpoint, s.Region)
	}
	client := s.Client()
	ctx := t.Context()

	data := make([]byte, objectSize)
	_, _ = rand.Read(data)
	want := sha256.Sum256(data)
	key := "backups/full/object.bin"
	// Unknown size: minio-go streams it as a multipart upload, one part of partSize at a time.
	body := struct{ io.Reader }{bytes.NewReader(data)}
	info, err := client.PutObject(ctx, s.Bucket, key, body, -1, minio.PutObjectOptions{PartSize: partSize})
	if err != nil {
		t.Fatalf("put: %v", err)
	}
	if info.Size != objectSize || !strings.HasSuffix(info.ETag, "-3") {
		t.Errorf("put: size %d, ETag %q; want %d bytes in 3 parts", info.Size, info.ETag, objectSize)
	}

	obj, err := client.GetObject(ctx, s.Bucket, key, minio.GetObjectOptions{})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	h := sha256.New()
	n, err := io.Copy(h, obj)
	obj.Close()
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if n != objectSize || !bytes.Equal(h.Sum(nil), want[:]) {
		t.Errorf("read back %d bytes with sha256 %x, want %d bytes with %x", n, h.Sum(nil), objectSize, want)
	}

	var listed []minio.ObjectInfo
	for o := range client.ListObjects(ctx, s.Bucket, minio.ListObjectsOptions{Prefix: "backups/", Recursive: true}) {
		if o.Err != nil {
			t.Fatalf("list: %v", o.Err)
		}
		listed = append(listed, o)
	}
	if len(listed) != 1 || listed[0].Key != key || listed[0].Size != objectSize {
		t.Errorf("list: got %+v, want only %s of %d bytes", listed, key, objectSize)
	}

	checkRejected(t, s)
	checkStop(t, s)
}

// checkRejected checks that requests signed with a wrong secret or an unknown key are refused.
// versitygw answers an unknown key with 404 XAdminUserNotFound where S3 answers 403
// InvalidAccessKeyId; on a HEAD request (StatObject) that surfaces as a bare 404, which minio-go
// reports as NoSuchKey.
func checkRejected(t *testing.T, s *s3test.Server) {
	t.Helper()
	authCodes := map[string]bool{"SignatureDoesNotMatch": true, "InvalidAccessKeyId": true, "XAdminUserNotFound": true}
	for name, creds := range map[string][2]string{
		"wrong secret": {s.AccessKey, s.SecretKey + "x"},
		"unknown key":  {"AKIAUNKNOWNKEY000000", s.SecretKey},
	} {
		c, err := s.NewClient(creds[0], creds[1])
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.ListBuckets(t.Context())
		if code := minio.ToErrorResponse(err).Code; !authCodes[code] {
			t.Errorf("%s: list buckets: got %v (code %q), want an authentication error", name, err, code)
		}
		obj, err := c.GetObject(t.Context(), s.Bucket, "backups/full/object.bin", minio.GetObjectOptions{})
		if err == nil {
			_, err = io.Copy(io.Discard, obj)
			obj.Close()
		}
		if code := minio.ToErrorResponse(err).Code; !authCodes[code] {
			t.Errorf("%s: get object: got %v (code %q), want an authentication error", name, err, code)
		}
	}
	c, _ := s.NewClient(s.AccessKey, s.SecretKey+"x")
	_, err := c.StatObject(t.Context(), s.Bucket, "backups/full/object.bin", minio.StatObjectOptions{})
	if status := minio.ToErrorResponse(err).StatusCode; status != http.StatusForbidden {
		t.Errorf("wrong secret: stat object: got %v (status %d), want 403", err, status)
	}
}

func checkStop(t *testing.T, s *s3test.Server) {
	t.Helper()
	pid := s.PID()
	begin := time.Now()
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	t.Logf("versitygw stopped in %s", time.Since(begin).Round(time.Millisecond))
	if s.Running() {
		t.Error("running after Close")
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("versitygw pid %d still exists after Close: %v", pid, err)
	}
	if conn, err := net.DialTimeout("tcp", s.Addr, time.Second); err == nil {
		conn.Close()
		t.Errorf("%s still accepts connections after Close", s.Addr)
	}
	if strings.Contains(s.Output(), s.SecretKey) {
		t.Error("the secret key appears in versitygw's output")
	}
}

package objectstore_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3proxy"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
)

func TestUploadDownloadRoundTrip(t *testing.T) {
	s := s3test.Start(t)
	proxy := s3proxy.Start(t, s.Endpoint)
	client := newClient(t, storeConfig(t, s, proxy.URL, testPrefix+"/"), false)
	const size = 40<<20 + 12345 // 9 parts of 5 MiB, the last one short
	p := newProducer(1, size)
	r := ref("nightly-20260301", "20260301T120000Z")

	req := request(r, p)
	req.Namespace = "team-a"
	md, err := client.UploadBackup(t.Context(), req)
	if err != nil {
		t.Fatalf("upload: %v", err)
	}
	want := p.result()
	if md.Size != size || md.Namespace != "team-a" || md.SHA256 != want.SHA256 || md.GTIDExecuted != want.GTIDExecuted ||
		md.BinlogFile != want.BinlogFile || md.BinlogPosition != want.BinlogPosition || md.Ref() != r ||
		md.Method != "clone" || md.Format != "tar" || md.Compression != "zstd" || !md.StoppedAt.Equal(want.StoppedAt) {
		t.Errorf("metadata %+v does not describe the upload %+v", md, want)
	}
	if got := proxy.Count(s3proxy.UploadPart); got != 9 {
		t.Errorf("%d parts uploaded, want 9 (counts %v)", got, proxy.Counts())
	}

	// What the store holds, read directly: the archive under the documented key, and metadata.
	dir := "backups/prod/pc1/nightly-20260301/20260301T120000Z/"
	if client.BackupDir(r) != dir {
		t.Errorf("backup dir %q, want %q", client.BackupDir(r), dir)
	}
	obj, err := s.Client().GetObject(t.Context(), s.Bucket, dir+"backup.tar.zst", minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sum, n, err := sha256Hex(obj)
	obj.Close()
	if err != nil || n != size || sum != want.SHA256 {
		t.Errorf("stored archive: %d bytes, sha256 %s, %v; want %d bytes, %s", n, sum, err, size, want.SHA256)
	}
	stored, err := client.ReadMetadata(t.Context(), r)
	if err != nil || *stored != *md {
		t.Errorf("metadata.json: %+v, %v; want %+v", stored, err, md)
	}

	var buf bytes.Buffer
	got, err := client.DownloadBackup(t.Context(), r, &buf)
	if err != nil || *got != *md {
		t.Fatalf("download: %v (metadata %+v)", err, got)
	}
	if sum, n, _ := sha256Hex(&buf); n != size || sum != want.SHA256 {
		t.Errorf("downloaded %d bytes with sha256 %s, want %d, %s", n, sum, size, want.SHA256)
	}
	checkNoUploads(t, s, "", "after a clean upload")

	// A backup id is used once: a second upload is refused before it touches anything.
	proxy.Reset()
	_, err = client.UploadBackup(t.Context(), request(r, newProducer(2, 1<<20)))
	if !errors.Is(err, objectstore.ErrAlreadyExists) {
		t.Errorf("second upload: got %v, want ErrAlreadyExists", err)
	}
	if c := proxy.Counts(); len(c) != 1 || c[s3proxy.HeadObject] != 1 {
		t.Errorf("refused upload made requests %v, want one HeadObject", c)
	}
	if _, err := client.DownloadBackup(t.Context(), r, io.Discard); err != nil {
		t.Errorf("the first backup no longer verifies: %v", err)
	}
}

func TestEmptyPathPrefix(t *testing.T) {
	s := s3test.Start(t)
	client := newClient(t, storeConfig(t, s, s.Endpoint, ""), false)
	r := ref("b1", "id1")
	if _, err := client.UploadBackup(t.Context(), request(r, newProducer(3, 1000))); err != nil {
		t.Fatalf("upload: %v", err)
	}
	var keys []string
	for o := range s.Client().ListObjects(t.Context(), s.Bucket, minio.ListObjectsOptions{Recursive: true}) {
		keys = append(keys, o.Key)
	}
	want := []string{"pc1/b1/id1/backup.tar.zst", "pc1/b1/id1/metadata.json"}
	if strings.Join(keys, " ") != strings.Join(want, " ") {
		t.Errorf("keys %q, want %q", keys, want)
	}
}

func TestWrongCredentialsRejected(t *testing.T) {
	s := s3test.Start(t)
	for name, creds := range map[string]objectstore.Credentials{
		"wrong secret": {AccessKeyID: s.AccessKey, SecretAccessKey: s.SecretKey + "x"},
		"unknown key":  {AccessKeyID: "AKIAUNKNOWNKEY000000", SecretAccessKey: s.SecretKey},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := storeConfig(t, s, s.Endpoint, testPrefix)
			cfg.Credentials = creds
			client := newClient(t, cfg, false)
			r := ref("b1", "id1")
			_, err := client.UploadBackup(t.Context(), request(r, newProducer(4, 1000)))
			checkAuthError(t, "upload", err, creds.SecretAccessKey)
			_, err = client.ListBackups(t.Context(), testCluster)
			checkAuthError(t, "list", err, creds.SecretAccessKey)
			_, _, err = client.ReadIndex(t.Context(), testCluster)
			checkAuthError(t, "read index", err, creds.SecretAccessKey)
			checkNothingLeft(t, s, "", "after the refused upload")
		})
	}
}

// checkAuthError accepts what S3 and versitygw answer to bad credentials. versitygw answers an
// unknown key with 404 XAdminUserNotFound, which a HEAD request only shows as a bare 404.
func checkAuthError(t *testing.T, op string, err error, secret string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: succeeded with bad credentials", op)
		return
	}
	if strings.Contains(err.Error(), secret) {
		t.Errorf("%s: the error shows the secret", op)
	}
	var resp minio.ErrorResponse
	errors.As(err, &resp)
	switch {
	case resp.StatusCode == http.StatusForbidden,
		resp.Code == "SignatureDoesNotMatch", resp.Code == "InvalidAccessKeyId", resp.Code == "XAdminUserNotFound",
		resp.StatusCode == http.StatusNotFound && op == "upload": // HEAD of metadata.json by an unknown key
	default:
		t.Errorf("%s: got %v (status %d, code %q), want an authentication error", op, err, resp.StatusCode, resp.Code)
	}
}

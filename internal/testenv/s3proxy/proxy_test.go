package s3proxy_test

import (
	"bytes"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3proxy"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
)

// env is a real versitygw, a proxy in front of it, a client through the proxy that never
// retries (so each fault surfaces) and a direct client to see what the server holds.
type env struct {
	s      *s3test.Server
	proxy  *s3proxy.Proxy
	client *minio.Client
	direct *minio.Client
}

func newEnv(t *testing.T) *env {
	t.Helper()
	s := s3test.Start(t)
	p := s3proxy.Start(t, s.Endpoint)
	return &env{s: s, proxy: p, client: newClient(t, s, p.Host, nil), direct: s.Client()}
}

func newClient(t *testing.T, s *s3test.Server, host string, roots *x509.CertPool) *minio.Client {
	t.Helper()
	opts := &minio.Options{
		Creds:        credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""),
		Region:       s.Region,
		BucketLookup: minio.BucketLookupPath,
		MaxRetries:   1,
	}
	if roots != nil {
		opts.Secure = true
		opts.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}
	}
	c, err := minio.New(host, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (e *env) put(t *testing.T, key string, data []byte) error {
	t.Helper()
	_, err := e.client.PutObject(t.Context(), e.s.Bucket, key, bytes.NewReader(data), int64(len(data)),
		minio.PutObjectOptions{})
	return err
}

func (e *env) get(t *testing.T, key string) ([]byte, error) {
	t.Helper()
	obj, err := e.client.GetObject(t.Context(), e.s.Bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, err
	}
	defer obj.Close()
	return io.ReadAll(obj)
}

// stored returns what the server holds at key, or nil.
func (e *env) stored(t *testing.T, key string) []byte {
	t.Helper()
	obj, err := e.direct.GetObject(t.Context(), e.s.Bucket, key, minio.GetObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	data, err := io.ReadAll(obj)
	if minio.ToErrorResponse(err).Code == "NoSuchKey" {
		return nil
	}
	if err != nil {
		t.Fatalf("reading %s directly: %v", key, err)
	}
	return data
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

func TestForwardsAndCounts(t *testing.T) {
	e := newEnv(t)
	data := randomBytes(11 << 20)
	_, err := e.client.PutObject(t.Context(), e.s.Bucket, "dir/big", struct{ io.Reader }{bytes.NewReader(data)}, -1,
		minio.PutObjectOptions{PartSize: 5 << 20})
	if err != nil {
		t.Fatalf("multipart put through the proxy: %v", err)
	}
	if err := e.put(t, "dir/small", []byte("small")); err != nil {
		t.Fatalf("put: %v", err)
	}
	got, err := e.get(t, "dir/big")
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("get: %d bytes, %v; want the %d bytes put", len(got), err, len(data))
	}
	if _, err := e.client.StatObject(t.Context(), e.s.Bucket, "dir/small", minio.StatObjectOptions{}); err != nil {
		t.Fatalf("stat: %v", err)
	}
	for o := range e.client.ListObjects(t.Context(), e.s.Bucket, minio.ListObjectsOptions{Prefix: "dir/"}) {
		if o.Err != nil {
			t.Fatalf("list: %v", o.Err)
		}
	}
	if err := e.client.RemoveObject(t.Context(), e.s.Bucket, "dir/small", minio.RemoveObjectOptions{}); err != nil {
		t.Fatalf("remove: %v", err)
	}
	want := map[s3proxy.Kind]int{
		s3proxy.CreateMultipartUpload: 1, s3proxy.UploadPart: 3, s3proxy.CompleteMultipartUpload: 1,
		s3proxy.PutObject: 1, s3proxy.GetObject: 1, s3proxy.HeadObject: 1, s3proxy.ListObjects: 1,
		s3proxy.DeleteObject: 1,
	}
	total := 0
	for k, n := range want {
		total += n
		if got := e.proxy.Count(k); got != n {
			t.Errorf("%s: counted %d, want %d (all: %v)", k, got, n, e.proxy.Counts())
		}
	}
	if e.proxy.Total() != total || len(e.proxy.Requests()) != total || e.proxy.Fired() != 0 {
		t.Errorf("total %d, %d recorded, %d faults fired; want %d, %d, 0",
			e.proxy.Total(), len(e.proxy.Requests()), e.proxy.Fired(), total, total)
	}
	e.proxy.Reset()
	if e.proxy.Total() != 0 || len(e.proxy.Counts()) != 0 {
		t.Errorf("after Reset: total %d, counts %v", e.proxy.Total(), e.proxy.Counts())
	}
}

func TestStatusFailsOnlyTheNthRequest(t *testing.T) {
	e := newEnv(t)
	e.proxy.FailNth(2, s3proxy.Status(http.StatusInternalServerError))
	if err := e.put(t, "a", []byte("1")); err != nil {
		t.Fatalf("request 1: %v", err)
	}
	err := e.put(t, "b", []byte("2"))
	if resp := minio.ToErrorResponse(err); resp.StatusCode != http.StatusInternalServerError || resp.Code != "InternalError" {
		t.Fatalf("request 2: got %v (status %d, code %q), want an injected 500", err, resp.StatusCode, resp.Code)
	}
	if e.stored(t, "b") != nil {
		t.Error("the failed request reached the server")
	}
	if err := e.put(t, "c", []byte("3")); err != nil {
		t.Fatalf("request 3: %v", err)
	}
	if e.proxy.Fired() != 1 {
		t.Errorf("fired %d faults, want 1", e.proxy.Fired())
	}
}

func TestDrop(t *testing.T) {
	e := newEnv(t)
	e.proxy.Inject(s3proxy.Fault{Match: s3proxy.OfKind(s3proxy.PutObject), Action: s3proxy.Drop(), Times: 1})
	err := e.put(t, "a", []byte("dropped"))
	if err == nil || minio.ToErrorResponse(err).StatusCode != 0 {
		t.Fatalf("got %v, want a connection error", err)
	}
	if e.stored(t, "a") != nil {
		t.Error("a dropped request reached the server")
	}
	if err := e.put(t, "a", []byte("second")); err != nil {
		t.Fatalf("Times: 1 should let the second put through: %v", err)
	}
}

func TestDropResponseActsThenLosesTheAnswer(t *testing.T) {
	e := newEnv(t)
	e.proxy.Inject(s3proxy.Fault{Match: s3proxy.OfKind(s3proxy.PutObject), Action: s3proxy.DropResponse(), Times: 1})
	err := e.put(t, "a", []byte("landed"))
	if err == nil {
		t.Fatal("put succeeded, want the response lost")
	}
	if got := e.stored(t, "a"); string(got) != "landed" {
		t.Errorf("server holds %q, want the request acted on", got)
	}
}

func TestCutRequestBody(t *testing.T) {
	e := newEnv(t)
	e.proxy.Inject(s3proxy.Fault{Match: s3proxy.OfKind(s3proxy.PutObject), Action: s3proxy.CutRequestBody(100 << 10)})
	err := e.put(t, "cut", randomBytes(1<<20))
	if err == nil {
		t.Fatal("put with a cut body succeeded")
	}
	if got := e.stored(t, "cut"); got != nil {
		t.Errorf("server stored %d bytes of a cut body", len(got))
	}
}

func TestCutAndCorruptResponseBody(t *testing.T) {
	e := newEnv(t)
	data := randomBytes(1 << 20)
	if err := e.put(t, "obj", data); err != nil {
		t.Fatal(err)
	}
	e.proxy.Inject(s3proxy.Fault{Match: s3proxy.OfKind(s3proxy.GetObject), Action: s3proxy.CutResponseBody(300 << 10), Times: 1})
	got, err := e.get(t, "obj")
	if err == nil || len(got) >= len(data) || !bytes.Equal(got, data[:len(got)]) {
		t.Errorf("cut: read %d bytes, %v; want a prefix of the object and an error", len(got), err)
	}
	e.proxy.Inject(s3proxy.Fault{Match: s3proxy.OfKind(s3proxy.GetObject), Action: s3proxy.CorruptResponseBody(12345), Times: 1})
	got, err = e.get(t, "obj")
	if err != nil || len(got) != len(data) {
		t.Fatalf("corrupt: read %d bytes, %v; want all %d", len(got), err, len(data))
	}
	for i := range got {
		if (got[i] != data[i]) != (i == 12345) {
			t.Fatalf("corrupt: byte %d is %#x, stored %#x; want only byte 12345 changed", i, got[i], data[i])
		}
	}
	if got, err := e.get(t, "obj"); err != nil || !bytes.Equal(got, data) {
		t.Errorf("after the faults: %d bytes, %v; want the object intact", len(got), err)
	}
}

func TestDelayAndMethodPath(t *testing.T) {
	e := newEnv(t)
	const d = 300 * time.Millisecond
	e.proxy.Inject(s3proxy.Fault{
		Match:  s3proxy.MethodPath(http.MethodPut, regexp.MustCompile(`/slow$`)),
		Action: s3proxy.Delay(d),
	})
	begin := time.Now()
	if err := e.put(t, "fast", []byte("x")); err != nil || time.Since(begin) >= d {
		t.Errorf("unmatched put: %v after %s, want no delay", err, time.Since(begin))
	}
	begin = time.Now()
	if err := e.put(t, "slow", []byte("x")); err != nil || time.Since(begin) < d {
		t.Errorf("matched put: %v after %s, want success after at least %s", err, time.Since(begin), d)
	}
	e.proxy.ClearFaults()
	begin = time.Now()
	if err := e.put(t, "slow", []byte("y")); err != nil || time.Since(begin) >= d {
		t.Errorf("after ClearFaults: %v after %s, want no delay", err, time.Since(begin))
	}
}

func TestTLS(t *testing.T) {
	s := s3test.Start(t)
	p := s3proxy.StartTLS(t, s.Endpoint)
	if !strings.HasPrefix(p.URL, "https://") {
		t.Fatalf("URL %s", p.URL)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(p.CACertPEM()) {
		t.Fatal("CACertPEM holds no certificate")
	}
	trusted := newClient(t, s, p.Host, roots)
	if _, err := trusted.PutObject(t.Context(), s.Bucket, "k", bytes.NewReader([]byte("v")), 1, minio.PutObjectOptions{}); err != nil {
		t.Fatalf("put over TLS with the CA: %v", err)
	}
	untrusted := newClient(t, s, p.Host, x509.NewCertPool())
	_, err := untrusted.StatObject(t.Context(), s.Bucket, "k", minio.StatObjectOptions{})
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &unknown) {
		t.Errorf("without the CA: got %v, want an unknown authority error", err)
	}
}

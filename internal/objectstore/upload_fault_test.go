package objectstore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3proxy"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
)

// sweepSize makes three parts of MinPartSize: the clean upload makes 8 requests (HEAD
// metadata.json, create, 3 parts, complete, HEAD archive, PUT metadata.json).
const sweepSize = 2*objectstore.MinPartSize + 777

func TestProducerFailureWritesNoMetadata(t *testing.T) {
	s := s3test.Start(t)
	client := newClient(t, storeConfig(t, s, s.Endpoint, testPrefix), false)
	for i, tc := range []struct {
		name       string
		setup      func(p *producer, req *objectstore.UploadRequest)
		wantErr    error // nil: any error
		wantFinish bool
	}{
		{name: "the stream fails after two parts", setup: func(p *producer, _ *objectstore.UploadRequest) {
			p.failAt = 2*objectstore.MinPartSize + 1
		}, wantErr: errProducer},
		{name: "the producer exits with an error after a clean stream", setup: func(p *producer, req *objectstore.UploadRequest) {
			req.Finish = func() (objectstore.ProducerResult, error) {
				p.finished = true
				return p.result(), fmt.Errorf("clone: exit status 1")
			}
		}, wantFinish: true},
		{name: "the producer wrote more bytes than were read", setup: func(p *producer, req *objectstore.UploadRequest) {
			req.Finish = func() (objectstore.ProducerResult, error) {
				p.finished = true
				r := p.result()
				r.Size += 4096
				return r, nil
			}
		}, wantErr: objectstore.ErrChecksumMismatch, wantFinish: true},
		{name: "the producer's sha256 differs", setup: func(p *producer, req *objectstore.UploadRequest) {
			req.Finish = func() (objectstore.ProducerResult, error) {
				p.finished = true
				r := p.result()
				r.SHA256 = strings.Repeat("0", 64)
				return r, nil
			}
		}, wantErr: objectstore.ErrChecksumMismatch, wantFinish: true},
		{name: "the producer's result makes invalid metadata", setup: func(p *producer, req *objectstore.UploadRequest) {
			req.Finish = func() (objectstore.ProducerResult, error) {
				p.finished = true
				r := p.result()
				r.ServerVersion = ""
				return r, nil
			}
		}, wantErr: objectstore.ErrInvalid, wantFinish: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ref("failing", fmt.Sprintf("case%d", i))
			p := newProducer(5, sweepSize)
			req := request(r, p)
			tc.setup(p, &req)
			md, err := client.UploadBackup(t.Context(), req)
			if err == nil || md != nil {
				t.Fatalf("upload succeeded: %+v", md)
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("got %v, want %v", err, tc.wantErr)
			}
			if p.finished != tc.wantFinish {
				t.Errorf("finish called: %t, want %t", p.finished, tc.wantFinish)
			}
			checkNothingLeft(t, s, client.BackupDir(r), tc.name)
			if _, err := client.ReadMetadata(t.Context(), r); !errors.Is(err, objectstore.ErrNotFound) {
				t.Errorf("read metadata: got %v, want ErrNotFound", err)
			}
		})
	}
}

// TestUploadFaultSweep fails each request of an upload in turn, in each way a request can fail.
// Either the upload reports the failure and leaves nothing (no metadata.json, no archive, no open
// multipart upload), or it succeeded and the backup verifies. Only a HEAD whose connection broke
// may succeed: Go's HTTP transport resends an idempotent request when a reused connection breaks.
func TestUploadFaultSweep(t *testing.T) {
	s := s3test.Start(t)
	proxy := s3proxy.Start(t, s.Endpoint)
	client := newClient(t, storeConfig(t, s, proxy.URL, testPrefix), false)

	clean := ref("sweep", "clean")
	if _, err := client.UploadBackup(t.Context(), request(clean, newProducer(6, sweepSize))); err != nil {
		t.Fatalf("clean upload: %v", err)
	}
	calls := proxy.Requests()
	t.Logf("a clean upload makes %d requests: %v", len(calls), calls)
	if len(calls) != 8 {
		t.Fatalf("clean upload made %d requests, want 8", len(calls))
	}
	actions := map[string]s3proxy.Action{
		"500":           s3proxy.Status(http.StatusInternalServerError),
		"drop":          s3proxy.Drop(),
		"lost response": s3proxy.DropResponse(),
	}
	failed, absorbed := 0, 0
	for n := 1; n <= len(calls); n++ {
		for name, action := range actions {
			what := fmt.Sprintf("%s at request %d (%s)", name, n, calls[n-1].Kind)
			r := ref("sweep", fmt.Sprintf("n%d-%s", n, strings.ReplaceAll(name, " ", "-")))
			proxy.Reset()
			proxy.FailNth(n, action)
			md, err := client.UploadBackup(t.Context(), request(r, newProducer(6, sweepSize)))
			if proxy.Fired() != 1 {
				t.Errorf("%s: the fault fired %d times", what, proxy.Fired())
			}
			if err != nil {
				failed++
				checkNothingLeft(t, s, client.BackupDir(r), what)
				continue
			}
			absorbed++
			t.Logf("%s: absorbed, %d requests: %v", what, proxy.Total(), proxy.Requests()[n-1:])
			if calls[n-1].Kind != s3proxy.HeadObject || strings.HasPrefix(name, "50") {
				t.Errorf("%s: upload succeeded (%+v)", what, md)
			}
			if _, err := client.DownloadBackup(t.Context(), r, io.Discard); err != nil {
				t.Errorf("%s: upload succeeded but the backup does not verify: %v", what, err)
			}
		}
	}
	t.Logf("%d faulty uploads failed cleanly, %d absorbed a broken HEAD connection", failed, absorbed)
	// The clean backup is untouched by all of that.
	if _, err := client.DownloadBackup(t.Context(), clean, io.Discard); err != nil {
		t.Errorf("clean backup: %v", err)
	}
}

// TestUploadCutBodies cuts the body of each part and of metadata.json mid-stream.
func TestUploadCutBodies(t *testing.T) {
	s := s3test.Start(t)
	proxy := s3proxy.Start(t, s.Endpoint)
	client := newClient(t, storeConfig(t, s, proxy.URL, testPrefix), false)
	for _, tc := range []struct {
		kind s3proxy.Kind
		nth  int
	}{{s3proxy.UploadPart, 1}, {s3proxy.UploadPart, 2}, {s3proxy.UploadPart, 3}, {s3proxy.PutObject, 1}} {
		what := fmt.Sprintf("%s #%d cut", tc.kind, tc.nth)
		r := ref("cut", fmt.Sprintf("%s-%d", strings.ToLower(string(tc.kind)), tc.nth))
		proxy.Reset()
		seen := 0
		proxy.Inject(s3proxy.Fault{Match: func(req s3proxy.Request) bool {
			if req.Kind != tc.kind {
				return false
			}
			seen++
			return seen == tc.nth
		}, Action: s3proxy.CutRequestBody(100), Times: 1})
		if _, err := client.UploadBackup(t.Context(), request(r, newProducer(7, sweepSize))); err == nil {
			t.Errorf("%s: upload succeeded", what)
		}
		if proxy.Fired() != 1 {
			t.Errorf("%s: the fault fired %d times", what, proxy.Fired())
		}
		checkNothingLeft(t, s, client.BackupDir(r), what)
	}
}

// TestUploadRetriesAbsorbTransientErrors: with retries on (the production setting), a single
// 500 anywhere in the upload is retried and the backup completes and verifies.
func TestUploadRetriesAbsorbTransientErrors(t *testing.T) {
	s := s3test.Start(t)
	proxy := s3proxy.Start(t, s.Endpoint)
	client := newClient(t, storeConfig(t, s, proxy.URL, testPrefix), true)
	for n := 1; n <= 8; n++ {
		r := ref("retry", fmt.Sprintf("n%d", n))
		proxy.Reset()
		proxy.FailNth(n, s3proxy.Status(http.StatusInternalServerError))
		if _, err := client.UploadBackup(t.Context(), request(r, newProducer(8, sweepSize))); err != nil {
			t.Errorf("500 at request %d: %v", n, err)
			continue
		}
		if proxy.Fired() != 1 || proxy.Total() != 9 {
			t.Errorf("500 at request %d: %d faults, %d requests; want 1 and 9", n, proxy.Fired(), proxy.Total())
		}
		if _, err := client.DownloadBackup(t.Context(), r, io.Discard); err != nil {
			t.Errorf("500 at request %d: download: %v", n, err)
		}
	}
	checkNoUploads(t, s, "", "after the retried uploads")
}

// hungReader yields one part of data, then blocks until released, as a producer that hangs.
type hungReader struct {
	data    io.Reader
	release chan struct{}
}

func (h *hungReader) Read(b []byte) (int, error) {
	if n, err := h.data.Read(b); n > 0 || err == nil {
		return n, nil
	}
	<-h.release
	return 0, errProducer
}

// TestHungProducerIsAbandoned: neither a producer that stops sending nor one that never exits
// can hold an upload past its context.
func TestHungProducerIsAbandoned(t *testing.T) {
	s := s3test.Start(t)
	client := newClient(t, storeConfig(t, s, s.Endpoint, testPrefix), false)
	release := make(chan struct{})
	defer close(release)
	for _, tc := range []struct {
		name  string
		setup func(req *objectstore.UploadRequest)
	}{
		{"the stream stalls", func(req *objectstore.UploadRequest) {
			req.Archive = &hungReader{data: io.LimitReader(newProducer(40, 1<<30), objectstore.MinPartSize+10), release: release}
		}},
		{"the producer never exits", func(req *objectstore.UploadRequest) {
			req.Finish = func() (objectstore.ProducerResult, error) {
				<-release
				return objectstore.ProducerResult{}, errProducer
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ref("hung", strings.ReplaceAll(tc.name, " ", "-"))
			req := request(r, newProducer(41, 1000))
			tc.setup(&req)
			ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
			defer cancel()
			begin := time.Now()
			_, err := client.UploadBackup(ctx, req)
			if !errors.Is(err, context.DeadlineExceeded) || time.Since(begin) > 5*time.Second {
				t.Errorf("got %v after %s, want the deadline error promptly", err, time.Since(begin))
			}
			checkNothingLeft(t, s, client.BackupDir(r), tc.name)
		})
	}
}

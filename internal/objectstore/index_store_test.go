package objectstore_test

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3proxy"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
)

func segment(name string) objectstore.Segment {
	return objectstore.Segment{
		Name: name, Size: 1024, SHA256: strings.Repeat("ab", 32),
		FirstEventTime: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC),
		LastEventTime:  time.Date(2026, 3, 1, 1, 0, 0, 0, time.UTC),
		GTIDRange:      "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-42",
	}
}

// TestIndexConditionalWrites checks that versitygw honours If-None-Match: * and If-Match on PUT,
// which the index's compare-and-swap relies on.
func TestIndexConditionalWrites(t *testing.T) {
	s := s3test.Start(t)
	client := newClient(t, storeConfig(t, s, s.Endpoint, testPrefix), false)
	ctx := t.Context()

	index, etag, err := client.ReadIndex(ctx, testCluster)
	if err != nil || etag != "" || len(index.Segments) != 0 || index.SchemaVersion != objectstore.IndexSchemaVersion {
		t.Fatalf("no index yet: got %+v, ETag %q, %v; want an empty index and no ETag", index, etag, err)
	}
	index.Upsert(segment("binlog.000001"))
	etag1, err := client.WriteIndex(ctx, testCluster, index, "")
	if err != nil || etag1 == "" {
		t.Fatalf("create: ETag %q, %v", etag1, err)
	}
	index.Upsert(segment("binlog.000002"))
	if _, err := client.WriteIndex(ctx, testCluster, index, ""); !errors.Is(err, objectstore.ErrConflict) {
		t.Errorf("create over an existing index (If-None-Match: *): got %v, want ErrConflict", err)
	}
	etag2, err := client.WriteIndex(ctx, testCluster, index, etag1)
	if err != nil || etag2 == etag1 {
		t.Fatalf("update at the current ETag: ETag %q, %v", etag2, err)
	}
	stale := objectstore.NewIndex()
	stale.Upsert(segment("lost"))
	if _, err := client.WriteIndex(ctx, testCluster, stale, etag1); !errors.Is(err, objectstore.ErrConflict) {
		t.Errorf("update at a stale ETag (If-Match): got %v, want ErrConflict", err)
	}
	got, etag, err := client.ReadIndex(ctx, testCluster)
	if err != nil || etag != etag2 || len(got.Segments) != 2 {
		t.Errorf("read back: %+v, ETag %q (want %q), %v", got, etag, etag2, err)
	}
	if err := s.Client().RemoveObject(ctx, s.Bucket, objectstore.IndexKey(testPrefix, testCluster), minio.RemoveObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.WriteIndex(ctx, testCluster, index, etag2); !errors.Is(err, objectstore.ErrConflict) {
		t.Errorf("update of a deleted index (If-Match): got %v, want ErrConflict", err)
	}
}

// TestUpdateIndexConcurrentWritersLoseNothing runs writers that each add their own segments at
// once, with reads slowed down so that their read-modify-write cycles overlap, and checks that
// every segment is in the final index.
func TestUpdateIndexConcurrentWritersLoseNothing(t *testing.T) {
	s := s3test.Start(t)
	proxy := s3proxy.Start(t, s.Endpoint)
	const writers, updates = 6, 8
	proxy.Inject(s3proxy.Fault{
		Match:  s3proxy.And(s3proxy.OfKind(s3proxy.GetObject), s3proxy.MethodPath("", regexp.MustCompile(`/_index\.json$`))),
		Action: s3proxy.Delay(15 * time.Millisecond),
	})
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, writers*updates)
	for w := range writers {
		client := newClient(t, storeConfig(t, s, proxy.URL, testPrefix), false)
		wg.Go(func() {
			<-start
			for u := range updates {
				name := fmt.Sprintf("w%d/binlog.%06d", w, u)
				_, err := client.UpdateIndex(t.Context(), testCluster, func(x *objectstore.Index) error {
					x.Upsert(segment(name))
					return nil
				})
				if err != nil {
					errs <- fmt.Errorf("writer %d, update %d: %w", w, u, err)
				}
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	index, _, err := newClient(t, storeConfig(t, s, s.Endpoint, testPrefix), false).ReadIndex(t.Context(), testCluster)
	if err != nil {
		t.Fatal(err)
	}
	for w := range writers {
		for u := range updates {
			if _, ok := index.Find(fmt.Sprintf("w%d/binlog.%06d", w, u)); !ok {
				t.Errorf("update %d of writer %d was lost", u, w)
			}
		}
	}
	puts := proxy.Count(s3proxy.PutObject)
	t.Logf("%d updates took %d conditional writes (%d conflicts), %d reads",
		writers*updates, puts, puts-writers*updates, proxy.Count(s3proxy.GetObject))
	if len(index.Segments) != writers*updates || puts <= writers*updates {
		t.Errorf("%d segments after %d writes; want %d, and conflicts to have happened", len(index.Segments), puts, writers*updates)
	}
}

// TestUpdateIndexLostAnswer: the write lands but its answer is lost; minio-go resends it, the
// resend fails its precondition, and UpdateIndex recognises its own bytes instead of applying
// the mutation a second time.
func TestUpdateIndexLostAnswer(t *testing.T) {
	s := s3test.Start(t)
	proxy := s3proxy.Start(t, s.Endpoint)
	client := newClient(t, storeConfig(t, s, proxy.URL, testPrefix), true)
	calls := 0
	mutate := func(x *objectstore.Index) error {
		calls++
		x.Upsert(segment(fmt.Sprintf("binlog.%06d", len(x.Segments)+1))) // not idempotent on purpose
		return nil
	}
	if _, err := client.UpdateIndex(t.Context(), testCluster, mutate); err != nil {
		t.Fatal(err)
	}
	proxy.Reset()
	proxy.Inject(s3proxy.Fault{Match: s3proxy.OfKind(s3proxy.PutObject), Action: s3proxy.DropResponse(), Times: 1})
	index, err := client.UpdateIndex(t.Context(), testCluster, mutate)
	if err != nil {
		t.Fatalf("update with a lost answer: %v", err)
	}
	if calls != 2 || len(index.Segments) != 2 || proxy.Count(s3proxy.PutObject) != 2 {
		t.Errorf("mutate ran %d times, %d segments, %d writes; want 2, 2, 2 (requests %v)",
			calls, len(index.Segments), proxy.Count(s3proxy.PutObject), proxy.Requests())
	}
	stored, _, err := client.ReadIndex(t.Context(), testCluster)
	if err != nil || len(stored.Segments) != 2 {
		t.Errorf("stored index: %+v, %v; want 2 segments", stored, err)
	}
	// A mutation that changes nothing writes nothing.
	proxy.Reset()
	if _, err := client.UpdateIndex(t.Context(), testCluster, func(*objectstore.Index) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if proxy.Count(s3proxy.PutObject) != 0 {
		t.Errorf("a no-op update wrote the index")
	}
	// An error from mutate stops the update.
	boom := errors.New("boom")
	if _, err := client.UpdateIndex(t.Context(), testCluster, func(*objectstore.Index) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("got %v, want the mutation's error", err)
	}
}

func TestIndexRefusesNewerSchema(t *testing.T) {
	s := s3test.Start(t)
	client := newClient(t, storeConfig(t, s, s.Endpoint, testPrefix), false)
	writeDirect(t, s, objectstore.IndexKey(testPrefix, testCluster), []byte(`{"schemaVersion":2,"segments":[]}`))
	if _, _, err := client.ReadIndex(t.Context(), testCluster); !errors.Is(err, objectstore.ErrInvalid) {
		t.Errorf("read: got %v, want ErrInvalid", err)
	}
	_, err := client.UpdateIndex(t.Context(), testCluster, func(x *objectstore.Index) error {
		x.Upsert(segment("binlog.000001"))
		return nil
	})
	if !errors.Is(err, objectstore.ErrInvalid) {
		t.Errorf("update: got %v, want ErrInvalid (never overwrite an index it cannot read)", err)
	}
}

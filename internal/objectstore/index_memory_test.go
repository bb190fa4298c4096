package objectstore_test

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
)

// TestReadIndexMemoryBounded reads a large _index.json and samples the Go heap meanwhile: the
// reader decodes the document one segment at a time, so the heap grows by about the decoded
// segments, not by the document besides them (and the copies a whole-document read makes).
// The GC runs often during the read so that the samples follow what is live.
func TestReadIndexMemoryBounded(t *testing.T) {
	const segments = 60000
	s := s3test.Start(t)
	client := newClient(t, storeConfig(t, s, s.Endpoint, testPrefix), true)
	x := objectstore.NewIndex()
	for i := range segments {
		x.Segments = append(x.Segments, segment(fmt.Sprintf("binlog.%06d", i+1)))
	}
	data, err := x.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.WriteIndex(t.Context(), testCluster, x, ""); err != nil {
		t.Fatal(err)
	}
	size := int64(len(data))
	x, data = nil, nil

	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	runtime.GC() // and what sync.Pools kept from the write
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	stop := sampleHeap(time.Millisecond)
	got, _, err := client.ReadIndex(t.Context(), testCluster)
	high := stop()
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Segments) != segments {
		t.Fatalf("read %d segments, want %d", len(got.Segments), segments)
	}
	growth := int64(high.heapAlloc) - int64(base.HeapAlloc)
	t.Logf("index of %d segments, %.1f MiB: heap high-water %.1f MiB above the baseline (%.2f times the document)",
		segments, mib(size), mib(growth), float64(growth)/float64(size))
	if limit := 2 * size; growth > limit {
		t.Errorf("reading a %.1f MiB index grew the heap by %.1f MiB, more than %.1f MiB", mib(size), mib(growth), mib(limit))
	}
	runtime.KeepAlive(got)
}

package objectstore_test

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
)

// memoryTestSize is the archive streamed by TestUploadMemoryBounded; CNM_MEMTEST_MIB overrides
// it, and CNM_MEMTEST_PART_MIB the part size.
const memoryTestSize = 512 << 20

// TestUploadMemoryBounded streams a large archive of unknown length from a generator and samples
// the Go heap meanwhile: the high-water mark must stay within a few part sizes, whatever the
// archive size.
func TestUploadMemoryBounded(t *testing.T) {
	size := int64(memoryTestSize)
	if mib, err := strconv.Atoi(os.Getenv("CNM_MEMTEST_MIB")); err == nil && mib > 0 {
		size = int64(mib) << 20
	}
	s := s3test.Start(t)
	cfg := storeConfig(t, s, s.Endpoint, testPrefix)
	cfg.PartSize = objectstore.DefaultPartSize
	if mib, err := strconv.Atoi(os.Getenv("CNM_MEMTEST_PART_MIB")); err == nil && mib > 0 {
		cfg.PartSize = int64(mib) << 20
	}
	client := newClient(t, cfg, true)
	p := newProducer(30, size)

	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) // reset VmHWM, where permitted
	stop := sampleHeap(5 * time.Millisecond)
	begin := time.Now()
	md, err := client.UploadBackup(t.Context(), request(ref("memory", "id1"), p))
	elapsed := time.Since(begin)
	high := stop()
	if err != nil {
		t.Fatalf("upload: %v", err)
	}
	if md.Size != size {
		t.Fatalf("uploaded %d bytes, want %d", md.Size, size)
	}
	var end runtime.MemStats
	runtime.ReadMemStats(&end)
	growth := int64(high.heapAlloc) - int64(base.HeapAlloc)
	t.Logf("%d MiB in %s (%.0f MiB/s), part size %d MiB: heap high-water %.1f MiB above the %.1f MiB baseline "+
		"(heap in use %.1f MiB, from the OS %.1f MiB), %d GCs, %.0f MiB allocated in total; process peak RSS %s",
		size>>20, elapsed.Round(time.Millisecond), float64(size)/(1<<20)/elapsed.Seconds(), cfg.PartSize>>20,
		mib(growth), mib(int64(base.HeapAlloc)), mib(int64(high.heapInuse)), mib(int64(high.sys)),
		end.NumGC-base.NumGC, mib(int64(end.TotalAlloc-base.TotalAlloc)), peakRSS())
	// Two part buffers are live; allow GC headroom for the per-request garbage besides.
	if limit := 4*cfg.PartSize + 16<<20; growth > limit {
		t.Errorf("heap grew by %.1f MiB streaming %d MiB, more than %.1f MiB", mib(growth), size>>20, mib(limit))
	}
}

type heapHigh struct{ heapAlloc, heapInuse, sys uint64 }

// sampleHeap samples runtime.MemStats every interval until the returned stop is called, and
// returns the high-water marks.
func sampleHeap(interval time.Duration) func() heapHigh {
	high := &heapHigh{}
	done := make(chan struct{})
	var wg sync.WaitGroup
	sample := func() {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		high.heapAlloc = max(high.heapAlloc, m.HeapAlloc)
		high.heapInuse = max(high.heapInuse, m.HeapInuse)
		high.sys = max(high.sys, m.HeapSys)
	}
	wg.Go(func() {
		ticker := time.NewTicker(interval)
		defer ticker.Stop()
		for {
			select {
			case <-done:
				sample()
				return
			case <-ticker.C:
				sample()
			}
		}
	})
	return func() heapHigh {
		close(done)
		wg.Wait()
		return *high
	}
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

// peakRSS returns VmHWM from /proc/self/status, or "unknown".
func peakRSS() string {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

package main

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3proxy"
)

// targetSeconds is the wall time a pass over the default inventory must stay within.
const targetSeconds = 30

func credentialsOf(cfg objectstore.Config) *credentials.Credentials {
	return credentials.NewStaticV4(cfg.Credentials.AccessKeyID, cfg.Credentials.SecretAccessKey, "")
}

func printReport(f flags, res childResult, peak int64, counts map[s3proxy.Kind]int, a storeAfter, loadBefore, loadAfter string) {
	r := res.Report
	fmt.Printf("pass over %d backups and %d segments: %s (target %d s)\n", f.backups, f.segments,
		res.Elapsed.Round(time.Millisecond), targetSeconds)
	for _, p := range res.Phases {
		fmt.Printf("  %-26s %6d calls %10s\n", p.Name, p.Calls, p.Span.Round(time.Millisecond))
	}
	fmt.Printf("peak RSS of the pass process (ru_maxrss): %.1f MiB\n", float64(peak)/(1<<20))
	total := 0
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		fmt.Printf("  %-22s %7d\n", k, counts[k])
		total += counts[k]
	}
	fmt.Printf("  %-22s %7d\n", "total S3 requests", total)
	fmt.Printf("backups: %d expired (%d bytes), %d kept; segments: %d deleted (%d bytes), %d kept\n",
		len(r.Expired), r.ExpiredBytes, a.backups, r.Segments, r.SegmentBytes, a.indexEntries)
	fmt.Printf("checked: %d backup directories left (want %d), %d index entries and %d segment objects (want %d), newest backup whole\n",
		a.backups, a.wantBackups, a.indexEntries, a.segmentObjects, a.wantSegments)
	fmt.Printf("load average before the pass: %s; after: %s\n", loadBefore, loadAfter)
}

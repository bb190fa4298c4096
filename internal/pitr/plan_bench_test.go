package pitr

import (
	"fmt"
	"testing"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

// BenchmarkPlanReplay plans the replay of a year of an archive rotated every five minutes
// (about 100,000 segments, the size _index.json is bounded for) from its first base backup.
func BenchmarkPlanReplay(b *testing.B) {
	const n = 100_000
	index := objectstore.NewIndex()
	for i := range n {
		first, last := 10*i+1, 10*i+10
		prev := ""
		if i > 0 {
			prev = a(fmt.Sprintf("1-%d", first-1))
		}
		index.Segments = append(index.Segments, seg(fmt.Sprintf("s%06d", i), prev, a(fmt.Sprintf("%d-%d", first, last)),
			float64(5*i), float64(5*i+4)))
	}
	base := gtid.MustParse(a("1-10"))
	b.ResetTimer()
	for range b.N {
		p, err := PlanReplay(index, base, Target{Kind: Latest})
		if err != nil || len(p.Segments) != n-1 {
			b.Fatalf("%d segments, %v", len(p.Segments), err)
		}
	}
}

package retention

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// fuzzBytes hands out the fuzzer's bytes one at a time, then zeros.
type fuzzBytes []byte

func (f *fuzzBytes) next() byte {
	if len(*f) == 0 {
		return 0
	}
	c := (*f)[0]
	*f = (*f)[1:]
	return c
}

// unknownTime is the byte value that decodes to a zero (unknown) time.
const unknownTime = 0xff

// fuzzInventory decodes a policy and an inventory from data. Times fall within a few days of now,
// in whole hours, so that ties, window edges and horizon edges are common; sizes may be negative
// and keys repeat their first part so that key order matters.
func fuzzInventory(data []byte) (Inventory, Policy) {
	r := fuzzBytes(data)
	p := Policy{
		Window: time.Duration(int8(r.next())) * time.Hour,
		Count:  int(int8(r.next())) % 10,
		Size:   int64(int8(r.next())) * 50,
	}
	var inv Inventory
	for i := range int(r.next() % 24) {
		c, s, size, flags := r.next(), r.next(), r.next(), r.next()
		b := BaseBackup{Key: fmt.Sprintf("k%d-%02d", flags>>1%4, i), Size: int64(int8(size)) * 10, Protected: flags&1 == 1}
		if c != unknownTime {
			b.CompletedAt = at(-int(c % 64))
		}
		switch {
		case s == unknownTime:
		case b.CompletedAt.IsZero():
			b.StartedAt = at(-int(s % 64))
		default:
			b.StartedAt = b.CompletedAt.Add(-time.Duration(s%8) * time.Hour)
		}
		inv.Backups = append(inv.Backups, b)
	}
	for i := range int(r.next() % 16) {
		last, size := r.next(), r.next()
		s := Segment{Name: fmt.Sprintf("binlog.%06d", i), Size: int64(size)}
		if last != unknownTime {
			s.LastEventTime = at(-int(last % 80))
			s.FirstEventTime = s.LastEventTime.Add(-time.Hour)
		}
		inv.Segments = append(inv.Segments, s)
	}
	return inv, p
}

func FuzzDecide(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{24, 3, 10, 5, 1, 2, 20, 0, 10, 1, 20, 3, 30, 2, 30, 1, 5, 40, 4, 0, 3, 10, 1, 30, 2, 50, 3})
	f.Add([]byte{0, 0, 0, 4, 1, 1, 1, 1, 1, 1, 1, 1, 255, 255, 1, 1, 2, 2, 255, 3, 3, 255, 1})
	f.Add([]byte{0xf0, 0xfe, 0x90, 6, 255, 0, 100, 3, 0, 255, 20, 2, 5, 5, 5, 5, 63, 7, 127, 0, 1, 2, 3, 0, 4, 63, 9, 70, 8})
	f.Add([]byte{1, 1, 1, 3, 10, 0, 1, 1, 10, 0, 1, 3, 10, 0, 1, 5, 3, 9, 1, 11, 1, 255, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		inv, p := fuzzInventory(data)
		before := cloneInventory(inv)
		plan := Decide(inv, p, now)
		if !inventoriesEqual(before, inv) {
			t.Fatalf("Decide modified its inventory")
		}
		checkPlanInvariants(t, inv, p, now, plan)
	})
}

// newer is the spec's "newest first" order, written independently of the planner's comparator:
// CompletedAt, then StartedAt, then Key, all descending.
func newer(a, b BaseBackup) bool {
	if !a.CompletedAt.Equal(b.CompletedAt) {
		return a.CompletedAt.After(b.CompletedAt)
	}
	if !a.StartedAt.Equal(b.StartedAt) {
		return a.StartedAt.After(b.StartedAt)
	}
	return a.Key > b.Key
}

// checkPlanInvariants checks plan against the rules for any inventory whose backup keys are
// unique (fuzzInventory's are).
func checkPlanInvariants(t *testing.T, inv Inventory, p Policy, now time.Time, plan Plan) {
	t.Helper()
	all := checkPartitionAndOrder(t, inv, plan)
	if p.IsZero() {
		if len(plan.Expire) != 0 || len(plan.DeleteSegments) != 0 || !plan.Horizon.IsZero() {
			t.Fatalf("zero policy: Expire %d, DeleteSegments %d, Horizon %v; want nothing deleted and a zero horizon",
				len(plan.Expire), len(plan.DeleteSegments), plan.Horizon)
		}
	} else {
		checkExpiry(t, all, p, now, plan)
		checkHorizon(t, plan)
	}
	checkSegments(t, inv, plan)
	var expiredBytes int64
	for _, e := range plan.Expire {
		expiredBytes += e.Size
	}
	if plan.ExpiredBytes != expiredBytes {
		t.Errorf("ExpiredBytes = %d, want %d", plan.ExpiredBytes, expiredBytes)
	}
}

// checkPartitionAndOrder checks that Keep and Expire partition the inventory's backups and are each
// newest first; it returns the inventory's backups newest first.
func checkPartitionAndOrder(t *testing.T, inv Inventory, plan Plan) []BaseBackup {
	t.Helper()
	seen := map[BaseBackup]int{}
	for _, b := range inv.Backups {
		seen[b]++
	}
	var expired []BaseBackup
	for _, e := range plan.Expire {
		expired = append(expired, e.BaseBackup)
	}
	for _, b := range slices.Concat(plan.Keep, expired) {
		seen[b]--
	}
	for b, n := range seen {
		if n != 0 {
			t.Fatalf("backup %q appears %d more times in the inventory than in Keep and Expire", b.Key, n)
		}
	}
	for name, list := range map[string][]BaseBackup{"Keep": plan.Keep, "Expire": expired} {
		for i := 1; i < len(list); i++ {
			if newer(list[i], list[i-1]) {
				t.Fatalf("%s is not newest first: %q before %q", name, list[i-1].Key, list[i].Key)
			}
		}
	}
	all := slices.Clone(inv.Backups)
	slices.SortFunc(all, func(a, b BaseBackup) int {
		if newer(a, b) {
			return -1
		}
		if newer(b, a) {
			return 1
		}
		return 0
	})
	return all
}

// checkExpiry checks each backup's fate against its position in newest-first order: the newest
// and protected backups are kept; any other backup is expired exactly when some policy expires it,
// with exactly those policies listed.
func checkExpiry(t *testing.T, all []BaseBackup, p Policy, now time.Time, plan Plan) {
	t.Helper()
	got := map[string][]Reason{}
	for _, e := range plan.Expire {
		if len(e.Reasons) == 0 {
			t.Fatalf("backup %q is expired without a reason", e.Key)
		}
		got[e.Key] = e.Reasons
	}
	var total int64
	for i, b := range all {
		var want []Reason
		if p.Window > 0 && b.CompletedAt.Before(now.Add(-p.Window)) {
			want = append(want, ReasonWindow)
		}
		if p.Count > 0 && i+1 > p.Count {
			want = append(want, ReasonCount)
		}
		total += max(b.Size, 0)
		if p.Size > 0 && total > p.Size {
			want = append(want, ReasonSize)
		}
		if i == 0 || b.Protected {
			want = nil
		}
		if !slices.Equal(got[b.Key], want) {
			t.Fatalf("backup %q (position %d, protected %v): reasons %v, want %v",
				b.Key, i, b.Protected, got[b.Key], want)
		}
	}
}

func checkHorizon(t *testing.T, plan Plan) {
	t.Helper()
	var want time.Time
	for i, b := range plan.Keep {
		if b.StartedAt.IsZero() {
			want = time.Time{}
			break
		}
		if i == 0 || b.StartedAt.Before(want) {
			want = b.StartedAt
		}
	}
	if !plan.Horizon.Equal(want) {
		t.Fatalf("Horizon = %v, want %v", plan.Horizon, want)
	}
}

// checkSegments checks that exactly the segments with a known last event before a non-zero
// Horizon are deleted, in inventory order, and their bytes summed.
func checkSegments(t *testing.T, inv Inventory, plan Plan) {
	t.Helper()
	var want []Segment
	var bytes int64
	for _, s := range inv.Segments {
		if !plan.Horizon.IsZero() && !s.LastEventTime.IsZero() && s.LastEventTime.Before(plan.Horizon) {
			want = append(want, s)
			bytes += s.Size
		}
	}
	if !slices.Equal(plan.DeleteSegments, want) {
		t.Fatalf("DeleteSegments = %v, want %v (horizon %v)", plan.DeleteSegments, want, plan.Horizon)
	}
	if plan.SegmentBytes != bytes {
		t.Errorf("SegmentBytes = %d, want %d", plan.SegmentBytes, bytes)
	}
}

// BenchmarkDecide plans a pass over 10,000 hourly backups and 100,000 six-minute segments, with
// all three policies expiring part of them.
func BenchmarkDecide(b *testing.B) {
	var inv Inventory
	for i := range 10_000 {
		// Shuffled by a fixed stride so the sort has work to do.
		h := (i * 7919) % 10_000
		inv.Backups = append(inv.Backups, BaseBackup{
			Key:       fmt.Sprintf("backup-%05d", h),
			StartedAt: at(-h - 1), CompletedAt: at(-h), Size: 1 << 30,
			Protected: h == 1999,
		})
	}
	for i := range 100_000 {
		last := now.Add(-time.Duration(100_000-i) * 6 * time.Minute)
		inv.Segments = append(inv.Segments, Segment{
			Name: fmt.Sprintf("binlog.%06d", i), FirstEventTime: last.Add(-6 * time.Minute), LastEventTime: last, Size: 64 << 20,
		})
	}
	p := Policy{Window: 300 * 24 * time.Hour, Count: 5000, Size: 4 << 40}
	b.ReportAllocs()
	var plan Plan
	for b.Loop() {
		plan = Decide(inv, p, now)
	}
	b.ReportMetric(float64(len(plan.Expire)), "expired")
	b.ReportMetric(float64(len(plan.DeleteSegments)), "segments")
}

package chaos

import (
	"math"
	"slices"
	"sort"
	"time"
)

// Span is a time range.
type Span struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
}

// WritableSpans turns observations into, per instance, the spans in which it was seen writable:
// from the first to the last sample of each run of consecutive writable samples (a run ends at a
// read-only sample or a miss). A lone writable sample is a span of zero length.
func WritableSpans(obs []Observation) map[string][]Span {
	by := map[string][]Observation{}
	for _, o := range obs {
		by[o.Instance] = append(by[o.Instance], o)
	}
	out := map[string][]Span{}
	for inst, os := range by {
		slices.SortFunc(os, func(a, b Observation) int { return a.At.Compare(b.At) })
		var cur *Span
		for _, o := range os {
			switch {
			case o.Writable() && cur == nil:
				cur = &Span{From: o.At, To: o.At}
			case o.Writable():
				cur.To = o.At
			case cur != nil:
				out[inst] = append(out[inst], *cur)
				cur = nil
			}
		}
		if cur != nil {
			out[inst] = append(out[inst], *cur)
		}
	}
	return out
}

// DoubleWritable is a time in which two or more instances were seen writable.
type DoubleWritable struct {
	Span
	Instances []string `json:"instances"`
}

// DoubleWritables returns every span in which the writable spans of two or more instances
// overlap (touching counts: both seen writable at the same instant).
func DoubleWritables(obs []Observation) []DoubleWritable {
	spans := WritableSpans(obs)
	insts := make([]string, 0, len(spans))
	for i := range spans {
		insts = append(insts, i)
	}
	sort.Strings(insts)
	var out []DoubleWritable
	for i, a := range insts {
		for _, b := range insts[i+1:] {
			for _, sa := range spans[a] {
				for _, sb := range spans[b] {
					from, to := later(sa.From, sb.From), earlier(sa.To, sb.To)
					if !from.After(to) {
						out = append(out, DoubleWritable{Span{from, to}, []string{a, b}})
					}
				}
			}
		}
	}
	slices.SortFunc(out, func(x, y DoubleWritable) int { return x.From.Compare(y.From) })
	return out
}

// HandoverGaps returns, for each time the writable instance changed, the gap between the last
// sample of the one before and the first sample of the next: how close the two came to being
// writable together (negative gaps are DoubleWritables).
func HandoverGaps(obs []Observation) []time.Duration {
	type edge struct {
		inst string
		s    Span
	}
	var all []edge
	for inst, ss := range WritableSpans(obs) {
		for _, s := range ss {
			all = append(all, edge{inst, s})
		}
	}
	slices.SortFunc(all, func(a, b edge) int { return a.s.From.Compare(b.s.From) })
	var out []time.Duration
	for i := 1; i < len(all); i++ {
		if all[i].inst != all[i-1].inst {
			out = append(out, all[i].s.From.Sub(all[i-1].s.To))
		}
	}
	return out
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// WriteTimes measures, around a fault at t, the acknowledged writes (in commit order).
type WriteTimes struct {
	// RTO: from the fault to the first acknowledged write after the outage, the longest gap
	// between two acknowledged writes in the fault's window (a deleted Pod's primary, say, keeps
	// acknowledging until its shutdown handler stops it; the outage comes after).
	RTO *time.Duration `json:"rto,omitempty"`
	// Gap: the outage, the longest time without an acknowledged write around the fault (from the
	// last write before the fault, or a later one, to the next).
	Gap *time.Duration `json:"gap,omitempty"`
	// Handover: from the last write the old server acknowledged to the first one another server
	// acknowledged after the fault (a switchover's write unavailability); nil when the same
	// server answered again.
	Handover *time.Duration `json:"handover,omitempty"`
	// NewServer answered the first write after the outage.
	NewServer string `json:"newServer,omitempty"`
	// LateOld counts writes the old server acknowledged after another server's first
	// acknowledged write after the fault: two servers took writes in turn.
	LateOld int `json:"lateOld"`
}

// MeasureWrites computes WriteTimes for a fault at t; acks are in the order they were
// acknowledged (the writer is sequential). until bounds the fault's window (the next fault).
func MeasureWrites(acks []Ack, t, until time.Time) WriteTimes {
	var w WriteTimes
	prev, first := -1, -1
	for i := range acks {
		if !acks[i].At.After(t) {
			prev = i
			continue
		}
		if acks[i].At.Before(until) && first < 0 {
			first = i
		}
		break
	}
	if first < 0 {
		return w
	}
	// The outage: the longest gap ending at an acknowledged write in (t, until).
	end, gap := first, time.Duration(-1)
	for i := first; i < len(acks) && acks[i].At.Before(until); i++ {
		from := t
		if i > 0 {
			from = acks[i-1].At
		}
		if d := acks[i].At.Sub(from); d > gap {
			end, gap = i, d
		}
	}
	rto := acks[end].At.Sub(t)
	w.RTO, w.NewServer = &rto, acks[end].Server
	if prev >= 0 || end > first {
		w.Gap = &gap
	}
	if prev < 0 {
		return w
	}
	old := acks[prev].Server
	var newFirst *Ack
	for i := first; i < len(acks) && acks[i].At.Before(until); i++ {
		a := &acks[i]
		switch {
		case newFirst == nil && a.Server != old:
			newFirst = a
		case newFirst != nil && a.Server == old:
			w.LateOld++
		}
	}
	if newFirst != nil {
		var lastOld time.Time
		for i := range acks {
			if acks[i].Server == old && acks[i].At.Before(newFirst.At) {
				lastOld = acks[i].At
			}
		}
		h := newFirst.At.Sub(lastOld)
		w.Handover = &h
	}
	return w
}

// ReadAvailability is what -ro served between two times.
type ReadAvailability struct {
	Reads int `json:"reads"`
	OK    int `json:"ok"`
	// LongestGap is the longest time between two successful reads (or a window edge and one).
	LongestGap time.Duration `json:"longestGap"`
}

// Fraction of reads that succeeded (1 without reads).
func (r ReadAvailability) Fraction() float64 {
	if r.Reads == 0 {
		return 1
	}
	return float64(r.OK) / float64(r.Reads)
}

// MeasureReads summarises the reads in [from, to].
func MeasureReads(reads []Read, from, to time.Time) ReadAvailability {
	var r ReadAvailability
	last := from
	for _, rd := range reads {
		if rd.At.Before(from) || rd.At.After(to) {
			continue
		}
		r.Reads++
		if rd.OK {
			r.OK++
			r.LongestGap = max(r.LongestGap, rd.At.Sub(last))
			last = rd.At
		}
	}
	r.LongestGap = max(r.LongestGap, to.Sub(last))
	return r
}

// Missing returns the acknowledged ids absent from present, in order.
func Missing(acks []Ack, present map[int64]bool) []int64 {
	var out []int64
	for _, a := range acks {
		if !present[a.ID] {
			out = append(out, a.ID)
		}
	}
	return out
}

// Quantiles are nearest-rank percentiles of a sample.
type Quantiles struct {
	N   int           `json:"n"`
	P50 time.Duration `json:"p50"`
	P99 time.Duration `json:"p99"`
	Max time.Duration `json:"max"`
}

// Quantile computes p50, p99 and max (nearest rank); zero for an empty sample.
func Quantile(ds []time.Duration) Quantiles {
	if len(ds) == 0 {
		return Quantiles{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := func(p float64) time.Duration {
		i := int(math.Ceil(p*float64(len(s)))) - 1
		return s[max(0, min(i, len(s)-1))]
	}
	return Quantiles{N: len(s), P50: rank(0.50), P99: rank(0.99), Max: s[len(s)-1]}
}

// SlowAttemptsBetween returns the slow attempts that overlap [from, to]: started by to and
// ended at from or later (one in flight when a fault hits is often the slowest).
func SlowAttemptsBetween(slow []SlowAttempt, from, to time.Time) []SlowAttempt {
	var out []SlowAttempt
	for _, a := range slow {
		if !a.Start.Add(a.Duration).Before(from) && !a.Start.After(to) {
			out = append(out, a)
		}
	}
	return out
}

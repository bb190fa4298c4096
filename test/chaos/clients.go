package chaos

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"
)

// ClientKinds are the application clients written through -rw beside the checker's own writer:
// one dials for every insert, one keeps a pooled session (see WriterKind).
var ClientKinds = []WriterKind{ConnectionPerInsert, PooledSession}

// ClientInterval is the time between two inserts of a client writer.
const ClientInterval = 50 * time.Millisecond

// PinnedBudget is how long, after the new primary acknowledged its first write, the old primary
// may still refuse a pooled client's writes: kube-proxy's update of the -rw routing. Longer, the
// pool counts as pinned to the old primary (it kept a session there, or was sent there again).
const PinnedBudget = 3 * time.Second

// ClientResult is what one client writer saw around a fault.
type ClientResult struct {
	Kind WriterKind `json:"kind"`
	// Writes are the client's own write times (its handover is its write gap).
	Writes WriteTimes `json:"writes"`
	// RefusedByOld counts the attempts the old primary refused after the fault; PinnedFor is how
	// long after the new primary's first acknowledged write the last of them came (0: none
	// after it).
	RefusedByOld int           `json:"refusedByOld"`
	PinnedFor    time.Duration `json:"pinnedFor"`
}

// newClients returns the client writers of ClientKinds through addr, each with ids of its own.
func newClients(e *Env, a Account, addr string, firstID int64) []*Writer {
	out := make([]*Writer, len(ClientKinds))
	for i, k := range ClientKinds {
		out[i] = &Writer{Env: e, Account: a, Addr: addr, Kind: k, Interval: ClientInterval, Timeout: 5 * time.Second,
			FirstID: firstID + int64(i+1)*1_000_000_000}
	}
	return out
}

// measureClients measures each client around fault f, whose recovery was measured at ready;
// newFirst is the new primary's first acknowledged write after the fault (any writer).
func measureClients(clients []*Writer, f Fault, newPrimary string, newFirst, ready time.Time) []ClientResult {
	out := make([]ClientResult, 0, len(clients))
	for _, c := range clients {
		ws := c.Stats()
		r := ClientResult{Kind: c.Kind, Writes: MeasureWrites(ws.Acks, f.At, ready.Add(time.Hour))}
		for _, x := range ws.Refused {
			if x.Host != f.Primary || x.At.Before(f.At) || x.At.After(ready) {
				continue
			}
			r.RefusedByOld++
			if newPrimary != f.Primary && !newFirst.IsZero() && x.At.After(newFirst) {
				r.PinnedFor = max(r.PinnedFor, x.At.Sub(newFirst))
			}
		}
		out = append(out, r)
	}
	return out
}

// firstAckBy is the first write host acknowledged after t in acks (zero if none).
func firstAckBy(acks []Ack, host string, t time.Time) time.Time {
	var first time.Time
	for _, a := range acks {
		if a.Host == host && a.At.After(t) && (first.IsZero() || a.At.Before(first)) {
			first = a.At
		}
	}
	return first
}

// clientProblems: a client pinned to the old primary, or one the old primary acknowledged after
// the new one's first write.
func (f FaultResult) clientProblems() []string {
	var out []string
	for _, c := range f.Clients {
		if c.PinnedFor > PinnedBudget {
			out = append(out, fmt.Sprintf("the %s client's writes were refused by the old primary %s until %s after %s's first write (budget %s): pinned",
				c.Kind, f.Primary, c.PinnedFor.Round(time.Millisecond), f.NewPrimary, PinnedBudget))
		}
		if c.Writes.LateOld > 0 {
			out = append(out, fmt.Sprintf("the old primary acknowledged %d writes of the %s client after the new one's first", c.Writes.LateOld, c.Kind))
		}
	}
	return out
}

// clientLine is the clients' part of a fault's Line.
func (f FaultResult) clientLine() string {
	s := ""
	for _, c := range f.Clients {
		s += fmt.Sprintf(", %s client handover %s (refused by the old primary %d times", c.Kind, dur(c.Writes.Handover), c.RefusedByOld)
		if c.PinnedFor > 0 {
			s += ", the last " + c.PinnedFor.Round(time.Millisecond).String() + " after the new primary's first write"
		}
		s += ")"
	}
	return s
}

// ClientSummary aggregates one client kind over the faults of one kind: its handovers (write
// gaps) and the longest time it was pinned to an old primary.
type ClientSummary struct {
	Kind      WriterKind    `json:"kind"`
	Handover  Quantiles     `json:"handover"`
	PinnedMax time.Duration `json:"pinnedMax"`
}

// summarizeClients aggregates, by client kind (in ClientKinds order), the faults of kind k.
func summarizeClients(faults []FaultResult, k Kind) []ClientSummary {
	var out []ClientSummary
	for _, kind := range ClientKinds {
		s := ClientSummary{Kind: kind}
		var hand []time.Duration
		seen := false
		for _, f := range faults {
			if f.Kind != k {
				continue
			}
			for _, c := range f.Clients {
				if c.Kind != kind {
					continue
				}
				seen = true
				if c.Writes.Handover != nil {
					hand = append(hand, *c.Writes.Handover)
				}
				s.PinnedMax = max(s.PinnedMax, c.PinnedFor)
			}
		}
		if seen {
			s.Handover = Quantile(hand)
			out = append(out, s)
		}
	}
	return out
}

// mergeStats joins what the verification and the totals use of several writers' records: their
// acknowledged writes in time order, the unknown outcomes, the failures. Each writer's ids are
// its own; the slow attempts and refusals stay each writer's.
func mergeStats(all ...WriterStats) WriterStats {
	var m WriterStats
	for _, ws := range all {
		m.Acks = append(m.Acks, ws.Acks...)
		m.Unknown = append(m.Unknown, ws.Unknown...)
		m.Failed += ws.Failed
	}
	slices.SortStableFunc(m.Acks, func(a, b Ack) int { return a.At.Compare(b.At) })
	return m
}

// printClients writes the clients' table: per fault kind and client kind, the write gap from
// the old primary's last acknowledged write to the new one's first, and the longest pinning.
func (r *Report) printClients(out io.Writer) {
	fmt.Fprintln(out, "\nclients through -rw (handover: the client's last write on the old primary -> its first on the new; pinned: refused by the old primary after the new one's first write):")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "fault\tclient\tn\thandover p50\tp99\tmax\tpinned max")
	for _, s := range r.Summary {
		for _, c := range s.Clients {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\n", s.Kind, c.Kind, c.Handover.N, qd(c.Handover, c.Handover.P50),
				qd(c.Handover, c.Handover.P99), qd(c.Handover, c.Handover.Max), r3(c.PinnedMax))
		}
	}
	tw.Flush()
}

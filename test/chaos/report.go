package chaos

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
)

// FaultResult is one fault and what followed it.
type FaultResult struct {
	Fault
	// Durability is the Cluster's dataDurability when the fault was injected.
	Durability string     `json:"durability,omitempty"`
	ReadyAt    time.Time  `json:"readyAt"`
	NewPrimary string     `json:"newPrimary,omitempty"`
	Writes     WriteTimes `json:"writes"`
	// Clients are the application clients' measures (ClientKinds).
	Clients []ClientResult   `json:"clients,omitempty"`
	Reads   ReadAvailability `json:"reads"`
	Checks  []InstanceCheck  `json:"checks,omitempty"`
	// SlowAttempts are the writer's attempts that took SlowAttemptAfter or longer and overlap
	// the time from the fault to the recovery's measurement (one still running then is not
	// recorded yet): where a long write unavailability went.
	SlowAttempts []SlowAttempt `json:"slowAttempts,omitempty"`
	// Events of the Cluster from the fault until the verification; Conditions other than Ready
	// that were True when it was Ready again (Degraded=FailoverBlocked, say).
	Events     []string `json:"events,omitempty"`
	Conditions []string `json:"conditions,omitempty"`
	// Diverged are the instances listed as diverged after the fault, inspected and recovered.
	Diverged []Divergence `json:"diverged,omitempty"`
	Error    string       `json:"error,omitempty"`
}

// Lost counts acknowledged ids missing on the primary after the fault.
func (f FaultResult) Lost() int {
	for _, c := range f.Checks {
		if c.Role == "primary" {
			return len(c.Missing)
		}
	}
	return 0
}

// LossAccepted: the fault is a crash past a recorded semi-sync fallback under preferred, and a
// replica was promoted: the commits the old primary acknowledged alone after the record are lost
// by contract, and counted (ExpectedLoss), not reported as a problem, as long as each of them is
// on the diverged old primary after the recorded GTID set.
func (f FaultResult) LossAccepted() bool {
	return f.Kind == ReplicaPartitionThenCrash && f.Durability == "preferred" && f.PromotedPast != ""
}

// ExpectedLoss counts, for a fault whose loss is accepted, the acknowledged writes found on the
// diverged old primary alone. The run leaves them out of every later verification.
func (f FaultResult) ExpectedLoss() int {
	if !f.LossAccepted() {
		return 0
	}
	n := 0
	for _, d := range f.Diverged {
		n += len(d.Acknowledged)
	}
	return n
}

// contractProblems checks a crash past a recorded fallback against the durability contract.
func (f FaultResult) contractProblems() []string {
	if f.Kind == ReplicaPartition && f.NewPrimary != "" && f.NewPrimary != f.Primary {
		return []string{fmt.Sprintf("a replica partition failed %s over to %s: the primary stayed reachable to the operator and its clients", f.Primary, f.NewPrimary)}
	}
	if f.Kind != ReplicaPartitionThenCrash {
		return nil
	}
	var out []string
	switch {
	case f.FallbackGTIDs == "":
		out = append(out, "no semi-sync fallback was recorded in the primary Lease during the partition")
	case f.Durability == "required" && f.PromotedPast != "":
		out = append(out, fmt.Sprintf("%s was promoted past %s's recorded fallback under required", f.PromotedPast, f.Primary))
	case f.Durability == "required" && !f.FailoverBlocked:
		out = append(out, "the failover was never reported blocked (AcknowledgedWritesOnPrimaryOnly)")
	case f.LossAccepted():
		recorded, err := gtid.Parse(f.FallbackGTIDs)
		if err != nil {
			return append(out, "the fallback record's GTID set does not parse: "+err.Error())
		}
		for _, d := range f.Diverged {
			errant, err := gtid.Parse(d.Errant)
			if err != nil {
				out = append(out, fmt.Sprintf("%s's errant set does not parse: %v", d.Instance, err))
			} else if in := errant.Intersect(recorded); !in.IsEmpty() {
				out = append(out, fmt.Sprintf("%s lost %s, which was before its recorded fallback (%s)", d.Instance, in, f.FallbackGTIDs))
			}
		}
	}
	return out
}

// Blocked returns the Events and conditions that say a failover or switchover was blocked.
func (f FaultResult) Blocked() []string {
	var out []string
	for _, ev := range append(append([]string(nil), f.Events...), f.Conditions...) {
		if strings.Contains(ev, "Blocked") || strings.Contains(ev, "SeveralWritable") {
			out = append(out, ev)
		}
	}
	return out
}

// Problems lists what went wrong in this fault's checks.
func (f FaultResult) Problems() []string {
	var out []string
	if f.Error != "" {
		out = append(out, f.Error)
	}
	out = append(out, f.contractProblems()...)
	for _, c := range f.Checks {
		if len(c.Missing) > 0 {
			out = append(out, fmt.Sprintf("%s (%s) lacks %d acknowledged writes, first %d", c.Instance, c.Role, len(c.Missing), c.Missing[0]))
		}
		if c.Errant != "" {
			out = append(out, fmt.Sprintf("%s has transactions the primary lacks: %s", c.Instance, c.Errant))
		}
		if c.Error != "" {
			out = append(out, fmt.Sprintf("%s: %s", c.Instance, c.Error))
		}
		if c.Role == "replica" && !c.CaughtUp && c.Error == "" {
			out = append(out, c.Instance+" did not catch up with the primary")
		}
	}
	for _, d := range f.Diverged {
		if len(d.Acknowledged) > 0 && !f.LossAccepted() {
			out = append(out, fmt.Sprintf("%s diverged holding %d acknowledged writes the primary lacks, first %d", d.Instance, len(d.Acknowledged), d.Acknowledged[0]))
		}
		if len(d.Unexplained) > 0 {
			out = append(out, fmt.Sprintf("%s diverged holding %d rows the writer never saw committed, first %d", d.Instance, len(d.Unexplained), d.Unexplained[0]))
		}
		if d.Error != "" {
			out = append(out, fmt.Sprintf("diverged %s: %s", d.Instance, d.Error))
		}
	}
	if f.Writes.LateOld > 0 {
		out = append(out, fmt.Sprintf("the old primary acknowledged %d writes after the new one's first", f.Writes.LateOld))
	}
	return append(out, f.clientProblems()...)
}

// Line is a one-line summary.
func (f FaultResult) Line() string {
	s := fmt.Sprintf("%-14s on %s -> %s: rto %s, gap %s, ready after %s, -ro %.0f%% (gap %s), lost %d",
		f.Kind, f.Primary, f.NewPrimary, dur(f.Writes.RTO), dur(f.Writes.Gap),
		sinceOrDash(f.At, f.ReadyAt), 100*f.Reads.Fraction(), f.Reads.LongestGap.Round(time.Millisecond), f.Lost())
	if f.LossAccepted() {
		s += fmt.Sprintf(", lost by the preferred contract %d (acknowledged by %s alone after its recorded fallback at %s)", f.ExpectedLoss(), f.Primary, f.FallbackGTIDs)
	}
	if f.Kind == ReplicaPartitionThenCrash && !f.LossAccepted() {
		s += fmt.Sprintf(", failover blocked %v", f.FailoverBlocked)
	}
	if f.Writes.Handover != nil {
		s += ", handover " + dur(f.Writes.Handover)
	}
	s += f.clientLine()
	for _, a := range f.SlowAttempts {
		s += ", slow attempt " + a.String()
	}
	for _, d := range f.Diverged {
		s += fmt.Sprintf(", %s DIVERGED (errant %s, %d rows of unknown outcome the primary lacks; recovered)", d.Instance, d.Errant, len(d.ExtraRows))
	}
	if p := f.Problems(); len(p) > 0 {
		s += "; PROBLEMS: " + strings.Join(p, "; ")
	}
	return s
}

func dur(d *time.Duration) string {
	if d == nil {
		return "-"
	}
	return d.Round(time.Millisecond).String()
}

func sinceOrDash(from, to time.Time) string {
	if to.IsZero() || from.IsZero() {
		return "-"
	}
	return to.Sub(from).Round(time.Millisecond).String()
}

// KindSummary aggregates the faults of one kind.
type KindSummary struct {
	Kind Kind `json:"kind"`
	// RTO: fault -> first acknowledged write; Handover: last write on the old primary -> first
	// on the new (faults that moved the primary); Ready: fault -> Cluster Ready.
	RTO, Handover, Ready Quantiles
	// ROMin is the lowest -ro availability of a fault of this kind; ROLongestGap the longest time
	// without a successful -ro read.
	ROMin        float64       `json:"roMin"`
	ROLongestGap time.Duration `json:"roLongestGap"`
	Lost         int           `json:"lost"`
	// Clients: the application clients' handovers and pinning.
	Clients []ClientSummary `json:"clients,omitempty"`
}

// Report is the outcome of a run.
type Report struct {
	Started, Ended  time.Time
	Machine         string
	Durability      string
	SemiSync        bool
	SemiSyncTimeout time.Duration
	SemiSyncStatus  string
	Account         string
	Kinds           []Kind
	Acked           int
	Unknown         int
	Failed          int
	// Lost: acknowledged ids missing on the final primary at the last verification.
	Lost           int
	DoubleWritable []DoubleWritable
	// HandoverGaps: for each change of the writable instance seen by the poller, the time between
	// the old one's last writable sample and the new one's first.
	HandoverGaps []time.Duration
	Faults       []FaultResult
	Summary      []KindSummary
	// Servers maps each server_uuid that acknowledged a write to its hostname (its Pod's name).
	Servers map[string]string
}

// finish measures the run: ws is the checker's writer, all every writer's records merged.
func (r *Report) finish(ws, all WriterStats, obs []Observation, reads []Read) {
	r.Ended = time.Now()
	host, _ := os.Hostname()
	r.Machine = fmt.Sprintf("%s, %d CPUs, %s/%s", host, runtime.NumCPU(), runtime.GOOS, runtime.GOARCH)
	r.Acked, r.Unknown, r.Failed = len(all.Acks), len(all.Unknown), all.Failed
	r.Servers = map[string]string{}
	for _, a := range all.Acks {
		r.Servers[a.Server] = a.Host
	}
	r.DoubleWritable = DoubleWritables(obs)
	r.HandoverGaps = HandoverGaps(obs)
	for i := range r.Faults {
		f := &r.Faults[i]
		until := r.Ended
		if i+1 < len(r.Faults) {
			until = r.Faults[i+1].At
		}
		f.Writes = MeasureWrites(ws.Acks, f.At, until)
		end := f.ReadyAt
		if end.IsZero() {
			end = until
		}
		f.Reads = MeasureReads(reads, f.At, end)
	}
	if n := len(r.Faults); n > 0 {
		r.Lost = r.Faults[n-1].Lost()
	}
	summarized := map[Kind]bool{}
	for _, k := range r.Kinds {
		if summarized[k] { // a kind listed twice in -kinds (to weigh it) is summarized once
			continue
		}
		summarized[k] = true
		s := KindSummary{Kind: k, ROMin: 1}
		var rto, hand, ready []time.Duration
		seen := false
		for _, f := range r.Faults {
			if f.Kind != k {
				continue
			}
			seen = true
			if f.Writes.RTO != nil {
				rto = append(rto, *f.Writes.RTO)
			}
			if f.Writes.Handover != nil {
				hand = append(hand, *f.Writes.Handover)
			}
			if !f.ReadyAt.IsZero() {
				ready = append(ready, f.ReadyAt.Sub(f.At))
			}
			s.ROMin = min(s.ROMin, f.Reads.Fraction())
			s.ROLongestGap = max(s.ROLongestGap, f.Reads.LongestGap)
			s.Lost += f.Lost()
		}
		if seen {
			s.RTO, s.Handover, s.Ready = Quantile(rto), Quantile(hand), Quantile(ready)
			s.Clients = summarizeClients(r.Faults, k)
			r.Summary = append(r.Summary, s)
		}
	}
}

// ExpectedLoss sums the faults' ExpectedLoss.
func (r *Report) ExpectedLoss() int {
	n := 0
	for _, f := range r.Faults {
		n += f.ExpectedLoss()
	}
	return n
}

// OK says whether the run kept both promises: no acknowledged write lost, never two writable
// instances, and every check of every fault passed.
func (r *Report) OK() bool {
	if r.Lost > 0 || len(r.DoubleWritable) > 0 {
		return false
	}
	for _, f := range r.Faults {
		if len(f.Problems()) > 0 || f.Lost() > 0 {
			return false
		}
	}
	return true
}

// Print writes the report for people.
func (r *Report) Print(out io.Writer) {
	fmt.Fprintf(out, "run %s -> %s (%s) on %s\n", r.Started.UTC().Format(time.RFC3339), r.Ended.UTC().Format(time.RFC3339),
		r.Ended.Sub(r.Started).Round(time.Second), r.Machine)
	fmt.Fprintf(out, "semi-sync %v, dataDurability %q, timeout %s; %s\n", r.SemiSync, r.Durability, r.SemiSyncTimeout, r.SemiSyncStatus)
	fmt.Fprintf(out, "account: %s\n", r.Account)
	uuids := make([]string, 0, len(r.Servers))
	for uuid := range r.Servers {
		uuids = append(uuids, uuid)
	}
	sort.Strings(uuids)
	for _, uuid := range uuids {
		fmt.Fprintf(out, "server %s is %s\n", uuid, r.Servers[uuid])
	}
	fmt.Fprintf(out, "faults %d; acknowledged writes %d; unknown outcome %d; failed attempts %d\n",
		len(r.Faults), r.Acked, r.Unknown, r.Failed)
	lost := 0
	for _, f := range r.Faults {
		lost += f.Lost()
	}
	fmt.Fprintf(out, "LOST acknowledged writes: %d (final primary), %d (summed over the faults' checks)\n", r.Lost, lost)
	if accepted := r.ExpectedLoss(); accepted > 0 {
		fmt.Fprintf(out, "lost by the preferred contract (promoted past a recorded fallback, each after the recorded GTID set, left out of the checks above): %d\n", accepted)
	}
	fmt.Fprintf(out, "moments with two writable instances: %d\n", len(r.DoubleWritable))
	for _, d := range r.DoubleWritable {
		fmt.Fprintf(out, "  %s .. %s: %v\n", d.From.UTC().Format("15:04:05.000"), d.To.UTC().Format("15:04:05.000"), d.Instances)
	}
	if q := Quantile(r.HandoverGaps); q.N > 0 {
		fmt.Fprintf(out, "writable-instance changes seen by the poller: %d, gap between the old one's last and the new one's first writable sample: min %s\n",
			q.N, minDur(r.HandoverGaps).Round(time.Millisecond))
	}
	nd := 0
	for _, f := range r.Faults {
		nd += len(f.Diverged)
	}
	fmt.Fprintf(out, "instances left diverged by a fault (recovered by the checker: PVC and Pod deleted): %d\n", nd)
	for _, f := range r.Faults {
		if b := f.Blocked(); len(b) > 0 {
			fmt.Fprintf(out, "blocked at fault %s on %s: %s\n", f.Kind, f.Primary, strings.Join(b, "; "))
		}
	}
	fmt.Fprintln(out, "\nper fault:")
	for i, f := range r.Faults {
		fmt.Fprintf(out, "%3d %s %s\n", i+1, f.At.UTC().Format("15:04:05"), f.Line())
	}
	fmt.Fprintln(out, "\nper fault type (RTO: fault -> first acknowledged write through -rw):")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "fault\tn\tRTO p50\tp99\tmax\thandover p50\tp99\tmax\tready p50\tmax\t-ro min\t-ro longest gap\tlost")
	for _, s := range r.Summary {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.0f%%\t%s\t%d\n", s.Kind, s.RTO.N,
			r3(s.RTO.P50), r3(s.RTO.P99), r3(s.RTO.Max), qd(s.Handover, s.Handover.P50), qd(s.Handover, s.Handover.P99),
			qd(s.Handover, s.Handover.Max), r3(s.Ready.P50), r3(s.Ready.Max), 100*s.ROMin, r3(s.ROLongestGap), s.Lost)
	}
	tw.Flush()
	r.printClients(out)
	if r.OK() {
		fmt.Fprintln(out, "\nRESULT: OK (0 lost acknowledged writes, 0 moments with two writable instances, every check passed)")
	} else {
		fmt.Fprintln(out, "\nRESULT: FAILED")
	}
}

func r3(d time.Duration) string { return d.Round(10 * time.Millisecond).String() }

func qd(q Quantiles, d time.Duration) string {
	if q.N == 0 {
		return "-"
	}
	return r3(d)
}

func minDur(ds []time.Duration) time.Duration {
	m := ds[0]
	for _, d := range ds {
		m = min(m, d)
	}
	return m
}

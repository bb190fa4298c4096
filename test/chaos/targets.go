package chaos

import (
	"fmt"
	"io"
	"time"
)

// Objective is a figure of the benchmarks with its target on the 2-core development machine
// (docs/failover-testing.md).
type Objective struct {
	Name string
	Kind Kind
	// Handover measures the last write on the old primary -> the first on the new; otherwise the
	// RTO (fault -> first acknowledged write through -rw).
	Handover bool
	// P99 is the target for the 99th percentile.
	P99 time.Duration
}

// Objectives are the benchmark targets: failover with the Lease released by the shutdown handler
// (Pod deletion), with the Lease expiring (network cut, a frozen instance manager whose mysqld
// the operator fences), and a switchover's write unavailability.
var Objectives = []Objective{
	{Name: "failover RTO, Lease released (pod-delete)", Kind: PodDelete, P99: 5 * time.Second},
	{Name: "failover RTO, Lease expiring (network-cut)", Kind: NetworkCut, P99: 20 * time.Second},
	{Name: "failover RTO, manager frozen (manager-freeze)", Kind: ManagerFreeze, P99: 20 * time.Second},
	{Name: "switchover write unavailability (promote)", Kind: Switchover, Handover: true, P99: 2 * time.Second},
}

// ROGapLimit is how long -ro may serve no read before it counts as empty: the reader dials afresh
// every 100 ms, and a read in flight when its replica's connection breaks fails without -ro being
// empty.
const ROGapLimit = time.Second

// Verdict is an Objective measured.
type Verdict struct {
	Objective
	Q   Quantiles
	Met bool
}

// Verdicts measures every Objective whose kind the run injected.
func (r *Report) Verdicts() []Verdict {
	var out []Verdict
	for _, o := range Objectives {
		for _, s := range r.Summary {
			if s.Kind != o.Kind {
				continue
			}
			q := s.RTO
			if o.Handover {
				q = s.Handover
			}
			out = append(out, Verdict{Objective: o, Q: q, Met: q.N > 0 && q.P99 <= o.P99})
		}
	}
	return out
}

// ROVerdict is the -ro target: never empty while a replica lives, measured as the longest time
// without a successful read through -ro during a fault, at most ROGapLimit, over every fault.
func (r *Report) ROVerdict() (longest time.Duration, failed, reads int, met bool) {
	for _, f := range r.Faults {
		longest = max(longest, f.Reads.LongestGap)
		failed += f.Reads.Reads - f.Reads.OK
		reads += f.Reads.Reads
	}
	return longest, failed, reads, len(r.Faults) > 0 && longest <= ROGapLimit
}

// PrintTargets writes the benchmark figures against their targets.
func (r *Report) PrintTargets(out io.Writer) {
	fmt.Fprintln(out, "\ntargets (2-core machine):")
	for _, v := range r.Verdicts() {
		fmt.Fprintf(out, "  %-44s n %-3d p50 %-8s p99 %-8s max %-8s target p99 <= %s: %s\n", v.Name, v.Q.N,
			r3(v.Q.P50), r3(v.Q.P99), r3(v.Q.Max), v.P99, metWord(v.Met))
	}
	longest, failed, reads, met := r.ROVerdict()
	fmt.Fprintf(out, "  %-44s %d of %d reads failed, longest time without a read %s, target never empty (no gap > %s): %s\n",
		"-ro during the faults", failed, reads, r3(longest), ROGapLimit, metWord(met))
}

func metWord(met bool) string {
	if met {
		return "met"
	}
	return "MISSED"
}

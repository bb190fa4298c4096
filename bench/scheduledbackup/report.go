package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// slotLayout is the UTC suffix of scheduled Backup names.
const slotLayout = "20060102150405"

type result struct {
	schedules, slotsEach int
	startup              time.Duration
	missed, doubled      int
	unexpected           int
	lateness             []time.Duration
	reconciles           float64

	operatorWindowCPU, serverWindowCPU time.Duration
	operatorCPU                        time.Duration
	operatorRSS                        int64
	observerErrors                     []string
}

// tally counts the Backups seen for every schedule's slots in [t0, end).
func (r *result) tally(seen []creation, schedules []client.ObjectKey, t0, end time.Time, cadence time.Duration) {
	count := map[client.ObjectKey]int{}
	for _, c := range seen {
		i := strings.LastIndexByte(c.key.Name, '-')
		slot, err := time.ParseInLocation(slotLayout, c.key.Name[i+1:], time.UTC)
		if i < 0 || err != nil || !slot.Equal(slot.Truncate(cadence)) {
			r.unexpected++
			continue
		}
		if slot.Before(t0) || !slot.Before(end) {
			continue
		}
		count[c.key]++
		r.lateness = append(r.lateness, c.seen.Sub(slot))
	}
	for slot := t0; slot.Before(end); slot = slot.Add(cadence) {
		r.slotsEach++
		for _, sb := range schedules {
			switch n := count[client.ObjectKey{Namespace: sb.Namespace, Name: sb.Name + "-" + slot.UTC().Format(slotLayout)}]; {
			case n == 0:
				r.missed++
			case n > 1:
				r.doubled++
			}
		}
	}
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[int(p*float64(len(sorted)-1)+0.5)]
}

func (r *result) print(w io.Writer, o options) {
	slices.Sort(r.lateness)
	expected := r.schedules * r.slotsEach
	p50, p99 := percentile(r.lateness, 0.50), percentile(r.lateness, 0.99)
	maxLate := percentile(r.lateness, 1)
	fmt.Fprintf(w, "ScheduledBackups:            %d in %d namespace(s), every %v, window %v (%d slots each, %d expected Backups)\n",
		r.schedules, o.namespaces, o.cadence, o.duration, r.slotsEach, expected)
	fmt.Fprintf(w, "startup:                     every schedule checked %v after the operator started\n", r.startup.Round(time.Millisecond))
	fmt.Fprintf(w, "slots without a Backup:      %d\n", r.missed)
	fmt.Fprintf(w, "slots with more than one:    %d\n", r.doubled)
	fmt.Fprintf(w, "Backups off any slot:        %d\n", r.unexpected)
	fmt.Fprintf(w, "lateness slot→Backup (watch): p50 %v  p99 %v  max %v  (%d Backups)\n",
		p50.Round(time.Millisecond), p99.Round(time.Millisecond), maxLate.Round(time.Millisecond), len(r.lateness))
	fmt.Fprintf(w, "reconciles per slot:         %.2f (%.0f reconciles)\n", r.reconciles/float64(max(expected, 1)), r.reconciles)
	fmt.Fprintf(w, "operator CPU:                %.1f s in the window (%.1f s over its life), peak RSS %d MiB\n",
		r.operatorWindowCPU.Seconds(), r.operatorCPU.Seconds(), r.operatorRSS>>20)
	fmt.Fprintf(w, "kube-apiserver + etcd CPU:   %.1f s in the window\n", r.serverWindowCPU.Seconds())
	if len(r.observerErrors) > 0 {
		fmt.Fprintf(w, "observer errors:             %d, first: %s\n", len(r.observerErrors), r.observerErrors[0])
	}
	target := time.Second
	if r.schedules > 200 {
		target = 3 * time.Second
	}
	verdict := "met"
	if r.missed > 0 || r.doubled > 0 || p99 > target {
		verdict = "MISSED"
	}
	fmt.Fprintf(w, "target (no missed or doubled slot, p99 <= %v): %s\n", target, verdict)
}

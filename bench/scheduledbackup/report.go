package main

import (
	"fmt"
	"io"
	"maps"
	"runtime"
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
	// bucket upper bounds of the operator's view of the lateness (slot to the create's answer)
	createP50, createP99 time.Duration
	reconciles           float64
	backupReconciles     float64
	// means over the window, from the operator's own metrics
	queueWait, reconcileTime time.Duration
	apiLatency               map[string]time.Duration

	operatorWindowCPU                 time.Duration
	apiserverWindowCPU, etcdWindowCPU time.Duration
	operatorCPU                       time.Duration
	operatorRSS                       int64
	machineBusy, benchCPU             time.Duration
	requests                          map[string]float64
	failures                          map[string]float64
	load                              [2]string
	observerErrors                    []string
	// perSlot are the lateness of each slot's Backups, by slot, for the slot-by-slot line.
	perSlot  map[time.Time][]time.Duration
	timeline *timeline
}

// tally counts the Backups seen for every schedule's slots in [t0, end).
func (r *result) tally(seen []creation, schedules []client.ObjectKey, t0, end time.Time, cadence time.Duration) {
	count := map[client.ObjectKey]int{}
	for _, c := range seen {
		slot, ok := slotOfName(c.key.Name)
		if !ok || !slot.Equal(slot.Truncate(cadence)) {
			r.unexpected++
			continue
		}
		if slot.Before(t0) || !slot.Before(end) {
			continue
		}
		count[c.key]++
		r.lateness = append(r.lateness, c.seen.Sub(slot))
		if r.perSlot == nil {
			r.perSlot = map[time.Time][]time.Duration{}
		}
		r.perSlot[slot] = append(r.perSlot[slot], c.seen.Sub(slot))
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

// slotOfName is the slot a scheduled Backup's name ends with.
func slotOfName(name string) (time.Time, bool) {
	i := strings.LastIndexByte(name, '-')
	if i < 0 {
		return time.Time{}, false
	}
	slot, err := time.ParseInLocation(slotLayout, name[i+1:], time.UTC)
	return slot, err == nil
}

// metrics derives the reconcile count and mean latencies of the window from two scrapes.
func (r *result) metrics(m0, m1 map[string]float64) {
	ctrlLabel := `controller="scheduledbackup"`
	r.reconciles = metricDelta(m0, m1, "controller_runtime_reconcile_total", ctrlLabel)
	r.backupReconciles = metricDelta(m0, m1, "controller_runtime_reconcile_total", `controller="backup"`)
	r.createP50 = histogramQuantile(m0, m1, "bench_backup_create_lateness_seconds", 0.50)
	r.createP99 = histogramQuantile(m0, m1, "bench_backup_create_lateness_seconds", 0.99)
	r.requests = operatorRequests(m0, m1)
	r.failures = operatorFailures(m0, m1)
	mean := func(name string, match ...string) time.Duration {
		n := metricDelta(m0, m1, name+"_count", match...)
		if n == 0 {
			return 0
		}
		return time.Duration(metricDelta(m0, m1, name+"_sum", match...) / n * float64(time.Second))
	}
	r.queueWait = mean("workqueue_queue_duration_seconds", `name="scheduledbackup"`)
	r.reconcileTime = mean("controller_runtime_reconcile_time_seconds", ctrlLabel)
	r.apiLatency = map[string]time.Duration{}
	for _, verb := range []string{"GET", "POST", "PATCH", "DELETE"} { // client-go reports HTTP methods
		r.apiLatency[verb] = mean("rest_client_request_duration_seconds", `verb="`+verb+`"`)
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
	creds := "the operator's ServiceAccount token (config/rbac)"
	if o.adminCredentials {
		creds = "the control plane's admin client certificate"
	}
	fmt.Fprintf(w, "operator credentials:        %s\n", creds)
	fmt.Fprintf(w, "startup:                     every schedule checked %v after the operator started\n", r.startup.Round(time.Millisecond))
	fmt.Fprintf(w, "slots without a Backup:      %d\n", r.missed)
	fmt.Fprintf(w, "slots with more than one:    %d\n", r.doubled)
	fmt.Fprintf(w, "Backups off any slot:        %d\n", r.unexpected)
	fmt.Fprintf(w, "lateness slot→Backup (watch): p50 %v  p99 %v  max %v  (%d Backups)\n",
		p50.Round(time.Millisecond), p99.Round(time.Millisecond), maxLate.Round(time.Millisecond), len(r.lateness))
	fmt.Fprintf(w, "slot by slot (Backups, max):  %s\n", r.slotBySlot())
	fmt.Fprintf(w, "lateness slot→create answer: p50 %v  p99 %v  (as the operator saw it; 50 ms buckets)\n",
		r.createP50, r.createP99)
	fmt.Fprintf(w, "reconciles per slot:         %.2f (%.0f reconciles)\n", r.reconciles/float64(max(expected, 1)), r.reconciles)
	if o.standIn {
		fmt.Fprintln(w, "Backup controller:           the benchmark's stand-in (-stand-in)")
	} else {
		fmt.Fprintf(w, "Backup controller:           the operator's, %.2f reconciles per slot\n", r.backupReconciles/float64(max(expected, 1)))
	}
	fmt.Fprintf(w, "operator means:              queue wait %v, reconcile %v, API GET/LIST %v POST %v PATCH %v DELETE %v\n",
		r.queueWait.Round(time.Millisecond), r.reconcileTime.Round(time.Millisecond), r.apiLatency["GET"].Round(time.Millisecond),
		r.apiLatency["POST"].Round(time.Millisecond),
		r.apiLatency["PATCH"].Round(time.Millisecond), r.apiLatency["DELETE"].Round(time.Millisecond))
	fmt.Fprintf(w, "operator CPU:                %.1f s in the window (%.1f s over its life), peak RSS %d MiB\n",
		r.operatorWindowCPU.Seconds(), r.operatorCPU.Seconds(), r.operatorRSS>>20)
	server := r.apiserverWindowCPU + r.etcdWindowCPU
	fmt.Fprintf(w, "kube-apiserver + etcd CPU:   %.1f s in the window (apiserver %.1f s, etcd %.1f s; %.1f ms per slot)\n",
		server.Seconds(), r.apiserverWindowCPU.Seconds(), r.etcdWindowCPU.Seconds(),
		server.Seconds()*1000/float64(max(expected, 1)))
	what := "the watch"
	if o.standIn {
		what = "the watch and the stand-in Backup controller"
	}
	fmt.Fprintf(w, "benchmark process CPU:       %.1f s in the window (%s)\n", r.benchCPU.Seconds(), what)
	others := r.machineBusy - r.operatorWindowCPU - server - r.benchCPU
	fmt.Fprintf(w, "machine:                     %d CPUs, %.1f CPU-s busy in the window, %.1f of them by unrelated processes; load average %s -> %s\n",
		runtime.NumCPU(), r.machineBusy.Seconds(), others.Seconds(), r.load[0], r.load[1])
	keys := make([]string, 0, len(r.requests))
	for k := range r.requests {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		if per := r.requests[k] / float64(max(expected, 1)); per >= 0.05 {
			parts = append(parts, fmt.Sprintf("%s %.2f", k, per))
		}
	}
	fmt.Fprintf(w, "operator requests per slot:  %s\n", strings.Join(parts, ", "))
	failures := "none"
	if len(r.failures) > 0 {
		var fs []string
		for _, k := range slices.Sorted(maps.Keys(r.failures)) {
			fs = append(fs, fmt.Sprintf("%s %.0f", k, r.failures[k]))
		}
		failures = strings.Join(fs, ", ")
	}
	fmt.Fprintf(w, "operator failures:           %s (in the window)\n", failures)
	r.timeline.print(w)
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

// slotBySlot renders, for each slot of the window in order, how many Backups it got and the
// latest one's lateness, so a run that falls behind shows where.
func (r *result) slotBySlot() string {
	slots := slices.SortedFunc(maps.Keys(r.perSlot), time.Time.Compare)
	parts := make([]string, 0, len(slots))
	for _, s := range slots {
		parts = append(parts, fmt.Sprintf("%d/%.1fs", len(r.perSlot[s]), slices.Max(r.perSlot[s]).Seconds()))
	}
	return strings.Join(parts, " ")
}

package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"runtime"
	"slices"
	"strings"
	"time"
)

// cpuTarget is the most of one core scraping may cost the instance manager.
const cpuTarget = 2.0

type report struct {
	started  time.Time
	instance *instanceResult
	operator *operatorResult
	notes    []string
}

func (r report) print(w io.Writer, o options) {
	fmt.Fprintf(w, "# %s, %d CPUs, text format with gzip, one kept-alive HTTPS connection per endpoint\n",
		r.started.UTC().Format("2006-01-02"), runtime.NumCPU())
	row := func(figure, value string) { fmt.Fprintf(w, "%-58s %s\n", figure, value) }
	row("figure", "value")
	if in := r.instance; in != nil {
		st := in.stats
		row("instance /metrics size: text, gzip on the wire", fmt.Sprintf("%s, %s", bytesOf(st.text), bytesOf(st.wire)))
		row("instance /metrics series: all, cnm_*", fmt.Sprintf("%d, %d (up and primary: %v)", st.series, in.cnmSeries, in.up))
		row("instance series by family", families(st.last))
		row(fmt.Sprintf("instance scrape latency p50 / p95 / max (%d scrapes)", st.n), latencies(st))
		row("instance first scrape (with the TLS handshake)", ms(st.firstConnected))
		if in.window > 0 {
			base, scraped := percentOfCore(in.baselineCPU, in.window), percentOfCore(in.scrapedCPU, in.window)
			row(fmt.Sprintf("instance manager CPU, no scrapes (%s)", in.window), fmt.Sprintf("%.2f %% of a core (%s)", base, in.baselineCPU))
			row(fmt.Sprintf("instance manager CPU, scraped every %s (%d scrapes)", o.interval, in.windowScrapes),
				fmt.Sprintf("%.2f %% of a core (%s)", scraped, in.scrapedCPU))
			verdict := "met"
			if scraped-base >= cpuTarget {
				verdict = "NOT met"
			}
			row("instance manager CPU, scraped minus not", fmt.Sprintf("%+.2f %% of a core (target < %.0f %%: %s; scraped total %.2f %%)",
				scraped-base, cpuTarget, verdict, scraped))
		}
		r.notes = append(r.notes, in.notes...)
	}
	if op := r.operator; op != nil {
		st := op.stats
		row("operator objects: Clusters, ScheduledBackups", fmt.Sprintf("%d, %d (reconciled and settled in %s)",
			op.clusters, op.schedules, op.reconciled.Round(time.Second)))
		row("operator /metrics size: text, gzip on the wire", fmt.Sprintf("%s, %s", bytesOf(st.text), bytesOf(st.wire)))
		row("operator /metrics series: all, before any object", fmt.Sprintf("%d, %d", st.series, op.emptySeries))
		row("operator series with a scheduledbackup label", fmt.Sprintf("%d (%.2f per ScheduledBackup)",
			op.scheduleSeries, float64(op.scheduleSeries)/float64(op.schedules)))
		row("operator series with a cluster label", fmt.Sprintf("%d (%.2f per Cluster)",
			op.clusterSeries, float64(op.clusterSeries)/float64(op.clusters)))
		row("operator series added, per ScheduledBackup", fmt.Sprintf("%.2f (all series added over %d, Clusters' and Backups' included)",
			float64(st.series-op.emptySeries)/float64(op.schedules), op.schedules))
		row("operator series by family", families(st.last))
		row(fmt.Sprintf("operator scrape latency p50 / p95 / max (%d scrapes)", st.n), latencies(st))
		row("operator first scrape (with the TLS handshake)", ms(st.firstConnected))
		r.notes = append(r.notes, op.notes...)
	}
	for _, n := range r.notes {
		fmt.Fprintf(w, "# note: %s\n", n)
	}
}

// families is seriesByFamily as "cnm 30, go 45, ...", largest first.
func families(body []byte) string {
	counts := seriesByFamily(body)
	names := slices.Collect(maps.Keys(counts))
	slices.SortFunc(names, func(a, b string) int {
		if c := cmp.Compare(counts[b], counts[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s %d", n, counts[n])
	}
	return strings.Join(parts, ", ")
}

// percentOfCore is cpu over window as a percentage of one core.
func percentOfCore(cpu, window time.Duration) float64 {
	if window <= 0 {
		return 0
	}
	return 100 * cpu.Seconds() / window.Seconds()
}

func latencies(st scrapeStats) string {
	return fmt.Sprintf("%s / %s / %s", ms(st.p50), ms(st.p95), ms(st.max))
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

func bytesOf(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f KiB", float64(n)/1024)
}

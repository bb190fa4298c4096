package main

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat CPU times on Linux.
const clockTicks = 100

// cpuTime is the user+system CPU time of pid so far.
func cpuTime(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name is in parentheses and may contain spaces: fields start after it.
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / clockTicks, nil
}

// machineBusy is the CPU time all processes of the machine used so far (all CPUs, not idle).
func machineBusy() time.Duration {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	fields := strings.Fields(strings.SplitN(string(data), "\n", 2)[0])[1:]
	var busy int64
	for i, f := range fields {
		v, _ := strconv.ParseInt(f, 10, 64)
		if i != 3 && i != 4 { // idle, iowait
			busy += v
		}
	}
	return time.Duration(busy) * time.Second / clockTicks
}

// loadAverage is the one-minute load average.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(data))[0]
}

// childrenNamed finds the child processes of this process with the given command names: the
// envtest kube-apiserver and etcd.
func childrenNamed(names ...string) []int {
	var out []int
	self := os.Getpid()
	entries, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, e := range entries {
		data, err := os.ReadFile(e)
		if err != nil {
			continue
		}
		s := string(data)
		open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || closing < 0 {
			continue
		}
		comm, fields := s[open+1:closing], strings.Fields(s[closing+2:])
		ppid, _ := strconv.Atoi(fields[1])
		for _, n := range names {
			if comm == n && ppid == self {
				pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(e)))
				out = append(out, pid)
			}
		}
	}
	return out
}

// totalCPU sums cpuTime over pids.
func totalCPU(pids []int) time.Duration {
	var sum time.Duration
	for _, p := range pids {
		if d, err := cpuTime(p); err == nil {
			sum += d
		}
	}
	return sum
}

// scrape reads the operator's Prometheus metrics as name{labels} -> value.
func scrape(ctx context.Context, url string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", url, err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[line[:i]] = v
		}
	}
	return out, sc.Err()
}

// metricDelta sums, over every series of name whose labels contain all of match, end - start.
func metricDelta(start, end map[string]float64, name string, match ...string) float64 {
	var sum float64
	for k, v := range end {
		if !strings.HasPrefix(k, name+"{") && k != name {
			continue
		}
		ok := true
		for _, m := range match {
			ok = ok && strings.Contains(k, m)
		}
		if ok {
			sum += v - start[k]
		}
	}
	return sum
}

// operatorRequests counts, from the operator's rest_client_requests_total, the API requests it
// sent in the window by HTTP method (Events included).
func operatorRequests(m0, m1 map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range m1 {
		if strings.HasPrefix(k, "rest_client_requests_total{") {
			if d := v - m0[k]; d > 0 {
				out[label(k, "method")] += d
			}
		}
	}
	return out
}

// operatorFailures counts the operator's API answers in the window that were not a success, by
// method and HTTP code (client-go's "<error>" when no answer came), and its reconcile errors by
// controller.
func operatorFailures(m0, m1 map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range m1 {
		d := v - m0[k]
		switch {
		case d <= 0:
		case strings.HasPrefix(k, "rest_client_requests_total{"):
			if code := label(k, "code"); !strings.HasPrefix(code, "2") {
				out[label(k, "method")+" "+code] += d
			}
		case strings.HasPrefix(k, "controller_runtime_reconcile_errors_total{"):
			out[label(k, "controller")+" reconcile errors"] += d
		}
	}
	return out
}

// label extracts a label's value from a series name.
func label(series, name string) string {
	i := strings.Index(series, name+`="`)
	if i < 0 {
		return ""
	}
	rest := series[i+len(name)+2:]
	return rest[:strings.IndexByte(rest, '"')]
}

// histogramQuantile is the upper bound of the bucket holding quantile q of the observations a
// histogram gained between two scrapes.
func histogramQuantile(m0, m1 map[string]float64, name string, q float64) time.Duration {
	type bucket struct{ le, count float64 }
	var buckets []bucket
	for k, v := range m1 {
		if !strings.HasPrefix(k, name+"_bucket{") {
			continue
		}
		le, err := strconv.ParseFloat(label(k, "le"), 64)
		if err == nil {
			buckets = append(buckets, bucket{le, v - m0[k]})
		}
	}
	sort.Slice(buckets, func(i, j int) bool { return buckets[i].le < buckets[j].le })
	if len(buckets) == 0 || buckets[len(buckets)-1].count == 0 {
		return 0
	}
	want := q * buckets[len(buckets)-1].count
	for _, b := range buckets {
		if b.count >= want {
			if math.IsInf(b.le, 1) {
				return -1
			}
			return time.Duration(b.le * float64(time.Second)).Round(time.Millisecond)
		}
	}
	return 0
}

package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
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

// reconcileCount reads controller_runtime_reconcile_total of the scheduledbackup controller.
func reconcileCount(ctx context.Context, url string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("scraping the operator's metrics: %w", err)
	}
	defer resp.Body.Close()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "controller_runtime_reconcile_total{") && strings.Contains(line, `controller="scheduledbackup"`) {
			v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			if err == nil {
				sum += v
			}
		}
	}
	return sum, sc.Err()
}

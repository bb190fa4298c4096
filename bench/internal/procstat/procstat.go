package procstat

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat CPU times on Linux.
const clockTicks = 100

// CPUTime is the user+system CPU time of pid so far: every thread of the process, not its
// children (a child's time is in cutime/cstime once it has been waited for).
func CPUTime(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseCPU(string(data))
}

// parseCPU reads utime and stime of one /proc/<pid>/stat line.
func parseCPU(stat string) (time.Duration, error) {
	// The command name is in parentheses and may contain spaces: fields start after it.
	closing := strings.LastIndexByte(stat, ')')
	if closing < 0 || closing+2 > len(stat) {
		return 0, fmt.Errorf("unexpected /proc stat line %q", stat)
	}
	fields := strings.Fields(stat[closing+2:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("unexpected /proc stat line %q", stat)
	}
	utime, err := strconv.ParseInt(fields[11], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("utime: %w", err)
	}
	stime, err := strconv.ParseInt(fields[12], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("stime: %w", err)
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, nil
}

// MachineBusy is the CPU time all processes of the machine used so far (all CPUs, not idle).
func MachineBusy() time.Duration {
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

// LoadAverage is the one-minute load average.
func LoadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(data))[0]
}

// ChildrenNamed finds the child processes of this process with the given command names (the
// envtest kube-apiserver and etcd, say).
func ChildrenNamed(names ...string) []int {
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

// TotalCPU sums CPUTime over pids, leaving out those that are gone.
func TotalCPU(pids []int) time.Duration {
	var sum time.Duration
	for _, p := range pids {
		if d, err := CPUTime(p); err == nil {
			sum += d
		}
	}
	return sum
}

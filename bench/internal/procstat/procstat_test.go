package procstat

import (
	"os"
	"testing"
	"time"
)

// TestParseCPU has one row per rule of reading a /proc/<pid>/stat line.
func TestParseCPU(t *testing.T) {
	for _, tc := range []struct {
		rule    string
		line    string
		want    time.Duration
		wantErr bool
	}{
		{"utime and stime are added, in clock ticks of 10 ms",
			"42 (manager) S 1 42 42 0 -1 4194560 100 0 0 0 250 130 7 9 20 0 12 0 100 0 0", 3800 * time.Millisecond, false},
		{"a command name with spaces and parentheses does not shift the fields",
			"42 (a (b) c) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 100 0 0", 30 * time.Millisecond, false},
		{"a truncated line is an error", "42 (manager) S 1 42", 0, true},
		{"a line without a command name is an error", "garbage", 0, true},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			got, err := parseCPU(tc.line)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("parseCPU = %v, %v; want %v (error %v)", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

// TestCPUTimeOfThisProcessGrows: the process's own CPU time moves when it computes.
func TestCPUTimeOfThisProcessGrows(t *testing.T) {
	before, err := CPUTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	x := 0
	for deadline := time.Now().Add(100 * time.Millisecond); time.Now().Before(deadline); {
		x++
	}
	after, err := CPUTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if after <= before {
		t.Errorf("CPU time %v after %d iterations of busy work, %v before", after, x, before)
	}
}

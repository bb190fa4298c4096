package proc

import (
	"os/exec"
	"strings"
	"sync"
	"testing"
)

func TestOutputCollectsStdoutAndStderr(t *testing.T) {
	var out Output
	cmd := exec.Command("/bin/sh", "-c", "echo out; echo err >&2")
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := Run(cmd); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "out\nerr\n" {
		t.Errorf("output %q, want both streams", got)
	}
}

func TestOutputKeepsTheLastBytes(t *testing.T) {
	out := Output{Keep: 4}
	for _, s := range []string{"ab", "cdef", "g"} {
		if n, err := out.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if got := out.String(); got != "defg" {
		t.Errorf("kept %q, want the last 4 bytes", got)
	}
}

func TestOutputIsSafeForConcurrentWritersAndReaders(t *testing.T) {
	var out Output
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				_, _ = out.Write([]byte("x"))
				_ = out.String()
			}
		})
	}
	wg.Wait()
	if got := out.String(); got != strings.Repeat("x", 400) {
		t.Errorf("kept %d bytes, want 400", len(got))
	}
}

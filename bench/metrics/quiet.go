package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// quiet keeps the measurements away from the project's end-to-end suite, whose test binary
// (e2e.test) takes the machine's cores while it runs.
type quiet struct {
	binary string        // processes running a program of this name compete; empty: nothing is checked
	poll   time.Duration // how often to look again
	limit  time.Duration // how long to wait before measuring anyway (and saying so)
}

// competitors lists the processes other than this one running a program named binary (the
// base name of their first argument).
func competitors(binary string) []string {
	if binary == "" {
		return nil
	}
	var out []string
	self := os.Getpid()
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil || pid == self {
			continue
		}
		data, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil || len(data) == 0 {
			continue
		}
		argv0, _, _ := strings.Cut(string(data), "\x00")
		if filepath.Base(argv0) == binary {
			out = append(out, fmt.Sprintf("%d %s", pid, argv0))
		}
	}
	return out
}

// wait returns once no competitor runs, or after limit with a note saying the measurement that
// follows shares the machine.
func (q quiet) wait(what string) string {
	deadline := time.Now().Add(q.limit)
	for {
		found := competitors(q.binary)
		if len(found) == 0 {
			return ""
		}
		if time.Now().After(deadline) {
			return fmt.Sprintf("%s measured while %q ran (waited %s)", what, q.binary, q.limit)
		}
		fmt.Fprintf(os.Stderr, "# waiting before %s: %s\n", what, found[0])
		time.Sleep(q.poll)
	}
}

// during is a note when a competitor runs now, at the end of a window.
func (q quiet) during(what string) string {
	if found := competitors(q.binary); len(found) > 0 {
		return fmt.Sprintf("%s: %q was running at the end of the window", what, q.binary)
	}
	return ""
}

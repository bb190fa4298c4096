package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	cmdbackup "github.com/cloudnative-mysql/cloudnative-mysql/internal/cmd/backup"
)

// childMode makes this program the backup process whose memory is measured: it runs
// `manager backup`'s Run with the options in a JSON file (which names secret files, never holds
// secrets).
const childMode = "backup-child"

func runChild(optionsFile string) error {
	b, err := os.ReadFile(optionsFile)
	if err != nil {
		return err
	}
	var o cmdbackup.Options
	if err := json.Unmarshal(b, &o); err != nil {
		return err
	}
	return cmdbackup.Run(context.Background(), &o)
}

// childResult is what a backup child did.
type childResult struct {
	Elapsed  time.Duration
	PeakRSS  int64 // bytes, VmHWM of the child process alone (not its mysqld)
	Snapshot string
}

// runBackupChild runs the backup in a child process, polling its VmHWM.
func runBackupChild(o *cmdbackup.Options, optionsFile string) (childResult, error) {
	b, err := json.Marshal(o)
	if err != nil {
		return childResult{}, err
	}
	if err := os.WriteFile(optionsFile, b, 0o600); err != nil {
		return childResult{}, err
	}
	self, err := os.Executable()
	if err != nil {
		return childResult{}, err
	}
	cmd := exec.Command(self, childMode, optionsFile)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	begin := time.Now()
	if err := cmd.Start(); err != nil {
		return childResult{}, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var peak int64
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				return childResult{}, fmt.Errorf("backup child: %w", err)
			}
			return childResult{Elapsed: time.Since(begin), PeakRSS: peak}, nil
		case <-tick.C:
			if v := vmHWM(cmd.Process.Pid); v > peak {
				peak = v
			}
		}
	}
}

// vmHWM reads the peak resident set size of pid in bytes, 0 if unknown.
func vmHWM(pid int) int64 {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/retention"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/retentionpass"
)

// childMode makes this program the process that runs the pass, so that its peak RSS is the
// pass's alone.
const childMode = "pass-child"

// childOptions is what the child needs; it is written to a 0600 file (it holds the keys).
type childOptions struct {
	Endpoint    string // host:port of the counting proxy
	Region      string
	Bucket      string
	AccessKey   string
	SecretKey   string
	Now         time.Time
	Window      time.Duration
	MetaWorkers int
	CPUProfile  string
	ResultFile  string
}

// childResult is what the child reports of its pass.
type childResult struct {
	Elapsed time.Duration
	Phases  []phaseSpan
	Report  retentionpass.Report
	Error   string
}

func runChild(optionsFile string) error {
	b, err := os.ReadFile(optionsFile)
	if err != nil {
		return err
	}
	var o childOptions
	if err := json.Unmarshal(b, &o); err != nil {
		return err
	}
	client, err := objectstore.New(objectstore.Config{Endpoint: o.Endpoint, Region: o.Region, Bucket: o.Bucket,
		Path: storePath, ForcePathStyle: true,
		Credentials: objectstore.Credentials{AccessKeyID: o.AccessKey, SecretAccessKey: o.SecretKey}})
	if err != nil {
		return err
	}
	if o.CPUProfile != "" {
		f, err := os.Create(o.CPUProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	store := &timedStore{Store: client, phases: map[string]*phase{}}
	begin := time.Now()
	report, passErr := retentionpass.Run(context.Background(), store, cluster, retention.Policy{Window: o.Window},
		retentionpass.Options{Now: o.Now, MetadataConcurrency: o.MetaWorkers})
	res := childResult{Elapsed: time.Since(begin), Phases: store.spans(), Report: report}
	if passErr != nil {
		res.Error = passErr.Error()
	}
	out, err := json.Marshal(res)
	if err != nil {
		return err
	}
	return os.WriteFile(o.ResultFile, out, 0o600)
}

// runPassChild runs the pass in a child process and returns its result and peak RSS in bytes
// (the kernel's ru_maxrss of the child).
func runPassChild(o childOptions, optionsFile string) (childResult, int64, error) {
	b, err := json.Marshal(o)
	if err != nil {
		return childResult{}, 0, err
	}
	if err := os.WriteFile(optionsFile, b, 0o600); err != nil {
		return childResult{}, 0, err
	}
	self, err := os.Executable()
	if err != nil {
		return childResult{}, 0, err
	}
	cmd := exec.Command(self, childMode, optionsFile)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return childResult{}, 0, fmt.Errorf("pass child: %w", err)
	}
	var peak int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		peak = ru.Maxrss * 1024
	}
	out, err := os.ReadFile(o.ResultFile)
	if err != nil {
		return childResult{}, 0, err
	}
	var res childResult
	if err := json.Unmarshal(out, &res); err != nil {
		return childResult{}, 0, err
	}
	return res, peak, nil
}

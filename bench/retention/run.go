package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3proxy"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
)

// run seeds a fresh versitygw, runs the pass in a child through a counting proxy, checks the
// store and prints the figures.
func run(ctx context.Context, f flags) error {
	work, err := os.MkdirTemp("", "retention-bench-")
	if err != nil {
		return err
	}
	if !f.keep {
		defer os.RemoveAll(work)
	}
	s3dir := filepath.Join(work, "s3")
	if err := os.Mkdir(s3dir, 0o700); err != nil {
		return err
	}
	s3, err := s3test.StartServer(ctx, s3dir)
	if err != nil {
		return err
	}
	defer s3.Close()
	direct, err := objectstore.New(objectstore.Config{Endpoint: s3.Addr, Region: s3.Region, Bucket: s3.Bucket,
		Path: storePath, ForcePathStyle: true,
		Credentials: objectstore.Credentials{AccessKeyID: s3.AccessKey, SecretAccessKey: s3.SecretKey}})
	if err != nil {
		return err
	}
	inv := inventory{now: time.Now().Truncate(time.Second), backups: f.backups, segments: f.segments}
	begin := time.Now()
	if err := seed(ctx, s3.Client(), direct, s3.Bucket, inv, f.seedWorkers); err != nil {
		return fmt.Errorf("seeding: %w", err)
	}
	fmt.Printf("seeded %d backups and %d segments in %s\n", f.backups, f.segments, time.Since(begin).Round(time.Millisecond))

	proxy, err := s3proxy.New(s3.Endpoint)
	if err != nil {
		return err
	}
	defer proxy.Close()
	load := loadAverage()
	res, peak, err := runPassChild(childOptions{Endpoint: proxy.Host, Region: s3.Region, Bucket: s3.Bucket,
		AccessKey: s3.AccessKey, SecretKey: s3.SecretKey, Now: inv.now, Window: window,
		MetaWorkers: f.metaWorkers, CPUProfile: f.cpuProfile, ResultFile: filepath.Join(work, "result.json")},
		filepath.Join(work, "options.json"))
	if err != nil {
		return err
	}
	if res.Error != "" {
		return fmt.Errorf("the pass failed: %s", res.Error)
	}
	after, err := checkStore(ctx, direct, inv, res)
	if err != nil {
		return err
	}
	printReport(f, res, peak, proxy.Counts(), after, load, loadAverage())
	return nil
}

// loadAverage returns the machine's 1-, 5- and 15-minute load averages as /proc shows them.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil || len(b) < 14 {
		return "unknown"
	}
	var l1, l5, l15 string
	fmt.Sscan(string(b), &l1, &l5, &l15)
	return l1 + " " + l5 + " " + l15
}

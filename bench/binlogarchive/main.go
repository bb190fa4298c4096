package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/binlogarchive"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/mysqldtest"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
)

const cluster = "bench"

func main() {
	duration := flag.Duration("duration", 60*time.Second, "how long the writer commits")
	rate := flag.Int("rate", 200, "commits per second")
	timeout := flag.Duration("archive-timeout", v1alpha1.DefaultArchiveTimeout, "the Cluster's archiveTimeout")
	flag.Parse()
	if err := run(context.Background(), *duration, *rate, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "bench/binlogarchive:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, duration time.Duration, rate int, timeout time.Duration) error {
	srv, err := mysqldtest.StartServer(ctx, mysqldtest.Config{})
	if err != nil {
		return err
	}
	defer srv.Close()
	dir, err := os.MkdirTemp("", "cnm-bench-s3-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	s3, err := s3test.StartServer(ctx, dir)
	if err != nil {
		return err
	}
	defer s3.Close()
	cfg, err := objectstore.ResolveConfig(&v1alpha1.ObjectStoreConfiguration{Bucket: s3.Bucket, Endpoint: s3.Endpoint,
		Region: s3.Region, ForcePathStyle: true}, objectstore.SecretValues{
		Credentials: objectstore.Credentials{AccessKeyID: s3.AccessKey, SecretAccessKey: s3.SecretKey}})
	if err != nil {
		return err
	}
	store, err := objectstore.New(cfg)
	if err != nil {
		return err
	}
	db, err := srv.OpenDB(ctx, "root", "", "")
	if err != nil {
		return err
	}
	defer db.Close()
	for _, stmt := range []string{"CREATE DATABASE app", "CREATE TABLE app.t (id BIGINT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(64))"} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	var uuid string
	var base int64
	if err := db.QueryRowContext(ctx, "SELECT @@server_uuid").Scan(&uuid); err != nil {
		return err
	}
	gno := func(s gtid.Set) int64 { // highest contiguous transaction number of the server
		n := int64(0)
		for n < 1<<40 {
			probe := gtid.MustParse(fmt.Sprintf("%s:1-%d", uuid, n+1))
			if !s.Contains(probe) {
				return n
			}
			n++
		}
		return n
	}
	var executed string
	if err := db.QueryRowContext(ctx, "SELECT @@global.gtid_executed").Scan(&executed); err != nil {
		return err
	}
	base = gno(gtid.MustParse(executed))

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	arch := &binlogarchive.Archiver{Server: binlogarchive.Server{DB: db}, Store: store, Cluster: cluster, BinlogDir: srv.DataDir,
		Role: func(context.Context) (binlogarchive.Role, error) {
			return binlogarchive.Role{Primary: true, Writable: true}, nil
		},
		ArchiveTimeout: func() time.Duration { return timeout }, KeepLocal: 0, Clock: clock.RealClock{},
		Metrics: binlogarchive.NewMetrics(nil), Log: logr.Discard()}
	go arch.Run(runCtx)

	// The writer: one commit every 1/rate, its commit time recorded by transaction number.
	commits := make([]time.Time, 0, int(duration.Seconds())*rate+1)
	writerDone := make(chan error, 1)
	go func() {
		tick := time.NewTicker(time.Second / time.Duration(rate))
		defer tick.Stop()
		end := time.Now().Add(duration)
		for time.Now().Before(end) {
			<-tick.C
			if _, err := db.ExecContext(ctx, "INSERT INTO app.t (v) VALUES (REPEAT('x', 64))"); err != nil {
				writerDone <- err
				return
			}
			commits = append(commits, time.Now())
		}
		writerDone <- nil
	}()
	// The poller: when a transaction number first shows in the index.
	seen := map[int64]time.Time{}
	last := base
	poll := func() error {
		index, _, err := store.ReadIndex(ctx, cluster)
		if err != nil {
			return err
		}
		sets := make([]gtid.Set, 0, len(index.Segments))
		for _, s := range index.Segments {
			g, err := gtid.Parse(s.GTIDRange)
			if err != nil {
				return err
			}
			sets = append(sets, g)
		}
		now, top := time.Now(), last
		union := gtid.Union(sets...)
		for union.Contains(gtid.MustParse(fmt.Sprintf("%s:1-%d", uuid, top+1))) {
			top++
		}
		for n := last + 1; n <= top; n++ {
			seen[n] = now
		}
		last = top
		return nil
	}
	var werr error
	for wrote := false; ; {
		select {
		case werr = <-writerDone:
			wrote = true
		case <-time.After(50 * time.Millisecond):
		}
		if err := poll(); err != nil {
			return err
		}
		if wrote {
			break
		}
	}
	if werr != nil {
		return werr
	}
	deadline := time.Now().Add(timeout + 30*time.Second)
	for last < base+int64(len(commits)) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		if err := poll(); err != nil {
			return err
		}
	}
	if last < base+int64(len(commits)) {
		return fmt.Errorf("%d of %d transactions archived after the writer stopped", last-base, len(commits))
	}
	lags := make([]time.Duration, 0, len(commits))
	for i, at := range commits {
		lags = append(lags, seen[base+int64(i)+1].Sub(at))
	}
	slices.Sort(lags)
	pct := func(p float64) time.Duration { return lags[min(len(lags)-1, int(p*float64(len(lags))))] }
	fmt.Printf("binlog archive lag, %d commits at %d/s for %s, archiveTimeout %s: p50 %s, p99 %s, max %s (target p99 <= 5s)\n",
		len(commits), rate, duration, timeout, pct(0.50).Round(time.Millisecond), pct(0.99).Round(time.Millisecond),
		lags[len(lags)-1].Round(time.Millisecond))
	return nil
}

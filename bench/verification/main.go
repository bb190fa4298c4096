package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/bench/internal/benchsource"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup/backuptest"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup/localmysqld"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backupjob"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/restore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/mysqldtest"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/verify"
)

func main() {
	mb := flag.Int("mb", 512, "table data to back up, in MB")
	runs := flag.Int("runs", 3, "restores and verifications, alternated")
	flag.Parse()
	if err := run(context.Background(), int64(*mb)*1e6, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, bytes int64, runs int) error {
	srv, db, err := benchsource.StartSource(ctx)
	if err != nil {
		return err
	}
	defer srv.Close()
	if err := benchsource.Grow(ctx, db, srv, bytes); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "cnm-bench-verification-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	s3, err := s3test.StartServer(ctx, dir)
	if err != nil {
		return err
	}
	defer s3.Close()
	cfg, err := backuptest.StoreConfig(s3, s3.Endpoint, "bench")
	if err != nil {
		return err
	}
	store, err := objectstore.New(cfg)
	if err != nil {
		return err
	}
	m, err := backuptest.Mysqld()
	if err != nil {
		return err
	}
	md, err := takeBackup(ctx, srv, store, m)
	if err != nil {
		return err
	}
	fmt.Printf("# backup %s: %.1f MB compressed, gtid %s\n", md.BackupID, float64(md.Size)/1e6, md.GTIDExecuted)
	fmt.Printf("%-14s %10s %10s %10s %8s %8s %8s\n", "run", "total", "restore", "check", "tables", "rows", "ratio")
	var restores, verifies, checks []time.Duration
	for i := range runs {
		d, err := plainRestore(ctx, store, md, m)
		if err != nil {
			return err
		}
		restores = append(restores, d)
		fmt.Printf("%-14s %10s\n", fmt.Sprintf("restore %d", i+1), d.Round(time.Millisecond))
		res, d, err := verification(ctx, store, md, m)
		if err != nil {
			return err
		}
		check := time.Duration(res.CheckMillis) * time.Millisecond
		verifies, checks = append(verifies, d), append(checks, check)
		// ratio: this verification without its check phase, over the plain restore just before it.
		fmt.Printf("%-14s %10s %10s %10s %8d %8d %8.2f\n", fmt.Sprintf("verify %d", i+1), d.Round(time.Millisecond),
			(time.Duration(res.RestoreMillis) * time.Millisecond).Round(time.Millisecond), check.Round(time.Millisecond),
			res.TablesChecked, res.Rows, float64(d-check)/float64(restores[i]))
	}
	r, v, c := median(restores), median(verifies), median(checks)
	fmt.Printf("# medians: restore %s, verification %s (CHECK TABLE and counts %s)\n", r.Round(time.Millisecond),
		v.Round(time.Millisecond), c.Round(time.Millisecond))
	fmt.Printf("# (verification - check) / restore = %.2f (target <= 1.30); verification / restore = %.2f\n",
		float64(v-c)/float64(r), float64(v)/float64(r))
	return nil
}

// takeBackup backs srv up with the clone method into store.
func takeBackup(ctx context.Context, srv *mysqldtest.Server, store objectstore.Store, m localmysqld.Command) (*objectstore.Metadata, error) {
	scratch, err := backuptest.NewScratch(m)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch)
	p, err := backup.NewCloneProducer(backup.CloneConfig{Mysqld: m, ScratchDir: scratch,
		Donor: backup.Donor{Host: srv.Host, Port: srv.Port, User: benchsource.BackupUser, Password: benchsource.BackupPassword,
			CAFile: srv.TLS.CAFile, CertFile: srv.TLS.ClientCertFile, KeyFile: srv.TLS.ClientKeyFile}})
	if err != nil {
		return nil, err
	}
	ref := objectstore.BackupRef{Cluster: "bench", Name: "full", ID: time.Now().UTC().Format("20060102T150405Z")}
	return backup.Run(ctx, store, ref, backup.Owner{Namespace: "bench"}, p)
}

func plainRestore(ctx context.Context, store objectstore.Store, md *objectstore.Metadata, m localmysqld.Command) (time.Duration, error) {
	scratch, err := backuptest.NewScratch(m)
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(scratch)
	begin := time.Now()
	_, err = restore.Restore(ctx, restore.Config{Store: store, Ref: md.Ref(), DataDir: filepath.Join(scratch, "data"),
		RunDir: filepath.Join(scratch, "run"), Mysqld: m})
	return time.Since(begin), err
}

func verification(ctx context.Context, store objectstore.Store, md *objectstore.Metadata, m localmysqld.Command) (backupjob.VerifyResult, time.Duration, error) {
	scratch, err := backuptest.NewScratch(m)
	if err != nil {
		return backupjob.VerifyResult{}, 0, err
	}
	defer os.RemoveAll(scratch)
	begin := time.Now()
	res := verify.Run(ctx, verify.Config{Store: store, Ref: md.Ref(), ScratchDir: scratch, Mysqld: m,
		CheckBudget: time.Hour, Now: time.Now, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	d := time.Since(begin)
	if !res.Passed {
		return res, d, fmt.Errorf("the verification failed: %s: %s", res.Reason, res.Message)
	}
	return res, d, nil
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

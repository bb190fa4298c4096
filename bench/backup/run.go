package main

import (
	"context"
	"fmt"
	"github.com/cloudnative-mysql/cloudnative-mysql/bench/internal/benchsource"
	"os"
	"path/filepath"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup/archive"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup/backuptest"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup/localmysqld"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backupjob"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/restore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
)

// bench is the shared state of one run.
type bench struct {
	m       localmysqld.Command
	s3      *s3test.Server
	store   *objectstore.Client
	work    string // scratch inside the MySQL root filesystem
	secrets backupjob.Store
}

func run(ctx context.Context, gbs []int) error {
	m, err := backuptest.Mysqld()
	if err != nil {
		return err
	}
	work, err := backuptest.NewScratch(m)
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	s3dir := filepath.Join(work, "s3")
	if err := os.MkdirAll(s3dir, 0o700); err != nil {
		return err
	}
	s3, err := s3test.StartServer(ctx, s3dir)
	if err != nil {
		return err
	}
	defer s3.Close()
	cfg, err := backuptest.StoreConfig(s3, s3.Endpoint, "bench")
	if err != nil {
		return err
	}
	cfg.PartSize = 0 // the production default, 16 MiB
	store, err := objectstore.New(cfg)
	if err != nil {
		return err
	}
	b := &bench{m: m, s3: s3, store: store, work: work}
	if b.secrets, err = b.writeSecrets(); err != nil {
		return err
	}
	srv, db, err := benchsource.StartSource(ctx)
	if err != nil {
		return err
	}
	defer srv.Close()
	defer db.Close()
	fmt.Printf("%-6s %-34s %10s %10s %8s\n", "size", "measure", "seconds", "MB/s", "ratio")
	for i, gb := range gbs {
		if err := benchsource.Grow(ctx, db, srv, int64(gb)*1e9); err != nil {
			return err
		}
		o := b.options(srv.Host, srv.Port, srv.TLS.CAFile, srv.TLS.ClientCertFile, srv.TLS.ClientKeyFile, fmt.Sprint(gb))
		res, err := runBackupChild(o, filepath.Join(work, "options.json"))
		if err != nil {
			return err
		}
		snapshot := filepath.Join(o.ScratchDir, "snapshot")
		size, err := benchsource.DirSize(snapshot)
		if err != nil {
			return err
		}
		label := fmt.Sprintf("%dGB", gb)
		row(label, "full clone backup (child process)", res.Elapsed, size, 0)
		fmt.Printf("%-6s %-34s %10s %10.1f\n", label, "peak RSS of the backup process MiB", "", float64(res.PeakRSS)/(1<<20))
		if i == 0 {
			full := objectstore.BackupRef{Cluster: o.Cluster, Name: o.BackupName, ID: o.BackupID}
			if err := b.compare(ctx, label, snapshot, size, full); err != nil {
				return err
			}
		}
		_ = os.RemoveAll(o.ScratchDir)
	}
	return nil
}

func row(size, what string, d time.Duration, bytes int64, ratio float64) {
	mbs := float64(bytes) / 1e6 / d.Seconds()
	if ratio == 0 {
		fmt.Printf("%-6s %-34s %10.1f %10.1f\n", size, what, d.Seconds(), mbs)
		return
	}
	fmt.Printf("%-6s %-34s %10.1f %10.1f %8.2f\n", size, what, d.Seconds(), mbs, ratio)
}

// compare times the stream stage and the restore against the raw tools on the same snapshot.
// full is the child's backup, whose metadata.json carries the real GTID set the restore checks.
func (b *bench) compare(ctx context.Context, label, snapshot string, size int64, full objectstore.BackupRef) error {
	mc := b.s3.Client()
	begin := time.Now()
	if _, err := rawBackup(ctx, mc, b.s3.Bucket, "raw/backup.tar.zst", snapshot); err != nil {
		return err
	}
	raw := time.Since(begin)
	row(label, "raw tar | zstd -3 | upload", raw, size, 0)
	ref := objectstore.BackupRef{Cluster: "bench", Name: "stream", ID: "1"}
	begin = time.Now()
	if _, err := backup.Run(ctx, b.store, ref, backup.Owner{}, dirProducer{dir: snapshot}); err != nil {
		return err
	}
	ours := time.Since(begin)
	row(label, "ours: stream + verified upload", ours, size, raw.Seconds()/ours.Seconds())

	rawDir := filepath.Join(b.work, "raw-restore")
	must(os.MkdirAll(rawDir, 0o750))
	begin = time.Now()
	if err := rawRestore(ctx, mc, b.s3.Bucket, "raw/backup.tar.zst", rawDir); err != nil {
		return err
	}
	rawR := time.Since(begin)
	_ = os.RemoveAll(rawDir)
	row(label, "raw download | zstd -d | untar", rawR, size, 0)

	unpackDir := filepath.Join(b.work, "unpack")
	must(os.MkdirAll(unpackDir, 0o750))
	begin = time.Now()
	r, _, err := b.store.OpenBackup(ctx, ref)
	if err != nil {
		return err
	}
	err = archive.Unpack(r, unpackDir)
	r.Close()
	if err != nil {
		return err
	}
	unpack := time.Since(begin)
	_ = os.RemoveAll(unpackDir)
	row(label, "ours: verified download + unpack", unpack, size, rawR.Seconds()/unpack.Seconds())

	dataDir := filepath.Join(b.work, "restore", "data")
	begin = time.Now()
	if _, err := restore.Restore(ctx, restore.Config{Store: b.store, Ref: full, DataDir: dataDir,
		RunDir: filepath.Join(b.work, "restore", "run"), Mysqld: b.m}); err != nil {
		return err
	}
	restored := time.Since(begin)
	_ = os.RemoveAll(filepath.Join(b.work, "restore"))
	row(label, "ours: full restore (+ mysqld check)", restored, size, rawR.Seconds()/restored.Seconds())
	return nil
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

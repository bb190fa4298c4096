package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup/backuptest"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup/localmysqld"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/binlogarchive"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/mysqldtest"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
)

const (
	cluster        = "bench"
	backupUser     = "cnm_backup"
	backupPassword = "bench-pw"
)

func main() {
	duration := flag.Duration("duration", 30*time.Second, "how long the writer commits after the base backup")
	rounds := flag.Int("rounds", 1, "pairs of replays, alternating which goes first")
	flag.Parse()
	if err := run(context.Background(), *duration, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "bench/pitr:", err)
		os.Exit(1)
	}
}

// source is the archived server, its store and its base backup.
type source struct {
	srv    *mysqldtest.Server
	store  *objectstore.Client
	mysqld localmysqld.Command
	base   *objectstore.Metadata
}

func run(ctx context.Context, duration time.Duration, rounds int) error {
	src, cleanup, err := start(ctx)
	if err != nil {
		return err
	}
	defer cleanup()
	if err := src.writeArchived(ctx, duration); err != nil {
		return err
	}
	for r := range rounds {
		var ours, stock result
		var err error
		if r%2 == 0 {
			if ours, err = src.replayOurs(ctx); err == nil {
				stock, err = src.replayStock(ctx)
			}
		} else {
			if stock, err = src.replayStock(ctx); err == nil {
				ours, err = src.replayOurs(ctx)
			}
		}
		if err != nil {
			return err
		}
		if !ours.executed.Equal(stock.executed) {
			return fmt.Errorf("the two replays differ: %s and %s", ours.executed, stock.executed)
		}
		fmt.Printf("round %d: %d transactions, %d segments, %d bytes: pitr.Replay %s end to end; "+
			"stock mysqlbinlog | mysql %s (pipeline alone); speed ratio %.2f (target >= 0.9)\n",
			r+1, ours.transactions, ours.segments, ours.bytes, ours.took.Round(time.Millisecond),
			stock.took.Round(time.Millisecond), stock.took.Seconds()/ours.took.Seconds())
	}
	return nil
}

// result is one replay.
type result struct {
	took         time.Duration
	transactions uint64
	segments     int
	bytes        int64
	executed     gtid.Set
}

// start runs mysqld (with a table and the backup account), versitygw and a clone backup.
func start(ctx context.Context) (*source, func(), error) {
	var cleanups []func()
	cleanup := func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
	}
	fail := func(err error) (*source, func(), error) { cleanup(); return nil, nil, err }
	srv, err := mysqldtest.StartServer(ctx, mysqldtest.Config{})
	if err != nil {
		return fail(err)
	}
	cleanups = append(cleanups, func() { srv.Close() })
	dir, err := os.MkdirTemp("", "cnm-bench-s3-")
	if err != nil {
		return fail(err)
	}
	cleanups = append(cleanups, func() { os.RemoveAll(dir) })
	s3, err := s3test.StartServer(ctx, dir)
	if err != nil {
		return fail(err)
	}
	cleanups = append(cleanups, func() { s3.Close() })
	cfg, err := objectstore.ResolveConfig(&v1alpha1.ObjectStoreConfiguration{Bucket: s3.Bucket, Endpoint: s3.Endpoint,
		Region: s3.Region, ForcePathStyle: true}, objectstore.SecretValues{
		Credentials: objectstore.Credentials{AccessKeyID: s3.AccessKey, SecretAccessKey: s3.SecretKey}})
	if err != nil {
		return fail(err)
	}
	store, err := objectstore.New(cfg)
	if err != nil {
		return fail(err)
	}
	m, err := backuptest.Mysqld()
	if err != nil {
		return fail(err)
	}
	op, err := mysql.NewFactory().New(srv.MySQLConfig("root", "", ""))
	if err != nil {
		return fail(err)
	}
	defer op.Close()
	if err := op.CreateUsers(ctx, mysql.Users{Replication: mysql.Account{Name: "cnm_repl", Password: "repl-pw"},
		Backup: mysql.Account{Name: backupUser, Password: backupPassword}}); err != nil {
		return fail(err)
	}
	db, err := srv.OpenDB(ctx, "root", "", "")
	if err != nil {
		return fail(err)
	}
	defer db.Close()
	for _, stmt := range []string{"CREATE DATABASE app",
		"CREATE TABLE app.t (id BIGINT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(64), n INT, KEY (n))"} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return fail(err)
		}
	}
	scratch, err := backuptest.NewScratch(m)
	if err != nil {
		return fail(err)
	}
	cleanups = append(cleanups, func() { os.RemoveAll(scratch) })
	p, err := backup.NewCloneProducer(backup.CloneConfig{Mysqld: m, ScratchDir: scratch,
		Donor: backup.Donor{Host: srv.Host, Port: srv.Port, User: backupUser, Password: backupPassword,
			CAFile: srv.TLS.CAFile, CertFile: srv.TLS.ClientCertFile, KeyFile: srv.TLS.ClientKeyFile}})
	if err != nil {
		return fail(err)
	}
	md, err := backup.Run(ctx, store, objectstore.BackupRef{Cluster: cluster, Name: "base", ID: "1"}, backup.Owner{Namespace: "bench"}, p)
	if err != nil {
		return fail(err)
	}
	return &source{srv: srv, store: store, mysqld: m, base: md}, cleanup, nil
}

// writeArchived commits one-row transactions for d while the archiver runs, then waits until
// the archive holds everything.
func (s *source) writeArchived(ctx context.Context, d time.Duration) error {
	db, err := s.srv.OpenDB(ctx, "root", "", "")
	if err != nil {
		return err
	}
	defer db.Close()
	arch := &binlogarchive.Archiver{Server: binlogarchive.Server{DB: db}, Store: s.store, Cluster: cluster,
		BinlogDir: s.srv.DataDir, Role: func(context.Context) (binlogarchive.Role, error) {
			return binlogarchive.Role{Primary: true, Writable: true}, nil
		},
		ArchiveTimeout: func() time.Duration { return v1alpha1.DefaultArchiveTimeout }, KeepLocal: 0,
		Clock: clock.RealClock{}, Metrics: binlogarchive.NewMetrics(nil), Log: logr.Discard()}
	archCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { arch.Run(archCtx); close(done) }()
	end := time.Now().Add(d)
	for i := 0; time.Now().Before(end); i++ {
		stmt := "INSERT INTO app.t (v, n) VALUES (REPEAT('x', 64), ?)"
		if i%3 == 2 {
			stmt = "UPDATE app.t SET v = REPEAT('y', 64) WHERE n = ?"
		}
		if _, err := db.ExecContext(ctx, stmt, i/3); err != nil {
			stop()
			<-done
			return err
		}
	}
	stop()
	<-done
	if _, err := db.ExecContext(ctx, "FLUSH BINARY LOGS"); err != nil {
		return err
	}
	for deadline := time.Now().Add(time.Minute); ; {
		if _, err := arch.Pass(ctx); err != nil {
			return err
		}
		var executed string
		if err := db.QueryRowContext(ctx, "SELECT @@GLOBAL.gtid_executed").Scan(&executed); err != nil {
			return err
		}
		index, _, err := s.store.ReadIndex(ctx, cluster)
		if err != nil {
			return err
		}
		var archived gtid.Set
		for _, seg := range index.Segments {
			archived = gtid.Union(archived, gtid.MustParse(seg.GTIDRange))
		}
		if archived.Contains(gtid.MustParse(executed)) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the archive does not hold %s after a minute", executed)
		}
	}
}

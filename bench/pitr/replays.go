package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup/backuptest"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup/localmysqld"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/pitr"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/restore"
)

// restored restores the base backup into a new scratch directory and returns it.
func (s *source) restored(ctx context.Context) (string, error) {
	scratch, err := backuptest.NewScratch(s.mysqld)
	if err != nil {
		return "", err
	}
	_, err = restore.Restore(ctx, restore.Config{Store: s.store, Ref: s.base.Ref(), DataDir: filepath.Join(scratch, "data"),
		RunDir: filepath.Join(scratch, "restore-run"), Mysqld: s.mysqld})
	return scratch, err
}

// replayOurs times pitr.Replay to the latest archived transaction, end to end.
func (s *source) replayOurs(ctx context.Context) (result, error) {
	scratch, err := s.restored(ctx)
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(scratch)
	begin := time.Now()
	res, err := pitr.Replay(ctx, pitr.Config{Store: s.store, Cluster: cluster, Base: s.base, Target: pitr.Target{Kind: pitr.Latest},
		DataDir: filepath.Join(scratch, "data"), ScratchDir: filepath.Join(scratch, "segments"),
		RunDir: filepath.Join(scratch, "replay-run"), Mysqld: s.mysqld})
	if err != nil {
		return result{}, err
	}
	return result{took: time.Since(begin), transactions: res.Applied.Count(), segments: res.Segments, bytes: res.Bytes,
		executed: res.Executed}, nil
}

// replayStock downloads the same segments, starts a server like the replay's, and times
// `mysqlbinlog <segments> | mysql` alone.
func (s *source) replayStock(ctx context.Context) (result, error) {
	scratch, err := s.restored(ctx)
	if err != nil {
		return result{}, err
	}
	defer os.RemoveAll(scratch)
	index, _, err := s.store.ReadIndex(ctx, cluster)
	if err != nil {
		return result{}, err
	}
	plan, err := pitr.PlanReplay(index, gtid.MustParse(s.base.GTIDExecuted), pitr.Target{Kind: pitr.Latest})
	if err != nil {
		return result{}, err
	}
	var files []string
	for i, seg := range plan.Segments {
		path := filepath.Join(scratch, fmt.Sprintf("segment.%06d", i+1))
		f, err := os.Create(path)
		if err != nil {
			return result{}, err
		}
		err = s.store.DownloadSegment(ctx, cluster, seg, f)
		f.Close()
		if err != nil {
			return result{}, err
		}
		files = append(files, s.mysqld.Path(path))
	}
	srv, err := localmysqld.Start(ctx, s.mysqld, localmysqld.Options{DataDir: filepath.Join(scratch, "data"),
		RunDir: filepath.Join(scratch, "stock-run"), Args: []string{"--skip-grant-tables", "--skip-log-bin",
			"--gtid-mode=ON", "--enforce-gtid-consistency=ON"}})
	if err != nil {
		return result{}, err
	}
	defer srv.Shutdown()
	decode := strings.Join(s.mysqld.Tool("/usr/bin/mysqlbinlog", files...), " ")
	load := strings.Join(s.mysqld.Tool("/usr/bin/mysql", "--user=root", "--socket="+s.mysqld.Path(srv.SocketPath())), " ")
	begin := time.Now()
	out, err := exec.CommandContext(ctx, "bash", "-o", "pipefail", "-c", decode+" | "+load).CombinedOutput()
	took := time.Since(begin)
	if err != nil {
		return result{}, fmt.Errorf("mysqlbinlog | mysql: %w: %s", err, out)
	}
	var executed string
	if err := srv.DB().QueryRowContext(ctx, "SELECT @@GLOBAL.gtid_executed").Scan(&executed); err != nil {
		return result{}, err
	}
	return result{took: took, executed: gtid.MustParse(executed)}, nil
}

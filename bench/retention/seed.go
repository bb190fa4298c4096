package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

const (
	storePath = "bench"
	cluster   = "bench"
	// span is the time the seeded backups and segments cover, twice the window, so that about
	// half of each is past it.
	span   = 60 * 24 * time.Hour
	window = 30 * 24 * time.Hour
	// backupDuration is how long each seeded backup ran.
	backupDuration = 10 * time.Minute
)

// inventory says when each seeded backup stopped and each segment's last event happened.
type inventory struct {
	now      time.Time
	backups  int
	segments int
}

func (inv inventory) backupRef(i int) objectstore.BackupRef {
	return objectstore.BackupRef{Cluster: cluster, Name: fmt.Sprintf("daily-%05d", i), ID: "x7k2q"}
}

// stoppedAt is when backup i stopped: 0 is the newest.
func (inv inventory) stoppedAt(i int) time.Time {
	return inv.now.Add(-time.Minute - time.Duration(i)*(span/time.Duration(inv.backups)))
}

func (inv inventory) segmentName(j int) string { return fmt.Sprintf("binlog.%07d", j) }

// lastEvent is the last event time of segment j: 0 is the newest.
func (inv inventory) lastEvent(j int) time.Time {
	return inv.now.Add(-time.Duration(j) * (span / time.Duration(max(inv.segments, 1))))
}

// seed writes every backup (archive, then metadata.json) and segment object with workers
// concurrent PUTs straight to the server, then the index.
func seed(ctx context.Context, mc *minio.Client, c *objectstore.Client, bucket string, inv inventory, workers int) error {
	jobs := make(chan func() error)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for job := range jobs {
				if err := job(); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		}()
	}
	for i := range inv.backups {
		jobs <- func() error { return putBackup(ctx, mc, bucket, inv, i) }
	}
	for j := range inv.segments {
		jobs <- func() error {
			return put(ctx, mc, bucket, objectstore.BinlogKey(storePath, cluster, inv.segmentName(j)), segmentData(j))
		}
	}
	close(jobs)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
	}
	if _, err := c.WriteIndex(ctx, cluster, buildIndex(inv), ""); err != nil {
		return fmt.Errorf("writing the index: %w", err)
	}
	return nil
}

func putBackup(ctx context.Context, mc *minio.Client, bucket string, inv inventory, i int) error {
	ref := inv.backupRef(i)
	archive := bytes.Repeat([]byte(ref.Name), 64)
	sum := sha256.Sum256(archive)
	stopped := inv.stoppedAt(i)
	md := &objectstore.Metadata{SchemaVersion: objectstore.MetadataSchemaVersion, Cluster: ref.Cluster,
		BackupName: ref.Name, BackupID: ref.ID, Method: "clone", Format: objectstore.FormatTar,
		Compression: objectstore.CompressionZstd, Size: int64(len(archive)), SHA256: hex.EncodeToString(sum[:]),
		GTIDExecuted: "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-42", ServerVersion: "9.7.0",
		StartedAt: stopped.Add(-backupDuration), StoppedAt: stopped}
	doc, err := md.Encode()
	if err != nil {
		return err
	}
	if err := put(ctx, mc, bucket, objectstore.ArchiveKey(storePath, ref, "tar.zst"), archive); err != nil {
		return err
	}
	return put(ctx, mc, bucket, objectstore.MetadataKey(storePath, ref), doc)
}

func put(ctx context.Context, mc *minio.Client, bucket, key string, data []byte) error {
	_, err := mc.PutObject(ctx, bucket, key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{})
	if err != nil {
		return fmt.Errorf("writing %s: %w", key, err)
	}
	return nil
}

func segmentData(j int) []byte {
	return fmt.Appendf(nil, "binlog segment %07d ......................", j)
}

func buildIndex(inv inventory) *objectstore.Index {
	index := objectstore.NewIndex()
	index.Segments = make([]objectstore.Segment, inv.segments)
	for k := range inv.segments {
		j := inv.segments - 1 - k // the archiver appends, oldest first
		data := segmentData(j)
		sum := sha256.Sum256(data)
		last := inv.lastEvent(j)
		index.Segments[k] = objectstore.Segment{Name: inv.segmentName(j), Size: int64(len(data)),
			FirstEventTime: last.Add(-time.Minute), LastEventTime: last,
			GTIDRange: "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-42", SHA256: hex.EncodeToString(sum[:])}
	}
	return index
}

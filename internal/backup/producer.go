package backup

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

// Coordinates locate a snapshot in the source's history.
type Coordinates struct {
	GTIDExecuted   string
	BinlogFile     string
	BinlogPosition int64
	ServerVersion  string
}

// Producer makes one physical snapshot stream of an instance.
type Producer interface {
	// Method is the Backup method the producer implements.
	Method() v1alpha1.BackupMethod
	// Format and Compression describe the stream (objectstore.Format*, objectstore.Compression*).
	Format() string
	Compression() string
	// Start takes the snapshot, or starts taking it, and returns its stream. The caller reads
	// Archive to io.EOF and then calls Wait, or calls Abort on any failure.
	Start(ctx context.Context) (*Stream, error)
}

// Stream is a snapshot being produced.
type Stream struct {
	// Archive is the snapshot's bytes; it returns the producer's error instead of io.EOF when the
	// producer fails.
	Archive io.Reader

	pr     *io.PipeReader
	cancel context.CancelCauseFunc
	done   chan struct{}
	result objectstore.ProducerResult
	err    error
}

// errAborted is the cause of a stream stopped by its consumer.
var errAborted = errors.New("backup stream aborted by its consumer")

// startStream runs produce in a goroutine writing into a pipe, counting and hashing what it
// writes. coords is called after produce returned without error; both run under ctx, cancelled by
// Abort.
func startStream(ctx context.Context, started time.Time, produce func(ctx context.Context, w io.Writer) (Coordinates, error)) *Stream {
	ctx, cancel := context.WithCancelCause(ctx)
	pr, pw := io.Pipe()
	s := &Stream{Archive: pr, pr: pr, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		w := &hashingWriter{w: pw, h: sha256.New()}
		coords, err := produce(ctx, w)
		if err == nil {
			err = context.Cause(ctx) // a producer that ignored cancellation still fails
		}
		if err != nil {
			s.err = err
			pw.CloseWithError(err)
			return
		}
		s.result = objectstore.ProducerResult{
			Size: w.n, SHA256: hex.EncodeToString(w.h.Sum(nil)),
			GTIDExecuted: coords.GTIDExecuted, BinlogFile: coords.BinlogFile,
			BinlogPosition: coords.BinlogPosition, ServerVersion: coords.ServerVersion,
			StartedAt: started, StoppedAt: time.Now(),
		}
		pw.Close()
	}()
	return s
}

// Wait waits for the producer to exit and returns what it wrote.
func (s *Stream) Wait() (objectstore.ProducerResult, error) {
	<-s.done
	if s.err != nil {
		return objectstore.ProducerResult{}, fmt.Errorf("producing the snapshot stream: %w", s.err)
	}
	return s.result, nil
}

// Abort stops the producer and waits for it to exit.
func (s *Stream) Abort() {
	s.cancel(errAborted)
	s.pr.CloseWithError(errAborted)
	<-s.done
}

// hashingWriter counts and hashes what it passes on.
type hashingWriter struct {
	w io.Writer
	h hash.Hash
	n int64
}

func (h *hashingWriter) Write(p []byte) (int, error) {
	n, err := h.w.Write(p)
	h.h.Write(p[:n])
	h.n += int64(n)
	return n, err
}

// Owner is the Cluster incarnation a backup belongs to, recorded in its metadata.json; empty
// fields record nothing.
type Owner struct {
	Namespace, ClusterUID string
}

// Run takes one backup with p and uploads it as ref, recording owner in its metadata.json. It returns the metadata written to the
// object store only when the upload is complete and verified; on any failure the producer is
// stopped and the store holds no metadata.json for ref.
func Run(ctx context.Context, store objectstore.Store, ref objectstore.BackupRef, owner Owner, p Producer) (*objectstore.Metadata, error) {
	if _, err := store.ReadMetadata(ctx, ref); err == nil {
		return nil, fmt.Errorf("backup %s/%s/%s: %w", ref.Cluster, ref.Name, ref.ID, objectstore.ErrAlreadyExists)
	} else if !errors.Is(err, objectstore.ErrNotFound) {
		return nil, fmt.Errorf("checking the object store before the backup: %w", err)
	}
	stream, err := p.Start(ctx)
	if err != nil {
		return nil, fmt.Errorf("starting the %s backup: %w", p.Method(), err)
	}
	md, err := store.UploadBackup(ctx, objectstore.UploadRequest{
		Backup: ref, Namespace: owner.Namespace, ClusterUID: owner.ClusterUID, Method: string(p.Method()), Format: p.Format(), Compression: p.Compression(),
		Archive: stream.Archive, Finish: stream.Wait,
	})
	if err != nil {
		stream.Abort()
		return nil, err
	}
	return md, nil
}

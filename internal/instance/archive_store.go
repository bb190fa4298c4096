package instance

import (
	"context"
	"fmt"
	"io"
	"reflect"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

// archiveStoreRecheck is how often the archiver's object store configuration (the Cluster's
// spec.backup.objectStore and its Secrets) is read again while the archiver uses it.
const archiveStoreRecheck = 30 * time.Second

// archiveStoreRetry is how soon it is read again after a failure (a request the store refused or
// could not answer, a configuration that could not be read or opened): the archiver passes every
// second, and an outage must not become several API requests a second.
const archiveStoreRetry = 10 * time.Second

// archiveStoreSource is the binlog archiver's object store, resolved when the archiver first
// needs it and again when its configuration changes. Only the primary's archiver asks for it: the
// object store's Secrets are readable by the target primary's ServiceAccount alone
// (specs.BuildPrimaryRole), so a replica standing by never reads them. A changed spec or Secret
// (rotated credentials, a new endpoint) is picked up within archiveStoreRecheck, and within
// archiveStoreRetry after a failed request, without a restart.
type archiveStoreSource struct {
	// resolve reads the Cluster's object store configuration and its Secrets.
	resolve func(ctx context.Context) (objectstore.Config, error)
	// open builds a client from a configuration (objectstore.New).
	open  func(objectstore.Config) (*objectstore.Client, error)
	clock clock.Clock

	mu      sync.Mutex
	cfg     objectstore.Config
	client  *objectstore.Client
	checked time.Time // the last read of the configuration, successful or not
	failed  bool      // a request, or the last read, failed since
	lastErr error     // why the last read failed; nil after one that succeeded
}

// current returns the client for the configuration as it is now. It reads the configuration again
// when the last read is older than archiveStoreRecheck, or archiveStoreRetry after a failure;
// meanwhile it returns the client it has (or the last read's error when it has none).
func (s *archiveStoreSource) current(ctx context.Context) (*objectstore.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	wait := archiveStoreRecheck
	if s.failed {
		wait = archiveStoreRetry
	}
	if !s.checked.IsZero() && now.Sub(s.checked) < wait {
		if s.client == nil || s.lastErr != nil {
			return nil, s.lastErr
		}
		return s.client, nil
	}
	client, err := s.read(ctx)
	if err != nil && ctx.Err() != nil {
		// The caller's own context ended the read: nothing is learnt, the next caller reads.
		return nil, err
	}
	s.checked = now
	s.failed, s.lastErr = err != nil, err
	if err != nil {
		// A configuration that cannot be read or opened is not replaced by the one before it.
		s.client = nil
		return nil, err
	}
	return client, nil
}

// read reads the configuration, and opens a client when it changed.
func (s *archiveStoreSource) read(ctx context.Context) (*objectstore.Client, error) {
	cfg, err := s.resolve(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the object store configuration: %w", err)
	}
	if s.client != nil && reflect.DeepEqual(cfg, s.cfg) {
		return s.client, nil
	}
	client, err := s.open(cfg)
	if err != nil {
		return nil, fmt.Errorf("opening the object store: %w", err)
	}
	s.cfg, s.client = cfg, client
	return client, nil
}

// done records the outcome of a request: after a failure the configuration is read again.
func (s *archiveStoreSource) done(err error) {
	if err == nil {
		return
	}
	s.mu.Lock()
	s.failed = true
	s.mu.Unlock()
}

func (s *archiveStoreSource) ReadIndex(ctx context.Context, cluster string) (*objectstore.Index, string, error) {
	c, err := s.current(ctx)
	if err != nil {
		return nil, "", err
	}
	index, etag, err := c.ReadIndex(ctx, cluster)
	s.done(err)
	return index, etag, err
}

func (s *archiveStoreSource) UpdateIndex(ctx context.Context, cluster string, mutate func(*objectstore.Index) error) (*objectstore.Index, error) {
	c, err := s.current(ctx)
	if err != nil {
		return nil, err
	}
	index, err := c.UpdateIndex(ctx, cluster, mutate)
	s.done(err)
	return index, err
}

func (s *archiveStoreSource) PutSegment(ctx context.Context, cluster, name string, r io.Reader, size int64) error {
	c, err := s.current(ctx)
	if err != nil {
		return err
	}
	err = c.PutSegment(ctx, cluster, name, r, size)
	s.done(err)
	return err
}

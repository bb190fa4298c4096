package main

import (
	"context"
	"sync"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/retentionpass"
)

// phase is the span of one kind of store call during the pass: from the first call's start to
// the last one's end.
type phase struct {
	Calls int
	First time.Time
	Last  time.Time
}

// timedStore records the span of each kind of store call, to tell where a pass spends its time.
type timedStore struct {
	retentionpass.Store
	mu     sync.Mutex
	phases map[string]*phase
	order  []string
}

func (s *timedStore) time(name string) func() {
	begin := time.Now()
	return func() {
		end := time.Now()
		s.mu.Lock()
		defer s.mu.Unlock()
		p, ok := s.phases[name]
		if !ok {
			p = &phase{First: begin}
			s.phases[name] = p
			s.order = append(s.order, name)
		}
		p.Calls++
		p.Last = end
	}
}

// spans returns each phase's name, calls and span, in the order the phases began.
func (s *timedStore) spans() []phaseSpan {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]phaseSpan, 0, len(s.order))
	for _, n := range s.order {
		p := s.phases[n]
		out = append(out, phaseSpan{Name: n, Calls: p.Calls, Span: p.Last.Sub(p.First)})
	}
	return out
}

// phaseSpan is one line of the pass's time breakdown.
type phaseSpan struct {
	Name  string
	Calls int
	Span  time.Duration
}

func (s *timedStore) ListBackups(ctx context.Context, cluster string) ([]objectstore.BackupEntry, error) {
	defer s.time("list backup directories")()
	return s.Store.ListBackups(ctx, cluster)
}

func (s *timedStore) ReadMetadata(ctx context.Context, ref objectstore.BackupRef) (*objectstore.Metadata, error) {
	defer s.time("read metadata.json")()
	return s.Store.ReadMetadata(ctx, ref)
}

func (s *timedStore) ReadIndex(ctx context.Context, cluster string) (*objectstore.Index, string, error) {
	defer s.time("read the index")()
	return s.Store.ReadIndex(ctx, cluster)
}

func (s *timedStore) DeleteBackupDirs(ctx context.Context, entries []objectstore.BackupEntry) ([]objectstore.BackupRef, error) {
	defer s.time("delete backup directories")()
	return s.Store.DeleteBackupDirs(ctx, entries)
}

func (s *timedStore) ListBackupUploads(ctx context.Context, cluster string) ([]objectstore.Upload, error) {
	defer s.time("list multipart uploads")()
	return s.Store.ListBackupUploads(ctx, cluster)
}

func (s *timedStore) DeleteSegments(ctx context.Context, cluster string, names []string) ([]string, error) {
	defer s.time("delete segments")()
	return s.Store.DeleteSegments(ctx, cluster, names)
}

func (s *timedStore) UpdateIndex(ctx context.Context, cluster string, mutate func(*objectstore.Index) error) (*objectstore.Index, error) {
	defer s.time("rewrite the index")()
	return s.Store.UpdateIndex(ctx, cluster, mutate)
}

package instance

import (
	"context"
	"errors"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

// TestArchiveStoreSource: the archiver's object store is read when first needed and again when
// its configuration may have changed; one row per rule.
func TestArchiveStoreSource(t *testing.T) {
	cfg := func(key string) objectstore.Config {
		return objectstore.Config{Bucket: "b", Endpoint: "127.0.0.1:1", Credentials: objectstore.Credentials{AccessKeyID: "id", SecretAccessKey: key}}
	}
	for _, tc := range []struct {
		rule string
		// steps: after advancing the clock, the configuration resolve returns (or fails), and
		// whether the previous request failed; want: resolves and opens so far.
		steps []step
	}{
		{"nothing is read before the first request (a replica standing by never asks)", nil},
		{"the first request reads the configuration and opens a client", []step{{key: "k1", resolves: 1, opens: 1}}},
		{"within the recheck period the client is reused without reading", []step{{key: "k1", resolves: 1, opens: 1},
			{advance: archiveStoreRecheck - time.Second, key: "k2", resolves: 1, opens: 1}}},
		{"after the recheck period it is read again, and an unchanged one keeps the client", []step{{key: "k1", resolves: 1, opens: 1},
			{advance: archiveStoreRecheck, key: "k1", resolves: 2, opens: 1}}},
		{"a changed Secret or spec opens a new client", []step{{key: "k1", resolves: 1, opens: 1},
			{advance: archiveStoreRecheck, key: "k2", resolves: 2, opens: 2, wantKey: "k2"}}},
		{"after a failed request the client is kept, and the configuration read again archiveStoreRetry after the last read", []step{
			{key: "k1", resolves: 1, opens: 1, fail: true},
			{advance: time.Second, key: "k2", resolves: 1, opens: 1, wantKey: "k1"},
			{advance: archiveStoreRetry, key: "k2", resolves: 2, opens: 2, wantKey: "k2"}}},
		{"a configuration that cannot be read is an error until it is read again, archiveStoreRetry later", []step{
			{unreadable: true, resolves: 1, opens: 0, wantErr: true},
			{advance: time.Second, key: "k1", resolves: 1, opens: 0, wantErr: true},
			{advance: archiveStoreRetry, key: "k1", resolves: 2, opens: 1}}},
		{"a configuration that cannot be opened does not leave the previous client in use", []step{
			{key: "k1", resolves: 1, opens: 1},
			{advance: archiveStoreRecheck, key: "bad", resolves: 2, opens: 2, wantErr: true},
			{advance: time.Second, key: "k1", resolves: 2, opens: 2, wantErr: true},
			{advance: archiveStoreRetry, key: "k1", resolves: 3, opens: 3, wantKey: "k1"}}},
	} {
		clk := clocktesting.NewFakeClock(time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC))
		var resolves, opens int
		key, unreadable := "", false
		s := &archiveStoreSource{clock: clk,
			resolve: func(context.Context) (objectstore.Config, error) {
				resolves++
				if unreadable {
					return objectstore.Config{}, errors.New("secrets \"store\" is forbidden")
				}
				return cfg(key), nil
			},
			open: func(c objectstore.Config) (*objectstore.Client, error) {
				opens++
				if c.Credentials.SecretAccessKey == "bad" {
					return nil, errors.New("the endpoint CA does not parse")
				}
				return objectstore.New(c)
			},
		}
		for i, st := range tc.steps {
			clk.Step(st.advance)
			key, unreadable = st.key, st.unreadable
			c, err := s.current(context.Background())
			if (err != nil) != st.wantErr {
				t.Fatalf("%s, step %d: error %v, want one: %v", tc.rule, i, err, st.wantErr)
			}
			if resolves != st.resolves || opens != st.opens {
				t.Errorf("%s, step %d: %d reads and %d clients, want %d and %d", tc.rule, i, resolves, opens, st.resolves, st.opens)
			}
			if st.wantKey != "" && (c == nil || s.cfg.Credentials.SecretAccessKey != st.wantKey) {
				t.Errorf("%s, step %d: the client uses key %q, want %q", tc.rule, i, s.cfg.Credentials.SecretAccessKey, st.wantKey)
			}
			if st.fail {
				s.done(errors.New("403 Forbidden"))
			}
		}
		if len(tc.steps) == 0 && resolves != 0 {
			t.Errorf("%s: %d reads", tc.rule, resolves)
		}
	}
}

type step struct {
	advance          time.Duration
	key              string
	unreadable, fail bool
	resolves, opens  int
	wantKey          string
	wantErr          bool
}

package mysqldtest

import (
	"database/sql"
	"errors"
	"sync"
	"testing"
)

// Options configures Start.
type Options struct {
	Count     int      // number of servers; 1 when zero
	ExtraArgs []string // appended to every server's mysqld command line
}

// Start starts opts.Count servers in parallel, sharing one CA, and registers their Close with
// t.Cleanup (run in parallel). It fails the test if any of them does not start.
func Start(t testing.TB, opts Options) []*Server {
	t.Helper()
	n := max(opts.Count, 1)
	ca, err := NewCA()
	if err != nil {
		t.Fatalf("mysqldtest: %v", err)
	}
	servers := make([]*Server, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			servers[i], errs[i] = StartServer(t.Context(), Config{CA: ca, ExtraArgs: opts.ExtraArgs})
		})
	}
	wg.Wait()
	t.Cleanup(func() { closeAll(t, servers) })
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("mysqldtest: %v", err)
	}
	for _, s := range servers {
		t.Logf("mysqld server_id=%d on %s, directory %s", s.ServerID, s.Addr(), s.Dir)
	}
	return servers
}

// closeAll closes the servers in parallel: a clean shutdown takes one to three seconds.
func closeAll(t testing.TB, servers []*Server) {
	var wg sync.WaitGroup
	for _, s := range servers {
		if s == nil {
			continue
		}
		wg.Go(func() {
			if err := s.Close(); err != nil {
				t.Errorf("mysqldtest: closing %s: %v", s.Addr(), err)
			}
		})
	}
	wg.Wait()
}

// RootDB returns a connection pool for root over TCP and TLS, closed when the test ends.
func (s *Server) RootDB(t testing.TB) *sql.DB {
	t.Helper()
	return s.DB(t, "root", "", "")
}

// DB returns a connection pool for user over TCP and TLS, closed when the test ends.
func (s *Server) DB(t testing.TB, user, password, db string) *sql.DB {
	t.Helper()
	conn, err := s.OpenDB(t.Context(), user, password, db)
	if err != nil {
		t.Fatalf("mysqldtest: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

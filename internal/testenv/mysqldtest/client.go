package mysqldtest

import (
	"context"
	"crypto/tls"
	"database/sql"
	"fmt"
	"path/filepath"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/proc"
)

const (
	dialTimeout  = 5 * time.Second
	pollInterval = 100 * time.Millisecond
)

// registerTLS registers the client TLS configuration of s with the MySQL driver, under a name
// unique to the server.
func (s *Server) registerTLS() error {
	cfg, err := clientTLSConfig(s.TLS, s.Host)
	if err != nil {
		return err
	}
	s.tlsName = "cnm-mysqldtest-" + filepath.Base(s.Dir)
	if err := mysql.RegisterTLSConfig(s.tlsName, cfg); err != nil {
		return fmt.Errorf("registering the TLS configuration: %w", err)
	}
	return nil
}

func (s *Server) deregisterTLS() {
	if s.tlsName != "" {
		mysql.DeregisterTLSConfig(s.tlsName)
	}
}

// TLSConfig returns a client TLS configuration that trusts only the test CA, verifies that the
// server certificate names Host, and presents a client certificate signed by the CA. DSN uses
// the same configuration, registered with the driver under TLSConfigName.
func (s *Server) TLSConfig() *tls.Config {
	cfg, err := clientTLSConfig(s.TLS, s.Host)
	if err != nil {
		panic(fmt.Sprintf("mysqldtest: TLS material of %s: %v", s.Addr(), err)) // checked at start
	}
	return cfg
}

// TLSConfigName returns the name under which TLSConfig is registered with the driver, for the
// tls= DSN parameter.
func (s *Server) TLSConfigName() string { return s.tlsName }

// MySQLConfig returns a driver configuration for user over TCP and verified TLS.
func (s *Server) MySQLConfig(user, password, db string) *mysql.Config {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.DBName = user, password, db
	cfg.Net, cfg.Addr = "tcp", s.Addr()
	cfg.TLSConfig = s.tlsName
	cfg.Timeout = dialTimeout
	return cfg
}

// DSN returns a data source name for user over TCP and verified TLS.
func (s *Server) DSN(user, password, db string) string {
	return s.MySQLConfig(user, password, db).FormatDSN()
}

// OpenDB opens a connection pool for user and checks that it connects.
func (s *Server) OpenDB(ctx context.Context, user, password, db string) (*sql.DB, error) {
	conn, err := sql.Open("mysql", s.DSN(user, password, db))
	if err != nil {
		return nil, fmt.Errorf("opening %s as %s: %w", s.Addr(), user, err)
	}
	if err := conn.PingContext(ctx); err != nil {
		conn.Close()
		return nil, fmt.Errorf("connecting to %s as %s: %w", s.Addr(), user, err)
	}
	return conn, nil
}

// waitReady polls until root can connect, the start timeout passes, or mysqld exits.
func (s *Server) waitReady(ctx context.Context, p *proc.Child) error {
	ctx, cancel := context.WithTimeout(ctx, s.startTimeout)
	defer cancel()
	conn, err := sql.Open("mysql", s.DSN("root", "", ""))
	if err != nil {
		return fmt.Errorf("opening a connection pool: %w", err)
	}
	defer conn.Close()
	ticker := time.NewTicker(pollInterval)
	defer ticker.Stop()
	for {
		pingCtx, cancelPing := context.WithTimeout(ctx, dialTimeout)
		err := conn.PingContext(pingCtx)
		cancelPing()
		if err == nil {
			return nil
		}
		select {
		case <-p.Done():
			return fmt.Errorf("mysqld exited before accepting connections (%v)", p.Err())
		case <-ctx.Done():
			return fmt.Errorf("not accepting connections after %s: %w (last attempt: %w)",
				s.startTimeout, ctx.Err(), err)
		case <-ticker.C:
		}
	}
}

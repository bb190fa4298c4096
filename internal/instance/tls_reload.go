package instance

import (
	"context"
	"crypto/sha256"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/tlsfiles"
)

// mysqldTLSCheckInterval is how often the server certificate files are compared with what
// mysqld last loaded.
const mysqldTLSCheckInterval = 15 * time.Second

// tlsReloader is the part of mysql.Operator the reload needs.
type tlsReloader interface {
	ReloadTLS(ctx context.Context) error
}

// MysqldTLS keeps mysqld serving the current server certificate: mysqld reads ssl_ca, ssl_cert
// and ssl_key only at start, so whenever the files' content differs from what it last loaded,
// ALTER INSTANCE RELOAD TLS makes it read them again. The replication and clone client
// certificates need nothing: mysqld reads SOURCE_SSL_* and clone_ssl_* files at each connection.
type MysqldTLS struct {
	Files *tlsfiles.Loader
	Op    tlsReloader
	Clock clock.Clock
	Log   logr.Logger
	// Interval between checks; 0 means mysqldTLSCheckInterval.
	Interval time.Duration

	loaded [sha256.Size]byte
}

// Check reloads mysqld's certificates when the files changed since the last reload (always at
// the first check: mysqld may have started before the files last changed). It reports whether
// it reloaded.
func (r *MysqldTLS) Check(ctx context.Context) (bool, error) {
	m, err := r.Files.Current()
	if err != nil {
		return false, err
	}
	if m.Hash == r.loaded {
		return false, nil
	}
	if err := r.Op.ReloadTLS(ctx); err != nil {
		return false, err
	}
	r.loaded = m.Hash
	return true, nil
}

// Run checks until ctx ends, logging reloads and failures (mysqld keeps its previous
// certificates when a reload fails; the next check tries again).
func (r *MysqldTLS) Run(ctx context.Context) {
	interval := r.Interval
	if interval <= 0 {
		interval = mysqldTLSCheckInterval
	}
	for {
		reloaded, err := r.Check(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			r.Log.Error(err, "reloading mysqld's certificates failed; it keeps the previous ones")
		case reloaded:
			r.Log.Info("mysqld reloaded its certificates", "serial", serialOf(r.Files))
		}
		select {
		case <-ctx.Done():
			return
		case <-r.Clock.After(interval):
		}
	}
}

func serialOf(l *tlsfiles.Loader) string {
	m, err := l.Current()
	if err != nil || m.Certificate.Leaf == nil {
		return ""
	}
	return m.Certificate.Leaf.SerialNumber.Text(16)
}

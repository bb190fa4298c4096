package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	driver "github.com/go-sql-driver/mysql"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
)

// ErrTimeout is returned when a wait ends because its timeout passed.
var ErrTimeout = errors.New("timed out")

// Operator performs SQL operations on one mysqld. Implementations are safe for concurrent use.
type Operator interface {
	// Status reads the server's role, GTID, replication and semi-sync state.
	Status(ctx context.Context) (*Status, error)
	// SetReadOnly turns super_read_only (and read_only) on, or both off.
	SetReadOnly(ctx context.Context, on bool) error
	// SetOfflineMode turns offline_mode on or off: on, the server ends the sessions of accounts
	// without CONNECTION_ADMIN or SUPER and refuses their new connections.
	SetOfflineMode(ctx context.Context, on bool) error
	// SetSemiSyncSourceEnabled turns rpl_semi_sync_source_enabled on or off. Off, the commits
	// waiting for an acknowledgement complete without one.
	SetSemiSyncSourceEnabled(ctx context.Context, on bool) error
	// KillClientSessions ends every client session (KILL CONNECTION), keeping the server's own
	// threads, the replication dump threads and the instance manager's root@localhost sessions;
	// it returns how many it ended.
	KillClientSessions(ctx context.Context) (int, error)
	// EndSessionsWhileReadOnly ends the client sessions KillClientSessions ends, except those of
	// the accounts keep names, provided the server is super_read_only when it looks; writable
	// says it was not (nothing ended).
	EndSessionsWhileReadOnly(ctx context.Context, keep []string) (ended int, writable bool, err error)
	// CreateUsers creates or updates the operator's accounts; the server must be writable.
	CreateUsers(ctx context.Context, users Users) error
	// CreateApplication creates the application database and its owner if missing; the server
	// must be writable.
	CreateApplication(ctx context.Context, app Application) error
	// LiteralApplicationGrant replaces an existing owner's wildcard grant on the application
	// database (an older build's) with the literal one; true when it changed something.
	LiteralApplicationGrant(ctx context.Context, app Application) (bool, error)
	// BootstrapAccounts creates the application database and owner (app not nil), then the
	// operator's accounts, on a first primary, without binary-logging them (see its doc).
	BootstrapAccounts(ctx context.Context, app *Application, users Users) error
	// ConfigureReplication stops replication and points it at src with GTID auto-positioning
	// over TLS. It does not start replication.
	ConfigureReplication(ctx context.Context, src Source) error
	// HeartbeatPeriod reads the channel's source heartbeat period.
	HeartbeatPeriod(ctx context.Context) (time.Duration, error)
	// StartReplication starts the replication threads.
	StartReplication(ctx context.Context) error
	// StopReplication stops the replication threads; a server that does not replicate is fine.
	// An applier left inside a transaction the stopped receiver got only in part is ended at
	// once, not after the server's own 60 s wait (needs performance_schema, on by default).
	StopReplication(ctx context.Context) error
	// StartApplier starts the applier (SQL) thread only.
	StartApplier(ctx context.Context) error
	// StopReceiver stops the receiver (IO) thread only, so that the applier can drain what was
	// received while nothing new arrives.
	StopReceiver(ctx context.Context) error
	// ResetReplication stops replication and forgets its configuration (RESET REPLICA ALL).
	ResetReplication(ctx context.Context) error
	// RepairReplicaMetadata discards the relay logs and the applier's position, keeping the
	// source (RESET REPLICA): the way out of ErrReplicaMetadata. What was received and not yet
	// applied is lost from this server; with GTID auto-positioning the source sends it again.
	RepairReplicaMetadata(ctx context.Context) error
	// WaitForGTIDSet waits until the server has executed set, or returns ErrTimeout.
	WaitForGTIDSet(ctx context.Context, set gtid.Set, timeout time.Duration) error
	// InstallSemiSyncPlugins installs the source and replica semi-sync plugins if missing.
	InstallSemiSyncPlugins(ctx context.Context) error
	// ApplySemiSync sets the semi-sync variables at runtime; a WaitForReplicaCount of 0 leaves
	// the count as it is, only on a server whose source side is on and stays on.
	ApplySemiSync(ctx context.Context, s SemiSyncSettings) error
	// SetSemiSyncWaitForReplicaCount sets the acknowledgement count alone (at least 1), leaving
	// the switches and the timeout as they are.
	SetSemiSyncWaitForReplicaCount(ctx context.Context, n int) error
	// SetSemiSyncReplicaEnabled switches rpl_semi_sync_replica_enabled alone, restarting the
	// receiver thread when it changes so that the change takes effect; the replica plugin must be
	// installed to switch it on.
	SetSemiSyncReplicaEnabled(ctx context.Context, on bool) error
	// Clone replaces the server's data with a copy of donor's. On success mysqld shuts itself
	// down: the caller must start it again.
	Clone(ctx context.Context, donor Donor) error
	// ReloadTLS makes the server read its certificate files again (ALTER INSTANCE RELOAD TLS).
	ReloadTLS(ctx context.Context) error
	// SetGlobal sets a system variable at runtime (SET GLOBAL), value written as an option file
	// would give it (globalAssignment); DefaultValue resets it. ClassifyGlobalError reads its error.
	SetGlobal(ctx context.Context, name, value string) error
	// GlobalValue reads @@GLOBAL.name as text ("" for NULL).
	GlobalValue(ctx context.Context, name string) (string, error)
	// ServerMetrics reads the server figures the instance manager exports (SHOW GLOBAL STATUS
	// counters, max_connections, the binary logs' size).
	ServerMetrics(ctx context.Context) (*ServerMetrics, error)
	// Close releases the connections.
	Close() error
}

// Factory opens Operators.
type Factory interface {
	// New returns an Operator connecting with cfg (address, user, TLS). It does not connect yet.
	New(cfg *driver.Config) (Operator, error)
	// NewLocalAdmin returns an Operator connecting as the local administrator (OpenLocalAdmin).
	NewLocalAdmin(cfg *driver.Config) (Operator, error)
	// NewKeptLocalAdmin is NewLocalAdmin on one session, kept open for as long as it works. An
	// account statement (CREATE USER, ALTER USER, GRANT) whose commit waits for a semi-sync
	// acknowledgement holds the server's account cache, so no new session logs in until that
	// wait ends: whatever must release it (the semi-sync fallback) keeps its session.
	NewKeptLocalAdmin(cfg *driver.Config) (Operator, error)
}

// NewFactory returns the Factory that talks to real servers.
func NewFactory() Factory { return factory{} }

type factory struct{}

func (factory) New(cfg *driver.Config) (Operator, error) {
	cfg = cfg.Clone()
	// Client-side interpolation quotes arguments for the server's SQL mode and lets statements
	// that cannot be prepared (CREATE USER, CHANGE REPLICATION SOURCE, CLONE) take arguments.
	cfg.InterpolateParams = true
	connector, err := driver.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("preparing the connection to %s: %w", cfg.Addr, err)
	}
	return newOperator(sql.OpenDB(connector), cfg.Addr), nil
}

func (factory) NewLocalAdmin(cfg *driver.Config) (Operator, error) {
	cfg = cfg.Clone()
	cfg.InterpolateParams = true
	db, err := OpenLocalAdmin(cfg)
	if err != nil {
		return nil, err
	}
	return newOperator(db, cfg.Addr), nil
}

func (f factory) NewKeptLocalAdmin(cfg *driver.Config) (Operator, error) {
	op, err := f.NewLocalAdmin(cfg)
	if err != nil {
		return nil, err
	}
	db := op.(*operator).db
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxIdleTime(0)
	db.SetConnMaxLifetime(0)
	return op, nil
}

func newOperator(db *sql.DB, addr string) *operator {
	db.SetMaxOpenConns(4)
	db.SetMaxIdleConns(2)
	db.SetConnMaxIdleTime(time.Minute)
	return &operator{db: db, addr: addr}
}

// operator is the Operator of a real server.
type operator struct {
	db   *sql.DB
	addr string
}

func (o *operator) Close() error { return o.db.Close() }

// execer is a pool (*sql.DB) or one session (*sql.Conn).
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// exec runs one statement; what describes it in errors, since the statement may hold a secret.
func (o *operator) exec(ctx context.Context, what, stmt string, args ...any) error {
	return o.execOn(ctx, o.db, what, stmt, args...)
}

// execOn is exec on e.
func (o *operator) execOn(ctx context.Context, e execer, what, stmt string, args ...any) error {
	if _, err := e.ExecContext(ctx, stmt, args...); err != nil {
		return fmt.Errorf("%s on %s: %w", what, o.addr, err)
	}
	return nil
}

func (o *operator) SetReadOnly(ctx context.Context, on bool) error {
	if on {
		// super_read_only=ON implies read_only=ON.
		return o.exec(ctx, "turning super_read_only on", "SET GLOBAL super_read_only = ON")
	}
	// read_only=OFF implies super_read_only=OFF.
	return o.exec(ctx, "turning read_only off", "SET GLOBAL read_only = OFF")
}

func (o *operator) SetOfflineMode(ctx context.Context, on bool) error {
	return o.exec(ctx, "switching offline_mode", "SET GLOBAL offline_mode = ?", boolInt(on))
}

func (o *operator) SetSemiSyncSourceEnabled(ctx context.Context, on bool) error {
	return o.exec(ctx, "switching the semi-sync source", "SET GLOBAL rpl_semi_sync_source_enabled = ?", boolInt(on))
}

// mysqlErrorNumber returns the server error number in err, 0 if there is none.
func mysqlErrorNumber(err error) uint16 {
	var me *driver.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

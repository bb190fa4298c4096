package mysql

import (
	"context"
	"crypto/tls"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	driver "github.com/go-sql-driver/mysql"
)

// ErrUnreachable marks a Fence that could not open a session on the server: nothing answered at
// the address, the TLS handshake failed (what answered is not the server the certificate names),
// or the server did not answer in time. The server was not touched; a caller that must know it
// stopped writing relies on something else (the Pod killed, the semi-sync acknowledgements it can
// no longer collect).
var ErrUnreachable = errors.New("the server could not be reached to fence it")

// ErrFenceRefused marks a Fence the server itself refused: it answered, so it runs and may take
// writes, but it did not let the fence account in (access denied: the account missing or its
// password changed, the host blocked, ...). Nothing was done. Unlike ErrUnreachable it is no
// reason to go on as if the server were gone.
var ErrFenceRefused = errors.New("the server answered but refused the fence session")

// FenceResult is what Fence did.
type FenceResult struct {
	// SessionsEnded is how many client sessions it ended (KILL CONNECTION).
	SessionsEnded int
	// ReleasedAckWaits is how many commits were waiting for a semi-sync acknowledgement when it
	// switched the semi-sync source off: they complete on this server only, their clients gone,
	// so none of them was acknowledged to anyone.
	ReleasedAckWaits int
}

// fenceLockWaitTimeout bounds SET GLOBAL super_read_only, which waits for the global read lock:
// a session holding LOCK TABLES or a long statement holds it back. Past it the fence fails and
// is tried again; the sessions are already ended by then, so a second try rarely waits.
const fenceLockWaitTimeout = 2

// Fence stops every write on a server from outside its Pod, without its instance manager, which
// may be frozen or starved while mysqld runs. cfg reaches the administrative interface
// (admin_address/admin_port, which max_connections does not limit) as the fence account
// (SYSTEM_VARIABLES_ADMIN, CONNECTION_ADMIN, SERVICE_CONNECTION_ADMIN, PROCESS). In this order:
//
//  1. offline_mode=ON: no new session of an ordinary account is accepted;
//  2. KILL CONNECTION of every client session, the instance manager's own included: a client
//     whose commit waits for a semi-sync acknowledgement loses its socket, so it never reads OK;
//  3. rpl_semi_sync_source_enabled=OFF: the commits still waiting (KILL does not end a wait)
//     complete, on this server only;
//  4. super_read_only=ON, with a short session lock_wait_timeout;
//  5. the client sessions are ended again: only accounts with CONNECTION_ADMIN can have come in.
//
// The server is left offline, read-only and with the semi-sync source off; its Pod is deleted
// next, and a new start applies its role afresh. Every step is idempotent, so a fence that failed
// half-way is simply run again. An error wrapping ErrUnreachable means no session could be
// opened and nothing was done; one wrapping ErrFenceRefused that the server answered and refused
// the session, nothing done either.
func Fence(ctx context.Context, cfg *driver.Config) (FenceResult, error) {
	cfg = cfg.Clone()
	cfg.InterpolateParams = true
	connector, err := driver.NewConnector(cfg)
	if err != nil {
		return FenceResult{}, fmt.Errorf("preparing the connection to %s: %w", cfg.Addr, err)
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err == nil {
		err = conn.PingContext(ctx)
	}
	if err != nil {
		if conn != nil {
			conn.Close()
		}
		var refused *driver.MySQLError
		if errors.As(err, &refused) {
			return FenceResult{}, fmt.Errorf("%w: %s: %w", ErrFenceRefused, cfg.Addr, err)
		}
		return FenceResult{}, fmt.Errorf("%w: %s: %w", ErrUnreachable, cfg.Addr, err)
	}
	defer conn.Close()
	return fenceOn(ctx, conn, cfg.Addr)
}

func fenceOn(ctx context.Context, conn *sql.Conn, addr string) (FenceResult, error) {
	var res FenceResult
	exec := func(what, stmt string, args ...any) error {
		if _, err := conn.ExecContext(ctx, stmt, args...); err != nil {
			return fmt.Errorf("%s on %s: %w", what, addr, err)
		}
		return nil
	}
	var self int64
	if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&self); err != nil {
		return res, fmt.Errorf("reading the connection id on %s: %w", addr, err)
	}
	if err := exec("setting the session lock_wait_timeout", "SET SESSION lock_wait_timeout = ?", fenceLockWaitTimeout); err != nil {
		return res, err
	}
	if err := exec("turning offline_mode on", "SET GLOBAL offline_mode = ON"); err != nil {
		return res, err
	}
	n, err := endSessions(ctx, conn, self, fencedSession)
	res.SessionsEnded += n
	if err != nil {
		return res, fmt.Errorf("ending the client sessions of %s: %w", addr, err)
	}
	waiting, present, err := ackWaiters(ctx, conn)
	if err != nil {
		return res, fmt.Errorf("reading the commits waiting for acknowledgements on %s: %w", addr, err)
	}
	if present {
		if err := exec("switching the semi-sync source off", "SET GLOBAL rpl_semi_sync_source_enabled = OFF"); err != nil {
			return res, err
		}
		res.ReleasedAckWaits = waiting
	}
	if err := exec("turning super_read_only on", "SET GLOBAL super_read_only = ON"); err != nil {
		return res, err
	}
	n, err = endSessions(ctx, conn, self, fencedSession)
	res.SessionsEnded += n
	if err != nil {
		return res, fmt.Errorf("ending the client sessions of %s: %w", addr, err)
	}
	return res, nil
}

// fencedSession selects the sessions Fence ends: every client session (ClientSession), and the
// instance manager's root@localhost ones too, since the manager is presumed unable to act.
func fencedSession(user, host, command string) bool {
	return ClientSession(user, host, command) || (user == "root" && host == "localhost" && command != "Killed")
}

// ackWaiters returns how many commits wait for a semi-sync acknowledgement, and whether the
// semi-sync source plugin is installed at all.
func ackWaiters(ctx context.Context, conn *sql.Conn) (int, bool, error) {
	var name, value string
	err := conn.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_source_wait_sessions'").Scan(&name, &value)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	n, err := strconv.Atoi(value)
	if err != nil {
		return 0, true, fmt.Errorf("Rpl_semi_sync_source_wait_sessions %q: %w", value, err)
	}
	return n, true, nil
}

// FenceDialTimeout bounds the connection and the login of a fence: a server that does not answer
// within it is taken as unreachable.
const FenceDialTimeout = 2 * time.Second

// FenceConfig returns the driver configuration of a fence of the server at host:port (its
// administrative interface), as user with password, over tlsConfig (which presents the client
// certificate the fence account requires and verifies the server's).
func FenceConfig(host string, port int, user, password string, tlsConfig *tls.Config) *driver.Config {
	cfg := driver.NewConfig()
	cfg.User, cfg.Passwd = user, password
	cfg.Net, cfg.Addr = "tcp", net.JoinHostPort(host, strconv.Itoa(port))
	cfg.TLS = tlsConfig
	cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = FenceDialTimeout, 5*time.Second, 5*time.Second
	return cfg
}

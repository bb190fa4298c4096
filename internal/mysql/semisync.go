package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// The semi-sync plugins, by the names MySQL 8.0.26+ gives them.
var semiSyncPlugins = []struct{ name, library string }{
	{"rpl_semi_sync_source", "semisync_source.so"},
	{"rpl_semi_sync_replica", "semisync_replica.so"},
}

// SemiSyncSettings are the runtime semi-sync variables of one server.
type SemiSyncSettings struct {
	// SourceEnabled: this server waits for replica acknowledgements (only on the primary).
	SourceEnabled bool
	// ReplicaEnabled: this server acknowledges what it receives (on every replica).
	ReplicaEnabled bool
	// WaitForReplicaCount is rpl_semi_sync_source_wait_for_replica_count, at least 1; 0 leaves
	// the server's count as it is (the role pass on a primary whose source side stays on: the
	// count is then the operator's, set by SetSemiSyncWaitForReplicaCount).
	WaitForReplicaCount int
	// Timeout is rpl_semi_sync_source_timeout: how long a commit waits before mysqld itself
	// falls back to asynchronous replication. At least one millisecond. The instance manager
	// always applies SourceTimeoutNever: it carries out the fallback itself (see
	// internal/instance/semisync_fallback.go); shorter values are for tests of mysqld itself.
	Timeout time.Duration
}

// SourceTimeoutNever is the largest rpl_semi_sync_source_timeout (2^32-1 ms, about 49.7 days):
// mysqld never releases a waiting commit by itself. Lowering the timeout later does not release
// a commit already waiting (its deadline is computed when its wait begins), and ending its session
// does not end its wait either; only rpl_semi_sync_source_enabled = OFF, or a
// rpl_semi_sync_source_wait_for_replica_count already met, does.
const SourceTimeoutNever = 4294967295 * time.Millisecond

// The wait point and the no-replica behaviour the operator owns whenever semi-sync is on:
// AFTER_SYNC (a commit is visible to other sessions only once a replica has it) and
// wait_no_replica ON (the source keeps waiting when fewer replicas than the count are connected).
const (
	SourceWaitPoint     = "AFTER_SYNC"
	SourceWaitNoReplica = true
)

var errSemiSync = errors.New("invalid semi-sync settings")

// InstallSemiSyncPlugins installs the plugins that are not active yet. INSTALL PLUGIN records
// them in mysql.plugin, so they load at every start and clones inherit them. super_read_only
// refuses INSTALL PLUGIN, so on a read-only server it is lifted for the statement only, read_only
// staying on (ordinary clients still cannot write), on one session with the binary log off so
// that no transaction of this server's own can appear in its GTID set.
func (o *operator) InstallSemiSyncPlugins(ctx context.Context) error {
	var missing []int
	for i, p := range semiSyncPlugins {
		var n int
		err := o.db.QueryRowContext(ctx,
			"SELECT COUNT(*) FROM information_schema.plugins WHERE plugin_name = ? AND plugin_status = 'ACTIVE'",
			p.name).Scan(&n)
		if err != nil {
			return fmt.Errorf("looking up plugin %s on %s: %w", p.name, o.addr, err)
		}
		if n == 0 {
			missing = append(missing, i)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	err := o.unloggedSession(ctx, func(conn *sql.Conn) error {
		var superReadOnly bool
		if err := conn.QueryRowContext(ctx, "SELECT @@GLOBAL.super_read_only").Scan(&superReadOnly); err != nil {
			return fmt.Errorf("reading super_read_only on %s: %w", o.addr, err)
		}
		if superReadOnly {
			if _, err := conn.ExecContext(ctx, "SET GLOBAL super_read_only = OFF"); err != nil {
				return fmt.Errorf("lifting super_read_only on %s: %w", o.addr, err)
			}
		}
		err := installPlugins(ctx, conn, missing)
		if superReadOnly {
			if _, rerr := conn.ExecContext(ctx, "SET GLOBAL super_read_only = ON"); rerr != nil {
				err = errors.Join(err, fmt.Errorf("restoring super_read_only: %w", rerr))
			}
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("installing the semi-sync plugins on %s: %w", o.addr, err)
	}
	return nil
}

func installPlugins(ctx context.Context, conn *sql.Conn, which []int) error {
	for _, i := range which {
		p := semiSyncPlugins[i]
		if _, err := conn.ExecContext(ctx, "INSTALL PLUGIN "+p.name+" SONAME '"+p.library+"'"); err != nil {
			return fmt.Errorf("INSTALL PLUGIN %s: %w", p.name, err)
		}
	}
	return nil
}

// ApplySemiSync sets the variables, the count only when not 0 (which it refuses unless the
// source side is on and stays on). The count, the timeout, the wait point (SourceWaitPoint) and
// wait_no_replica (SourceWaitNoReplica) are set before the source side is switched, so that no
// commit ever waits under other settings. A replica registers as a semi-sync client only when its
// receiver thread connects, so when ReplicaEnabled changes on a running replica, the receiver
// thread is restarted.
func (o *operator) ApplySemiSync(ctx context.Context, s SemiSyncSettings) error {
	if s.WaitForReplicaCount < 0 || s.Timeout < time.Millisecond {
		return fmt.Errorf("%w: wait_for_replica_count %d, timeout %s", errSemiSync, s.WaitForReplicaCount, s.Timeout)
	}
	before, err := o.semiSyncStatus(ctx)
	if err != nil {
		return err
	}
	if !before.SourcePluginInstalled || !before.ReplicaPluginInstalled {
		return fmt.Errorf("%w: the semi-sync plugins are not installed on %s", errSemiSync, o.addr)
	}
	if s.WaitForReplicaCount == 0 && !(s.SourceEnabled && before.SourceEnabled) {
		// The caller read the source side on, and it is off now (mysqld restarted with its
		// defaults, or a fence released the waiting commits): the count on the server is not one
		// anybody chose. Nothing is written; the caller's next read decides again.
		return fmt.Errorf("%w: the acknowledgement count can be left as it is only while the source side stays on, and it is off on %s",
			errSemiSync, o.addr)
	}
	if s.WaitForReplicaCount > 0 {
		if err := o.SetSemiSyncWaitForReplicaCount(ctx, s.WaitForReplicaCount); err != nil {
			return err
		}
	}
	stmts := []struct {
		what, stmt string
		arg        any
	}{
		{"setting the semi-sync timeout", "SET GLOBAL rpl_semi_sync_source_timeout = ?", s.Timeout.Milliseconds()},
		{"setting the semi-sync wait point", "SET GLOBAL rpl_semi_sync_source_wait_point = ?", SourceWaitPoint},
		{"setting semi-sync to wait without replicas", "SET GLOBAL rpl_semi_sync_source_wait_no_replica = ?", boolInt(SourceWaitNoReplica)},
		{"switching the semi-sync source", "SET GLOBAL rpl_semi_sync_source_enabled = ?", boolInt(s.SourceEnabled)},
		{"switching the semi-sync replica", "SET GLOBAL rpl_semi_sync_replica_enabled = ?", boolInt(s.ReplicaEnabled)},
	}
	for _, st := range stmts {
		if err := o.exec(ctx, st.what, st.stmt, st.arg); err != nil {
			return err
		}
	}
	if before.ReplicaEnabled == s.ReplicaEnabled {
		return nil
	}
	return o.restartReceiver(ctx)
}

// SetSemiSyncWaitForReplicaCount sets rpl_semi_sync_source_wait_for_replica_count alone.
func (o *operator) SetSemiSyncWaitForReplicaCount(ctx context.Context, n int) error {
	if n < 1 {
		return fmt.Errorf("%w: wait_for_replica_count %d", errSemiSync, n)
	}
	return o.exec(ctx, "setting the acknowledgement count", "SET GLOBAL rpl_semi_sync_source_wait_for_replica_count = ?", n)
}

// SetSemiSyncReplicaEnabled switches rpl_semi_sync_replica_enabled alone; see Operator. Off
// without the plugin is already off.
func (o *operator) SetSemiSyncReplicaEnabled(ctx context.Context, on bool) error {
	before, err := o.semiSyncStatus(ctx)
	if err != nil {
		return err
	}
	if !before.ReplicaPluginInstalled {
		if !on {
			return nil
		}
		return fmt.Errorf("%w: the semi-sync replica plugin is not installed on %s", errSemiSync, o.addr)
	}
	if before.ReplicaEnabled == on {
		return nil
	}
	if err := o.exec(ctx, "switching the semi-sync replica", "SET GLOBAL rpl_semi_sync_replica_enabled = ?", boolInt(on)); err != nil {
		return err
	}
	return o.restartReceiver(ctx)
}

// restartReceiver restarts the replication receiver thread if it runs.
func (o *operator) restartReceiver(ctx context.Context) error {
	r, err := o.replicationStatus(ctx)
	if err != nil || r == nil || r.IORunning == "No" {
		return err
	}
	if err := o.exec(ctx, "stopping the receiver thread", "STOP REPLICA IO_THREAD"); err != nil {
		return err
	}
	return o.exec(ctx, "starting the receiver thread", "START REPLICA IO_THREAD")
}

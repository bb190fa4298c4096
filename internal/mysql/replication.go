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

// Source is where a replica streams from, and the TLS material it presents. File paths are the
// ones mysqld sees (inside its root filesystem or container).
type Source struct {
	Host     string
	Port     int
	User     string
	Password string // secret: sent to the server only
	CAFile   string
	CertFile string
	KeyFile  string
	// VerifyServerCert checks that the source's certificate names Host.
	VerifyServerCert bool
	// ConnectRetry is the wait between reconnection attempts; one second when zero.
	ConnectRetry time.Duration
}

var errSource = errors.New("invalid replication source")

func (o *operator) ConfigureReplication(ctx context.Context, src Source) error {
	if src.Host == "" || src.Port == 0 || src.User == "" || src.CAFile == "" || src.CertFile == "" ||
		src.KeyFile == "" {
		return fmt.Errorf("%w: host, port, user and TLS files are required", errSource)
	}
	retry := max(int(src.ConnectRetry/time.Second), 1)
	if err := o.StopReplication(ctx); err != nil {
		return err
	}
	return replicaMetadataError(o.exec(ctx, "configuring replication from "+src.Host,
		"CHANGE REPLICATION SOURCE TO SOURCE_HOST = ?, SOURCE_PORT = ?, SOURCE_USER = ?, "+
			"SOURCE_PASSWORD = ?, SOURCE_AUTO_POSITION = 1, SOURCE_SSL = 1, SOURCE_SSL_CA = ?, "+
			"SOURCE_SSL_CERT = ?, SOURCE_SSL_KEY = ?, SOURCE_SSL_VERIFY_SERVER_CERT = ?, "+
			"SOURCE_CONNECT_RETRY = ?, SOURCE_RETRY_COUNT = 86400, SOURCE_HEARTBEAT_PERIOD = ?",
		src.Host, src.Port, src.User, src.Password, src.CAFile, src.CertFile, src.KeyFile,
		boolInt(src.VerifyServerCert), retry, SourceHeartbeatPeriod.Seconds()))
}

// SourceHeartbeatPeriod is how often an idle source sends its replicas a heartbeat, set on the
// channel explicitly: by default it is half of replica_net_timeout as it was when the channel was
// configured. A channel configured by an earlier build (under the server's 60 s default) keeps a
// 30 s period until it is configured again (the next switchover or failover repoints it): with
// replica_net_timeout 5 s its receiver reconnects after 5 s without events meanwhile.
const SourceHeartbeatPeriod = 2 * time.Second

func (o *operator) HeartbeatPeriod(ctx context.Context) (time.Duration, error) {
	var secs float64
	err := o.db.QueryRowContext(ctx, "SELECT HEARTBEAT_INTERVAL FROM performance_schema.replication_connection_configuration "+
		"WHERE CHANNEL_NAME = ''").Scan(&secs)
	if err != nil {
		return 0, fmt.Errorf("reading the heartbeat period on %s: %w", o.addr, err)
	}
	return time.Duration(secs * float64(time.Second)), nil
}

func (o *operator) StartReplication(ctx context.Context) error {
	return replicaMetadataError(o.exec(ctx, "starting replication", "START REPLICA"))
}

// StopReplication ends an applier stuck in a transaction it will never receive the end of, its
// receiver being stopped already (endUnfinishedApply: a failover stopped it), then stops both
// threads. Nothing else is issued before it: with a STOP REPLICA IO_THREAD first, 2 of 41
// switchovers on the local node left an old primary (its channel removed by RESET REPLICA ALL)
// with a relay log its receiver could not write and an applier that failed for good. That the
// extra statement caused it is not proven; it is not needed outside the failover's case.
func (o *operator) StopReplication(ctx context.Context) error {
	// STOP REPLICA on a server without a channel is a warning, not an error.
	if err := o.endUnfinishedApply(ctx); err != nil {
		return err
	}
	return o.exec(ctx, "stopping replication", "STOP REPLICA")
}

// endUnfinishedApply ends the multi-threaded applier with KILL when, the receiver being stopped,
// it is inside a transaction that was not received whole (a receiver stopped in its middle, as a
// failover stops the replicas' receivers): its end never comes, and STOP REPLICA would wait for
// it 60 s (the server's own limit) before stopping the applier just the same. KILL stops it at
// once; the unfinished transaction is rolled back, and the next source sends it whole (GTID
// auto-position). An applier inside a transaction received whole is left to finish it. The
// applier's thread is found through performance_schema.threads: with performance_schema off it
// is not ended, and STOP REPLICA waits as before.
func (o *operator) endUnfinishedApply(ctx context.Context) error {
	var processing, received string
	var id sql.NullInt64
	err := o.db.QueryRowContext(ctx, "SELECT c.PROCESSING_TRANSACTION, s.RECEIVED_TRANSACTION_SET, t.PROCESSLIST_ID "+
		"FROM performance_schema.replication_applier_status_by_coordinator c "+
		"JOIN performance_schema.replication_connection_status s ON s.CHANNEL_NAME = c.CHANNEL_NAME "+
		"JOIN performance_schema.threads t ON t.THREAD_ID = c.THREAD_ID "+
		"WHERE c.CHANNEL_NAME = '' AND c.SERVICE_STATE = 'ON' AND s.SERVICE_STATE = 'OFF'").Scan(&processing, &received, &id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil // no channel, no multi-threaded applier running, or a receiver still running
	}
	if err != nil {
		return fmt.Errorf("reading the applier's transaction: %w", err)
	}
	if processing == "" || !id.Valid {
		return nil
	}
	tx, err := gtid.Parse(processing)
	if err != nil {
		return fmt.Errorf("reading the applier's transaction %q: %w", processing, err)
	}
	set, err := gtid.Parse(received)
	if err != nil {
		return fmt.Errorf("reading the received transactions: %w", err)
	}
	if set.Contains(tx) {
		return nil
	}
	_, err = o.db.ExecContext(ctx, fmt.Sprintf("KILL %d", id.Int64))
	var me *driver.MySQLError
	if errors.As(err, &me) && me.Number == erNoSuchThread {
		return nil // it ended meanwhile
	}
	if err != nil {
		return fmt.Errorf("ending the applier inside %s, a transaction received in part: %w", processing, err)
	}
	// A STOP REPLICA that reaches the applier before it has taken the KILL in would still wait.
	return o.waitApplierStopped(ctx)
}

// waitApplierStopped polls until the applier thread no longer runs, for at most applierStopWait.
func (o *operator) waitApplierStopped(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, applierStopWait)
	defer cancel()
	for {
		var state string
		err := o.db.QueryRowContext(ctx, "SELECT SERVICE_STATE FROM performance_schema.replication_applier_status_by_coordinator WHERE CHANNEL_NAME = ''").Scan(&state)
		if errors.Is(err, sql.ErrNoRows) || (err == nil && state != "ON") {
			return nil
		}
		if err != nil {
			return fmt.Errorf("waiting for the applier to stop: %w", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the applier to stop: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// applierStopWait bounds the wait for an applier ended with KILL to stop.
const applierStopWait = 10 * time.Second

// erNoSuchThread: KILL of a thread that is gone.
const erNoSuchThread = 1094

func (o *operator) StartApplier(ctx context.Context) error {
	return o.exec(ctx, "starting the applier thread", "START REPLICA SQL_THREAD")
}

func (o *operator) StopReceiver(ctx context.Context) error {
	return o.exec(ctx, "stopping the receiver thread", "STOP REPLICA IO_THREAD")
}

// ErrReplicaMetadata: the replication channel's metadata cannot be initialized (errors 1201, 1871
// and 1872: a relay log index naming a file that is gone, an applier position naming no relay
// log).
// Measured on the local node, 1 switchover in 10: an old primary whose channel a promotion had
// removed with RESET REPLICA ALL moments before was left so, refusing CHANGE REPLICATION SOURCE
// and START REPLICA until a RESET REPLICA (RepairReplicaMetadata).
var ErrReplicaMetadata = errors.New("the replication channel's metadata cannot be initialized")

// replicaMetadataError wraps err with ErrReplicaMetadata when the server says so.
func replicaMetadataError(err error) error {
	switch mysqlErrorNumber(err) {
	// ER_MASTER_INFO ("Could not initialize connection metadata structure", what CHANGE REPLICATION
	// SOURCE answered), ER_REPLICA_CM_INIT_REPOSITORY, ER_REPLICA_AM_INIT_REPOSITORY (START REPLICA).
	case 1201, 1871, 1872:
		return fmt.Errorf("%w: %w", ErrReplicaMetadata, err)
	}
	return err
}

func (o *operator) RepairReplicaMetadata(ctx context.Context) error {
	return o.exec(ctx, "discarding the relay logs", "RESET REPLICA")
}

func (o *operator) ResetReplication(ctx context.Context) error {
	if err := o.StopReplication(ctx); err != nil {
		return err
	}
	return o.exec(ctx, "resetting replication", "RESET REPLICA ALL")
}

// WaitForGTIDSet waits with WAIT_FOR_EXECUTED_GTID_SET, which also returns as soon as the set is
// already executed. The context's deadline, if earlier, ends the wait with the context's error.
func (o *operator) WaitForGTIDSet(ctx context.Context, set gtid.Set, timeout time.Duration) error {
	var res int
	err := o.db.QueryRowContext(ctx, "SELECT WAIT_FOR_EXECUTED_GTID_SET(?, ?)",
		set.String(), timeout.Seconds()).Scan(&res)
	if err != nil {
		return fmt.Errorf("waiting for the applier on %s: %w", o.addr, err)
	}
	if res != 0 {
		return fmt.Errorf("waiting %s for the applier on %s: %w", timeout, o.addr, ErrTimeout)
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

package mysql

import (
	"context"
	"errors"
	"fmt"
	"time"

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
	return o.exec(ctx, "configuring replication from "+src.Host,
		"CHANGE REPLICATION SOURCE TO SOURCE_HOST = ?, SOURCE_PORT = ?, SOURCE_USER = ?, "+
			"SOURCE_PASSWORD = ?, SOURCE_AUTO_POSITION = 1, SOURCE_SSL = 1, SOURCE_SSL_CA = ?, "+
			"SOURCE_SSL_CERT = ?, SOURCE_SSL_KEY = ?, SOURCE_SSL_VERIFY_SERVER_CERT = ?, "+
			"SOURCE_CONNECT_RETRY = ?, SOURCE_RETRY_COUNT = 86400",
		src.Host, src.Port, src.User, src.Password, src.CAFile, src.CertFile, src.KeyFile,
		boolInt(src.VerifyServerCert), retry)
}

func (o *operator) StartReplication(ctx context.Context) error {
	return o.exec(ctx, "starting replication", "START REPLICA")
}

func (o *operator) StopReplication(ctx context.Context) error {
	// STOP REPLICA on a server without a channel is a warning, not an error.
	return o.exec(ctx, "stopping replication", "STOP REPLICA")
}

func (o *operator) StartApplier(ctx context.Context) error {
	return o.exec(ctx, "starting the applier thread", "START REPLICA SQL_THREAD")
}

func (o *operator) StopReceiver(ctx context.Context) error {
	return o.exec(ctx, "stopping the receiver thread", "STOP REPLICA IO_THREAD")
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

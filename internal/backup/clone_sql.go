package backup

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backup/localmysqld"
)

// cloneInto runs CLONE INSTANCE ... DATA DIRECTORY on the recipient. internal/mysql's Clone
// replaces the recipient's own data and stops it (for new replicas); a backup wants a separate
// directory, hence these few statements here.
// Errors never carry the statements, which hold the password.
func cloneInto(ctx context.Context, db *sql.DB, d Donor, mysqld localmysqld.Command, dir string) error {
	hostPort := net.JoinHostPort(d.Host, strconv.Itoa(d.Port))
	for _, st := range []struct{ what, stmt, arg string }{
		{"allowing the clone donor", "SET GLOBAL clone_valid_donor_list = ?", hostPort},
		{"setting the clone CA", "SET GLOBAL clone_ssl_ca = ?", mysqld.Path(d.CAFile)},
		{"setting the clone certificate", "SET GLOBAL clone_ssl_cert = ?", mysqld.Path(d.CertFile)},
		{"setting the clone key", "SET GLOBAL clone_ssl_key = ?", mysqld.Path(d.KeyFile)},
	} {
		if _, err := db.ExecContext(ctx, st.stmt, st.arg); err != nil {
			return fmt.Errorf("%s: %w", st.what, err)
		}
	}
	if _, err := db.ExecContext(ctx, "CLONE INSTANCE FROM ?@?:? IDENTIFIED BY ? DATA DIRECTORY = ? REQUIRE SSL",
		d.User, d.Host, d.Port, d.Password, mysqld.Path(dir)); err != nil {
		return fmt.Errorf("cloning %s as %s: %w", hostPort, d.User, err)
	}
	return nil
}

// readCloneStatus reads the coordinates of the clone from a server started on the cloned data, and
// checks them against its gtid_executed.
func readCloneStatus(ctx context.Context, db *sql.DB) (Coordinates, error) {
	var state, binlogFile, gtidSet, version string
	var errNo int
	var binlogPos int64
	err := db.QueryRowContext(ctx, `SELECT STATE, ERROR_NO, COALESCE(BINLOG_FILE, ''),
		COALESCE(BINLOG_POSITION, 0), COALESCE(GTID_EXECUTED, ''), @@version
		FROM performance_schema.clone_status`).Scan(&state, &errNo, &binlogFile, &binlogPos, &gtidSet, &version)
	if err != nil {
		return Coordinates{}, fmt.Errorf("reading performance_schema.clone_status: %w", err)
	}
	if state != "Completed" || errNo != 0 {
		return Coordinates{}, fmt.Errorf("clone_status says %s (error %d)", state, errNo)
	}
	var executed string
	if err := db.QueryRowContext(ctx, "SELECT @@GLOBAL.gtid_executed").Scan(&executed); err != nil {
		return Coordinates{}, fmt.Errorf("reading gtid_executed: %w", err)
	}
	if normalizeGTIDSet(executed) != normalizeGTIDSet(gtidSet) {
		return Coordinates{}, fmt.Errorf("clone_status records GTID set %q, the copy starts with %q", gtidSet, executed)
	}
	return Coordinates{
		GTIDExecuted:   normalizeGTIDSet(gtidSet),
		BinlogFile:     binlogFile,
		BinlogPosition: binlogPos,
		// Clone requires donor and recipient to run the same version.
		ServerVersion: version,
	}, nil
}

// normalizeGTIDSet removes the newlines MySQL puts after the commas of a long GTID set.
func normalizeGTIDSet(s string) string {
	return strings.Join(strings.Fields(s), "")
}

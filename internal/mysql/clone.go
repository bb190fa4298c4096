package mysql

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
)

// Donor is the server a clone copies from, and the TLS material the recipient presents to it.
// File paths are the ones the recipient mysqld sees.
type Donor struct {
	Host     string
	Port     int
	User     string
	Password string // secret: sent to the server only
	CAFile   string
	CertFile string
	KeyFile  string
}

// erClonePostRestart-style outcomes: the clone is complete but mysqld could not restart itself
// because no supervisor (mysqld_safe, systemd) runs it. It has shut down; the caller restarts it.
const erCloneNoSupervisor = 3707

var errDonor = errors.New("invalid clone donor")

// Clone runs CLONE INSTANCE over TLS. The recipient (this server) must have the same plugins as
// the donor; its data directory is replaced, it keeps its server_uuid and takes the donor's
// gtid_executed. The recipient must hold no data worth keeping: Clone is for new instances and
// for a human's deliberate recovery, never an automatic repair of a diverged one. mysqld stops when the clone finishes: Clone returns nil then, and the
// connections of this Operator fail until the caller has started mysqld again.
func (o *operator) Clone(ctx context.Context, d Donor) error {
	if d.Host == "" || d.Port == 0 || d.User == "" || d.CAFile == "" || d.CertFile == "" || d.KeyFile == "" {
		return fmt.Errorf("%w: host, port, user and TLS files are required", errDonor)
	}
	hostPort := net.JoinHostPort(d.Host, strconv.Itoa(d.Port))
	for _, st := range []struct{ what, stmt, arg string }{
		{"allowing the clone donor", "SET GLOBAL clone_valid_donor_list = ?", hostPort},
		{"setting the clone CA", "SET GLOBAL clone_ssl_ca = ?", d.CAFile},
		{"setting the clone certificate", "SET GLOBAL clone_ssl_cert = ?", d.CertFile},
		{"setting the clone key", "SET GLOBAL clone_ssl_key = ?", d.KeyFile},
	} {
		if err := o.exec(ctx, st.what, st.stmt, st.arg); err != nil {
			return err
		}
	}
	// super_read_only refuses CLONE; read_only stays on, so ordinary clients still cannot write,
	// and the cloned data directory starts read-only again from my.cnf.
	if err := o.exec(ctx, "lifting super_read_only to clone", "SET GLOBAL super_read_only = OFF"); err != nil {
		return err
	}
	if err := o.cloneInstance(ctx, d); err != nil {
		if rerr := o.exec(ctx, "restoring super_read_only", "SET GLOBAL super_read_only = ON"); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return fmt.Errorf("cloning %s from %s: %w", o.addr, hostPort, err)
	}
	return nil
}

func (o *operator) cloneInstance(ctx context.Context, d Donor) error {
	// One connection: the server drops it when it shuts down, and the pool must not retry.
	conn, err := o.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("connecting: %w", err)
	}
	defer conn.Close()
	_, err = conn.ExecContext(ctx, "CLONE INSTANCE FROM ?@?:? IDENTIFIED BY ? REQUIRE SSL",
		d.User, d.Host, d.Port, d.Password)
	if err != nil && mysqlErrorNumber(err) != erCloneNoSupervisor {
		return err
	}
	return nil
}

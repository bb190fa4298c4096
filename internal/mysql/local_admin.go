package mysql

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"fmt"

	driver "github.com/go-sql-driver/mysql"
)

// errAccessDenied is ER_ACCESS_DENIED_ERROR.
const errAccessDenied = 1045

// OpenLocalAdmin opens a pool to the local administrator (root@localhost over the socket in cfg)
// with cfg's password and, when the server refuses it, without one: a data directory just
// initialized (--initialize-insecure), or one from before root had a password, has none until
// the primary sets it and the change replicates. A root with another password is refused.
func OpenLocalAdmin(cfg *driver.Config) (*sql.DB, error) {
	with, err := driver.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("preparing the connection to %s: %w", cfg.Addr, err)
	}
	if cfg.Passwd == "" {
		return sql.OpenDB(with), nil
	}
	bare := cfg.Clone()
	bare.Passwd = ""
	without, err := driver.NewConnector(bare)
	if err != nil {
		return nil, fmt.Errorf("preparing the connection to %s: %w", cfg.Addr, err)
	}
	return sql.OpenDB(fallbackConnector{with: with, without: without}), nil
}

type fallbackConnector struct{ with, without sqldriver.Connector }

func (c fallbackConnector) Connect(ctx context.Context) (sqldriver.Conn, error) {
	conn, err := c.with.Connect(ctx)
	if mysqlErrorNumber(err) == errAccessDenied {
		return c.without.Connect(ctx)
	}
	return conn, err
}

func (c fallbackConnector) Driver() sqldriver.Driver { return c.with.Driver() }

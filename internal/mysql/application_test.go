package mysql_test

import (
	"errors"
	"testing"

	driver "github.com/go-sql-driver/mysql"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

// TestApplicationAndLocalAdmin: the application owner gets its database and nothing else, a
// second call changes nothing; the local administrator's pool falls back to no password only
// while the account has none.
func TestApplicationAndLocalAdmin(t *testing.T) {
	n := startNodes(t, 1)[0]
	n.exec(t, "SET GLOBAL super_read_only = OFF", "SET GLOBAL read_only = OFF")
	app := mysql.Application{Database: "shop", Owner: mysql.Account{Name: "shopper", Password: "shop-pw"}}
	check.Must(t, n.op.CreateApplication(t.Context(), app))
	again := app
	again.Owner.Password = "another-pw"
	check.Must(t, n.op.CreateApplication(t.Context(), again)) // idempotent; keeps the first password

	t.Run("the owner works in its database and nowhere else", func(t *testing.T) {
		db, err := n.srv.OpenDB(t.Context(), "shopper", "shop-pw", "shop")
		check.Must(t, err)
		defer db.Close()
		for _, stmt := range []string{"CREATE TABLE t (id INT PRIMARY KEY)", "INSERT INTO t VALUES (1)", "CREATE INDEX i ON t (id)",
			"CREATE VIEW v AS SELECT id FROM t", "DROP VIEW v"} {
			if _, err := db.ExecContext(t.Context(), stmt); err != nil {
				t.Errorf("%s: %v", stmt, err)
			}
		}
		for _, stmt := range []string{"CREATE DATABASE elsewhere", "CREATE TABLE mysql.t (id INT PRIMARY KEY)",
			"SELECT COUNT(*) FROM mysql.user", "CREATE USER x IDENTIFIED BY 'x'", "SET GLOBAL read_only = ON"} {
			if _, err := db.ExecContext(t.Context(), stmt); err == nil {
				t.Errorf("the owner ran %q", stmt)
			}
		}
	})
	t.Run("invalid names are refused before any statement", func(t *testing.T) {
		for _, bad := range []mysql.Application{
			{Database: "a`b", Owner: mysql.Account{Name: "o", Password: "p"}},
			{Database: "d", Owner: mysql.Account{Name: "o'x", Password: "p"}},
			{Database: "d", Owner: mysql.Account{Name: "o"}},
		} {
			if err := n.op.CreateApplication(t.Context(), bad); err == nil {
				t.Errorf("CreateApplication(%q, %q) accepted", bad.Database, bad.Owner.Name)
			}
		}
	})
	t.Run("the local administrator falls back to no password only while the account has none", func(t *testing.T) {
		n.exec(t, "CREATE USER admin_t@'%' IDENTIFIED BY ''", "GRANT SELECT ON *.* TO admin_t@'%'")
		ping := func(password string) error {
			cfg := n.srv.MySQLConfig("admin_t", password, "")
			db, err := mysql.OpenLocalAdmin(cfg)
			check.Must(t, err)
			defer db.Close()
			return db.PingContext(t.Context())
		}
		if err := ping("admin-pw"); err != nil {
			t.Errorf("no password yet: the pool with the password falls back: %v", err)
		}
		n.exec(t, "ALTER USER admin_t@'%' IDENTIFIED BY 'admin-pw'")
		if err := ping("admin-pw"); err != nil {
			t.Errorf("with its password: %v", err)
		}
		var me *driver.MySQLError
		if err := ping("wrong-pw"); !errors.As(err, &me) || me.Number != 1045 {
			t.Errorf("a wrong password is refused, without falling back to none: %v", err)
		}
	})
}

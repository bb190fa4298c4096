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

// TestApplicationGrantIsLiteral: `_` is a wildcard in a database grant, so a grant on `m_sql`
// would reach `mysql`, one on `s_s` would reach `sys`, and one on `my_app` any `myXapp`. The
// owner reaches its own database and none of those; a wildcard grant left by an older build is
// revoked.
func TestApplicationGrantIsLiteral(t *testing.T) {
	n := startNodes(t, 1)[0]
	n.exec(t, "SET GLOBAL super_read_only = OFF", "SET GLOBAL read_only = OFF",
		"CREATE DATABASE myxapp", "CREATE TABLE myxapp.t (id INT PRIMARY KEY)")
	for _, row := range []struct {
		name, database, owner string
		// wildcardGrantBefore: the owner already holds the unescaped grant, as an older build gave it.
		wildcardGrantBefore bool
		// outside are statements the wildcard would have allowed.
		outside []string
	}{
		{name: "m_sql does not reach mysql", database: "m_sql", owner: "o_msql",
			outside: []string{"SELECT COUNT(*) FROM mysql.user", "UPDATE mysql.user SET authentication_string = '' WHERE user = 'root'"}},
		{name: "s_s does not reach sys", database: "s_s", owner: "o_ss",
			outside: []string{"SELECT * FROM sys.version", "CREATE TABLE sys.t (id INT PRIMARY KEY)"}},
		{name: "my_app does not reach myxapp", database: "my_app", owner: "o_myapp",
			outside: []string{"SELECT * FROM myxapp.t", "DROP TABLE myxapp.t"}},
		{name: "a wildcard grant of an older build is revoked", database: "m_sql", owner: "o_old", wildcardGrantBefore: true,
			outside: []string{"SELECT COUNT(*) FROM mysql.user"}},
	} {
		t.Run(row.name, func(t *testing.T) {
			if row.wildcardGrantBefore {
				n.exec(t, "CREATE USER "+row.owner+"@'%' IDENTIFIED BY 'pw'", "GRANT ALL ON `"+row.database+"`.* TO "+row.owner+"@'%'")
			}
			app := mysql.Application{Database: row.database, Owner: mysql.Account{Name: row.owner, Password: "pw"}}
			check.Must(t, n.op.CreateApplication(t.Context(), app))
			check.Must(t, n.op.CreateApplication(t.Context(), app)) // idempotent
			db, err := n.srv.OpenDB(t.Context(), row.owner, "pw", row.database)
			check.Must(t, err)
			defer db.Close()
			for _, stmt := range []string{"CREATE TABLE IF NOT EXISTS own (id INT PRIMARY KEY)", "INSERT INTO own VALUES (1)", "SELECT COUNT(*) FROM own", "DROP TABLE own"} {
				if _, err := db.ExecContext(t.Context(), stmt); err != nil {
					t.Errorf("in its own database %s: %s: %v", row.database, stmt, err)
				}
			}
			for _, stmt := range row.outside {
				var me *driver.MySQLError
				if _, err := db.ExecContext(t.Context(), stmt); !errors.As(err, &me) || (me.Number != 1142 && me.Number != 1044) {
					t.Errorf("%s: want an access-denied error, got %v", stmt, err)
				}
			}
		})
	}
}

// TestLiteralApplicationGrant: a primary of a Cluster an older build made replaces its owner's
// wildcard grant with the literal one, and changes nothing otherwise (it creates no database).
func TestLiteralApplicationGrant(t *testing.T) {
	n := startNodes(t, 1)[0]
	n.exec(t, "SET GLOBAL super_read_only = OFF", "SET GLOBAL read_only = OFF",
		"CREATE DATABASE m_sql", "CREATE USER old_owner@'%' IDENTIFIED BY 'pw'", "GRANT ALL ON `m_sql`.* TO old_owner@'%'")
	old := mysql.Application{Database: "m_sql", Owner: mysql.Account{Name: "old_owner"}}
	changed, err := n.op.LiteralApplicationGrant(t.Context(), old)
	check.Must(t, err)
	if !changed {
		t.Fatal("the wildcard grant was not replaced")
	}
	db, err := n.srv.OpenDB(t.Context(), "old_owner", "pw", "m_sql")
	check.Must(t, err)
	defer db.Close()
	if _, err := db.ExecContext(t.Context(), "CREATE TABLE own (id INT PRIMARY KEY)"); err != nil {
		t.Errorf("the owner lost its own database: %v", err)
	}
	var me *driver.MySQLError
	if _, err := db.ExecContext(t.Context(), "SELECT COUNT(*) FROM mysql.user"); !errors.As(err, &me) || me.Number != 1142 {
		t.Errorf("the owner still reads mysql.user: %v", err)
	}
	if changed, err := n.op.LiteralApplicationGrant(t.Context(), old); err != nil || changed {
		t.Errorf("a second call changed %v (%v), want nothing", changed, err)
	}
	fresh := mysql.Application{Database: "s_s", Owner: mysql.Account{Name: "nobody"}}
	if changed, err := n.op.LiteralApplicationGrant(t.Context(), fresh); err != nil || changed {
		t.Errorf("an owner without the wildcard grant: changed %v (%v), want nothing", changed, err)
	}
	var dbs int
	check.Must(t, n.db.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 's_s'").Scan(&dbs))
	if dbs != 0 {
		t.Error("a database was created")
	}
}

package mysql_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	driver "github.com/go-sql-driver/mysql"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/mysqldtest"
)

const fencePassword = "fence-S3cret'pw"

// TestFenceFromOutside: a primary whose commits wait for a semi-sync acknowledgement that will
// never come (no replica, an infinite timeout), with every ordinary connection slot taken, is
// fenced over its administrative interface by the fence account alone: the waiting client never
// reads OK, an idle kept connection is ended, new ordinary sessions are refused, and the server
// is read-only with the semi-sync source off. Run again, the fence succeeds again.
func TestFenceFromOutside(t *testing.T) {
	ports, err := mysqldtest.FreePorts("127.0.0.1", 1)
	if err != nil {
		t.Fatal(err)
	}
	adminPort := ports[0]
	srv := mysqldtest.Start(t, mysqldtest.Options{ExtraArgs: []string{
		"--admin-address=127.0.0.1", "--admin-port=" + strconv.Itoa(adminPort)}})[0]
	n := &node{srv: srv, db: srv.RootDB(t)}
	n.op, err = mysql.NewFactory().New(srv.MySQLConfig("root", "", ""))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.op.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	users := testUsers
	users.Fence = mysql.Account{Name: "cnm_fence", Password: fencePassword, RequireSubject: "/CN=root"}
	if err := n.op.CreateUsers(ctx, users); err != nil {
		t.Fatal(err)
	}
	if err := n.op.InstallSemiSyncPlugins(ctx); err != nil {
		t.Fatal(err)
	}
	n.exec(t, "CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY)",
		"CREATE USER 'app'@'%' IDENTIFIED BY 'app-pw'", "GRANT ALL ON app.* TO 'app'@'%'",
		"SET GLOBAL rpl_semi_sync_source_timeout = 4294967295", "SET GLOBAL rpl_semi_sync_source_wait_no_replica = ON",
		"SET GLOBAL rpl_semi_sync_source_enabled = ON")

	app := openApp(t, srv)
	kept, err := app.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer kept.Close()
	if _, err := kept.ExecContext(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	committed := make(chan error, 1)
	go func() {
		_, err := app.ExecContext(ctx, "INSERT INTO app.t VALUES (1)")
		committed <- err
	}()
	waitFor(t, ctx, "the commit to wait for an acknowledgement", func() bool {
		return n.status(t).SemiSync.AckWaiters >= 1
	})
	// Every ordinary slot taken: the main interface refuses even a new session now.
	crowd := fillConnections(t, ctx, app)
	if len(crowd) == 0 {
		t.Fatal("no connection was taken before the server refused them")
	}

	cfg := mysql.FenceConfig("127.0.0.1", adminPort, "cnm_fence", fencePassword, srv.TLSConfig())
	res, err := mysql.Fence(ctx, cfg)
	if err != nil {
		t.Fatalf("Fence: %v", err)
	}
	t.Logf("fence: %+v", res)
	if res.ReleasedAckWaits < 1 {
		t.Errorf("Fence = %+v; want the waiting commit released", res)
	}
	// offline_mode ends the ordinary sessions itself; the fence ends the others (root's).
	for i, c := range crowd {
		if err := c.PingContext(ctx); err == nil {
			t.Errorf("session %d of the crowd still works after the fence", i+1)
			break
		}
	}
	select {
	case err := <-committed:
		if err == nil {
			t.Error("the client whose commit waited for an acknowledgement read OK from a fenced server")
		}
	case <-time.After(10 * time.Second):
		t.Error("the client whose commit waited for an acknowledgement is still waiting 10 s after the fence")
	}
	if _, err := kept.ExecContext(ctx, "SELECT 1"); err == nil {
		t.Error("a kept connection still works after the fence")
	}
	fresh, err := sql.Open("mysql", srv.MySQLConfig("app", "app-pw", "").FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if err := fresh.PingContext(ctx); err == nil {
		t.Error("a new ordinary session was accepted after the fence")
	}
	// A server that answers but refuses the fence account (its password changed, say) is not
	// unreachable: it runs, and the caller must not go on as if it were gone.
	wrong := mysql.FenceConfig("127.0.0.1", adminPort, "cnm_fence", "not-the-password", srv.TLSConfig())
	if _, err := mysql.Fence(ctx, wrong); !errors.Is(err, mysql.ErrFenceRefused) || errors.Is(err, mysql.ErrUnreachable) {
		t.Errorf("Fence with a wrong password = %v; want ErrFenceRefused, not ErrUnreachable", err)
	}
	admin := openFence(t, cfg)
	for v, want := range map[string]string{"offline_mode": "1", "super_read_only": "1", "rpl_semi_sync_source_enabled": "0"} {
		var got string
		if err := admin.QueryRowContext(ctx, "SELECT @@GLOBAL."+v).Scan(&got); err != nil || got != want {
			t.Errorf("@@GLOBAL.%s = %q, %v; want %s", v, got, err, want)
		}
	}
	if _, err := mysql.Fence(ctx, cfg); err != nil {
		t.Errorf("a second fence: %v", err)
	}
}

// TestFenceUnreachable: nothing listening at the address is reported as ErrUnreachable, within
// the dial timeout.
func TestFenceUnreachable(t *testing.T) {
	ports, err := mysqldtest.FreePorts("127.0.0.1", 1)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = mysql.Fence(t.Context(), mysql.FenceConfig("127.0.0.1", ports[0], "cnm_fence", fencePassword, nil))
	if !errors.Is(err, mysql.ErrUnreachable) {
		t.Fatalf("Fence of a closed port = %v; want ErrUnreachable", err)
	}
	if d := time.Since(start); d > mysql.FenceDialTimeout+3*time.Second {
		t.Errorf("Fence of a closed port took %s", d)
	}
}

func openApp(t *testing.T, srv *mysqldtest.Server) *sql.DB {
	t.Helper()
	app, err := sql.Open("mysql", srv.MySQLConfig("app", "app-pw", "").FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { app.Close() })
	return app
}

func openFence(t *testing.T, cfg *driver.Config) *sql.DB {
	t.Helper()
	connector, err := driver.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(connector)
	t.Cleanup(func() { db.Close() })
	return db
}

// fillConnections opens sessions on app until the server refuses one for too many connections,
// and returns them (open until the test ends).
func fillConnections(t *testing.T, ctx context.Context, app *sql.DB) []*sql.Conn {
	t.Helper()
	var conns []*sql.Conn
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for range 200 {
		c, err := app.Conn(ctx)
		if err == nil {
			err = c.PingContext(ctx)
		}
		var me *driver.MySQLError
		if errors.As(err, &me) && me.Number == 1040 {
			if c != nil {
				c.Close()
			}
			return conns
		}
		if err != nil {
			t.Fatalf("opening session %d: %v", len(conns)+1, err)
		}
		conns = append(conns, c)
	}
	t.Fatal(fmt.Sprintf("the server accepted %d sessions; want it to refuse them at max_connections", len(conns)))
	return nil
}

func waitFor(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

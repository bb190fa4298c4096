package mysql_test

import (
	"context"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

// TestStatusWhileTurningReadOnly: SET GLOBAL super_read_only = ON waits for the statements and
// commits in flight, and @@super_read_only already reads 1 while it waits. Status must report the
// server writable until read-only is in effect, since its gtid_executed still grows until then:
// the target of a switchover takes the old primary's set as final once it reads it read-only.
func TestStatusWhileTurningReadOnly(t *testing.T) {
	n := startNodes(t, 1)[0]
	n.exec(t, "CREATE DATABASE ro", "CREATE TABLE ro.t (id INT PRIMARY KEY)")
	ctx := t.Context()
	inserted := make(chan error, 1)
	go func() {
		_, err := n.db.ExecContext(ctx, "INSERT INTO ro.t SELECT SLEEP(4) + 1")
		inserted <- err
	}()
	check.Eventually(t, 10*time.Second, "the insert is running", func(ctx context.Context) (bool, error) {
		var k int
		err := n.db.QueryRowContext(ctx,
			"SELECT COUNT(*) FROM information_schema.processlist WHERE info LIKE 'INSERT INTO ro.t%'").Scan(&k)
		return k == 1, err
	})
	turned := make(chan error, 1)
	go func() { turned <- n.op.SetReadOnly(ctx, true) }()
	check.Eventually(t, 10*time.Second, "the SET is waiting with @@super_read_only already 1", func(ctx context.Context) (bool, error) {
		var ro, superRO bool
		err := n.db.QueryRowContext(ctx, "SELECT @@GLOBAL.read_only, @@GLOBAL.super_read_only").Scan(&ro, &superRO)
		return !ro && superRO, err
	})
	if st := n.status(t); !st.Writable() || st.ReadOnly || st.SuperReadOnly {
		t.Errorf("while the SET waits for the insert: Writable=%v ReadOnly=%v SuperReadOnly=%v; want writable",
			st.Writable(), st.ReadOnly, st.SuperReadOnly)
	}
	if err := <-inserted; err != nil {
		t.Fatalf("the insert in flight: %v", err)
	}
	if err := <-turned; err != nil {
		t.Fatal(err)
	}
	st := n.status(t)
	if st.Writable() || !st.ReadOnly || !st.SuperReadOnly {
		t.Errorf("after the SET: Writable=%v ReadOnly=%v SuperReadOnly=%v; want read-only", st.Writable(), st.ReadOnly, st.SuperReadOnly)
	}
	var rows int
	if err := n.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM ro.t").Scan(&rows); err != nil || rows != 1 {
		t.Errorf("rows in ro.t after the SET = %d (%v); want the insert in flight committed", rows, err)
	}
}

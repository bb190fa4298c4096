package gtid_test

import (
	"database/sql"
	"testing"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/mysqldtest"
)

// TestAgainstMySQL checks this package against the server's own GTID functions: GTID_SUBSET,
// GTID_SUBTRACT, and the text mysqld prints for @@gtid_executed.
func TestAgainstMySQL(t *testing.T) {
	server := mysqldtest.Start(t, mysqldtest.Options{})[0]
	db := server.RootDB(t)
	const a, b = "3e11fa47-71ca-11e1-9e33-c80aa9429562", "4f22ab58-82db-22f2-af44-d91bb0530673"
	pairs := [][2]string{
		{a + ":1-10", a + ":1-5"},
		{a + ":1-5", a + ":1-10"},
		{a + ":1-3:5-7:9-11", a + ":2-10"},
		{a + ":1-10," + b + ":1-2", a + ":1-12"},
		{a + ":1-5:blue:1-3", a + ":blue:2"},
		{"", a + ":1"},
		{a + ":1-4:8-9", ""},
	}
	for _, p := range pairs {
		x, y := gtid.MustParse(p[0]), gtid.MustParse(p[1])
		var subset int
		var diff string
		if err := db.QueryRowContext(t.Context(), "SELECT GTID_SUBSET(?, ?), GTID_SUBTRACT(?, ?)",
			p[1], p[0], p[0], p[1]).Scan(&subset, &diff); err != nil {
			t.Fatalf("GTID functions on %q, %q: %v", p[0], p[1], err)
		}
		if x.Contains(y) != (subset == 1) {
			t.Errorf("Contains(%q, %q) = %v, MySQL GTID_SUBSET says %d", p[0], p[1], x.Contains(y), subset)
		}
		if got := x.Subtract(y); !got.Equal(gtid.MustParse(diff)) {
			t.Errorf("%q minus %q = %q, MySQL GTID_SUBTRACT says %q", p[0], p[1], got, diff)
		}
	}

	// A real gtid_executed spanning two UUIDs and a tag parses. GTID_NEXT is per session: one
	// connection runs the whole sequence.
	conn, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, stmt := range []string{
		"CREATE DATABASE oracle",
		"SET GTID_NEXT = '" + b + ":1'", "CREATE TABLE oracle.t (id INT PRIMARY KEY)",
		"SET GTID_NEXT = '" + b + ":green:7'", "INSERT INTO oracle.t VALUES (1)",
		"SET GTID_NEXT = 'AUTOMATIC'",
	} {
		if _, err := conn.ExecContext(t.Context(), stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	executed := queryString(t, db, "SELECT @@GLOBAL.gtid_executed")
	set, err := gtid.Parse(executed)
	if err != nil {
		t.Fatalf("Parse(@@gtid_executed = %q): %v", executed, err)
	}
	if !set.Contains(gtid.MustParse(b + ":1," + b + ":green:7")) {
		t.Errorf("parsed %q lacks the transactions run with explicit GTIDs", set)
	}
	if subset := queryString(t, db, "SELECT GTID_SUBSET(@@GLOBAL.gtid_executed, ?) AND GTID_SUBSET(?, @@GLOBAL.gtid_executed)",
		set.String(), set.String()); subset != "1" {
		t.Errorf("String() = %q is not the same set as MySQL's %q", set, executed)
	}
}

func queryString(t *testing.T, db *sql.DB, query string, args ...any) string {
	t.Helper()
	var v sql.NullString
	if err := db.QueryRowContext(t.Context(), query, args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return v.String
}

package mysql

import (
	"slices"
	"testing"
)

// TestGlobalAssignment: one row per rule of how an option-file value becomes a SET GLOBAL.
func TestGlobalAssignment(t *testing.T) {
	for _, tc := range []struct {
		rule, name, value, stmt string
		args                    []any
	}{
		{"a number is written bare", "max_connections", "500", "SET GLOBAL max_connections = 500", nil},
		{"a decimal is written bare", "long_query_time", "0.5", "SET GLOBAL long_query_time = 0.5", nil},
		{"a size suffix becomes bytes", "innodb_buffer_pool_size", "256M", "SET GLOBAL innodb_buffer_pool_size = 268435456", nil},
		{"a lower-case suffix too", "max_allowed_packet", "1g", "SET GLOBAL max_allowed_packet = 1073741824", nil},
		{"ON and OFF are keywords", "general_log", "on", "SET GLOBAL general_log = ON", nil},
		{"DEFAULT resets", "max_connections", DefaultValue, "SET GLOBAL max_connections = DEFAULT", nil},
		{"anything else is a quoted string argument", "sql_mode", "STRICT_TRANS_TABLES,NO_ZERO_DATE", "SET GLOBAL sql_mode = ?",
			[]any{"STRICT_TRANS_TABLES,NO_ZERO_DATE"}},
		{"the word DEFAULT given by a user is a string, not the reset", "init_connect", "DEFAULT", "SET GLOBAL init_connect = ?", []any{"DEFAULT"}},
	} {
		stmt, args, err := globalAssignment(tc.name, tc.value)
		if err != nil || stmt != tc.stmt || !slices.Equal(args, tc.args) {
			t.Errorf("%s: %q %v %v, want %q %v", tc.rule, stmt, args, err, tc.stmt, tc.args)
		}
	}
	for _, bad := range []string{"x; DROP TABLE t", "Max-Connections", "", "a.b"} {
		if _, _, err := globalAssignment(bad, "1"); err == nil {
			t.Errorf("name %q accepted", bad)
		}
	}
}

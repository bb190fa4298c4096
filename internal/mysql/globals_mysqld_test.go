package mysql_test

import (
	"testing"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
)

// TestSetGlobalOnMysqld: what SET GLOBAL does with the values and names spec.mysql.parameters
// carries, on a real server, and how its errors are classified.
func TestSetGlobalOnMysqld(t *testing.T) {
	n := startNodes(t, 1)[0]
	ctx := t.Context()
	for _, tc := range []struct {
		rule, name, value, want string
		kind                    mysql.GlobalErrorKind // expected error kind; -1 for none
	}{
		{"a dynamic number takes effect", "max_connections", "321", "321", -1},
		{"a size with a suffix takes effect in bytes", "max_allowed_packet", "32M", "33554432", -1},
		{"a keyword takes effect", "log_bin_trust_function_creators", "ON", "1", -1},
		{"a string takes effect", "sql_mode", "STRICT_TRANS_TABLES", "STRICT_TRANS_TABLES", -1},
		{"DEFAULT resets", "max_connections", mysql.DefaultValue, "151", -1},
		{"a read-only variable needs a restart (1238)", "table_open_cache_instances", "4", "", mysql.GlobalReadOnly},
		{"an unknown name is told apart (1193)", "no_such_variable_here", "1", "", mysql.GlobalUnknown},
		{"a wrong value is refused (1231)", "sql_mode", "NOT_A_MODE", "", mysql.GlobalWrongValue},
		{"a wrong type is refused (1232)", "max_connections", "many", "", mysql.GlobalWrongValue},
		{"a session-only variable is refused (1228)", "sql_log_bin", "0", "", mysql.GlobalWrongValue},
		{"an unknown storage engine is refused (1286)", "default_storage_engine", "NoSuchEngine", "", mysql.GlobalWrongValue},
		{"a dotted component variable is a startup option to SET GLOBAL", "validate_password.length", "8", "", mysql.GlobalUnknown},
	} {
		err := n.op.SetGlobal(ctx, tc.name, tc.value)
		if tc.kind >= 0 {
			if err == nil || mysql.ClassifyGlobalError(err) != tc.kind {
				t.Errorf("%s: error %v classified %v, want kind %v", tc.rule, err, mysql.ClassifyGlobalError(err), tc.kind)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.rule, err)
			continue
		}
		if got, err := n.op.GlobalValue(ctx, tc.name); err != nil || got != tc.want {
			t.Errorf("%s: @@GLOBAL.%s = %q (%v), want %q", tc.rule, tc.name, got, err, tc.want)
		}
	}
}

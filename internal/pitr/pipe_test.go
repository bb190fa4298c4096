package pitr

import (
	"strings"
	"testing"
)

// TestLoadErrorCodes: what the replay reports of the mysql client's errors keeps the code,
// SQLSTATE and line, never the message, which may quote row data.
func TestLoadErrorCodes(t *testing.T) {
	for _, tc := range []struct {
		rule, stderr, want string
	}{
		{"a duplicate key keeps its code and line, not the value",
			"ERROR 1062 (23000) at line 42: Duplicate entry 'alice@example.com' for key 'users.email'\n",
			"ERROR 1062 (23000) at line 42 (message withheld: it may quote row data)"},
		{"an error without a line number", "ERROR 1045 (28000): Access denied for user 'root'@'localhost'\n",
			"ERROR 1045 (28000) (message withheld: it may quote row data)"},
		{"several errors, each reduced",
			"mysql: [Warning] something\nERROR 1146 (42S02) at line 7: Table 'shop.secret' doesn't exist\nERROR 2013 (HY000) at line 9: Lost connection\n",
			"ERROR 1146 (42S02) at line 7 (message withheld: it may quote row data)\nERROR 2013 (HY000) at line 9 (message withheld: it may quote row data)"},
		{"output without an error code is not reported", "row 'secret' broke something\n",
			"(no MySQL error code in its output, which is not reported: it may quote row data)"},
		{"no output: nothing", "  \n", ""},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			got := loadErrorCodes([]byte(tc.stderr))
			if got != tc.want {
				t.Errorf("loadErrorCodes = %q, want %q", got, tc.want)
			}
			for _, secret := range []string{"alice@example.com", "secret", "Access denied"} {
				if strings.Contains(got, secret) {
					t.Errorf("%q quotes %q", got, secret)
				}
			}
		})
	}
}

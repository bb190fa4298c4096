package mysql

import (
	"testing"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
)

func TestOwnedOf(t *testing.T) {
	const u = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
	const v = "4e11fa47-71ca-11e1-9e33-c80aa9429562"
	for _, tc := range []struct{ name, in, server, want string }{
		{"nothing owned", "", u, ""},
		{"one GTID with its owner", u + ":7#12", u, u + ":7"},
		// Printed by MySQL 9.7 with four sessions owning u:5, u:6, v:3 and v:tg:4.
		{"several of one source, then the next source right after a thread id", u + ":6#10:5#9" + v + ":3#11" + v + ":tg:4#12", u, u + ":5-6"},
		{"another source's GTIDs are not the server's", u + ":6#10:5#9" + v + ":3#11" + v + ":tg:4#12", v, v + ":3," + v + ":tg:4"},
		{"a thread id whose last digits could start a UUID", u + ":6#123" + v + ":3#1", v, v + ":3"},
		{"upper-case UUID", "3E11FA47-71CA-11E1-9E33-C80AA9429562:7#1", u, u + ":7"},
		{"unreadable text gives nothing", u + ":x#1:#:5#", u, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ownedOf(tc.in, tc.server); !got.Equal(gtid.MustParse(tc.want)) {
				t.Errorf("ownedOf(%q, %s) = %q, want %q", tc.in, tc.server, got, tc.want)
			}
		})
	}
}

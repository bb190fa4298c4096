package chaos

import (
	"reflect"
	"testing"
	"time"
)

func TestParseShutdown(t *testing.T) {
	for _, tc := range []struct {
		rule string
		log  string
		want Shutdown
	}{
		{"a clean stop: SIGTERM to mysqld stopped, mysqld's own stop and its last line",
			`{"level":"info","ts":"2026-11-29T14:21:20.000Z","msg":"shutting down","gracePeriod":25}
2026-11-29T14:21:21.000000Z 0 [System] [MY-010910] [Server] /usr/sbin/mysqld: Shutdown complete (mysqld 9.7.4-2)  (Debian).
{"level":"info","ts":"2026-11-29T14:21:22.500Z","logger":"supervisor","msg":"mysqld stopped","status":"exit 0","took":1.25}`,
			Shutdown{Pod: "db-1", Seen: true, Total: 2500 * time.Millisecond, Mysqld: 1250 * time.Millisecond, Clean: true,
				Lines: []string{"2026-11-29T14:21:21.000000Z 0 [System] [MY-010910] [Server] /usr/sbin/mysqld: Shutdown complete (mysqld 9.7.4-2)  (Debian)."}}},
		{"a killed mysqld", `{"level":"info","ts":"2026-11-29T14:21:20.000Z","msg":"shutting down"}
{"level":"info","ts":"2026-11-29T14:21:45.000Z","msg":"mysqld killed after the grace period","gracePeriod":25}`,
			Shutdown{Pod: "db-1", Seen: true, Total: 25 * time.Second, Killed: true}},
		{"a string duration is read too", `{"ts":"2026-11-29T14:21:20.000Z","msg":"shutting down"}
{"ts":"2026-11-29T14:21:21.000Z","msg":"mysqld stopped","took":"800ms"}`,
			Shutdown{Pod: "db-1", Seen: true, Total: time.Second, Mysqld: 800 * time.Millisecond}},
		{"a Pod not restarted", `{"ts":"2026-11-29T14:21:20.000Z","msg":"role reconciled"}`, Shutdown{Pod: "db-1"}},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			if got := parseShutdown("db-1", tc.log); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
	if err := checkShutdowns([]Shutdown{{Pod: "db-1", Seen: true, Clean: true}, {Pod: "db-2"}}); err != nil {
		t.Errorf("a clean stop and an unrestarted Pod pass: %v", err)
	}
	if err := checkShutdowns([]Shutdown{{Pod: "db-1", Seen: true, Killed: true}}); err == nil {
		t.Error("a killed mysqld must fail the check")
	}
	if err := checkShutdowns([]Shutdown{{Pod: "db-1", Seen: true}}); err == nil {
		t.Error("a stop without mysqld's last line must fail the check")
	}
	if err := checkShutdowns([]Shutdown{{Pod: "db-1", Replaced: true}}); err == nil {
		t.Error("a replaced Pod whose shutdown was not seen must fail the check")
	}
}

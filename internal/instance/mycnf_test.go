package instance

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func baseMyCnfInput() MyCnfInput {
	return MyCnfInput{
		Serial: 3, Port: 3306, ReportHost: "c-3.c-headless.ns.svc", DataDir: "/var/lib/mysql/data",
		RunDir: "/run/mysqld", TLS: TLSPaths{CAFile: "/tls/ca.crt", CertFile: "/tls/tls.crt", KeyFile: "/tls/tls.key"},
	}
}

func TestRenderMyCnfOwnedSettings(t *testing.T) {
	cnf, err := RenderMyCnf(baseMyCnfInput())
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"[mysqld]", "server_id = 3", "gtid_mode = ON", "enforce_gtid_consistency = ON", "log_bin = binlog",
		"super_read_only = ON", "read_only = ON", "skip_replica_start = ON", "sync_binlog = 1", "relay_log_recovery = OFF",
		"innodb_flush_log_at_trx_commit = 1", "ssl_ca = /tls/ca.crt", "ssl_cert = /tls/tls.crt",
		"ssl_key = /tls/tls.key", "report_host = c-3.c-headless.ns.svc", "bind_address = *",
		"datadir = /var/lib/mysql/data", "socket = /run/mysqld/mysqld.sock", "persisted_globals_load = OFF",
		"mysqlx = OFF",
	} {
		if !strings.Contains(cnf.Text, "\n"+line+"\n") {
			t.Errorf("my.cnf lacks %q:\n%s", line, cnf.Text)
		}
	}
	if strings.Contains(cnf.Text, "log_error") || strings.Contains(cnf.Text, "\nuser") || strings.Contains(cnf.Text, "admin_") {
		t.Errorf("optional settings rendered though unset:\n%s", cnf.Text)
	}
	again, _ := RenderMyCnf(baseMyCnfInput())
	if again.Text != cnf.Text {
		t.Error("rendering is not deterministic")
	}
}

// TestRenderMyCnfAdministrativeInterface: with an address, the administrative interface the
// operator fences through listens there on its own port.
func TestRenderMyCnfAdministrativeInterface(t *testing.T) {
	in := baseMyCnfInput()
	in.AdminAddress, in.AdminPort = "10.1.2.3", 33062
	cnf, err := RenderMyCnf(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"admin_address = 10.1.2.3", "admin_port = 33062"} {
		if !strings.Contains(cnf.Text, "\n"+line+"\n") {
			t.Errorf("my.cnf lacks %q:\n%s", line, cnf.Text)
		}
	}
}

// TestRenderMyCnfOverridableDefaults: require_secure_transport is on and replica_net_timeout 5 s by
// default, written before the user's parameters so that the user's value, read later, wins.
func TestRenderMyCnfOverridableDefaults(t *testing.T) {
	cnf, err := RenderMyCnf(baseMyCnfInput())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cnf.Text, "\nrequire_secure_transport = ON\n") {
		t.Errorf("require_secure_transport is not on by default:\n%s", cnf.Text)
	}
	if !strings.Contains(cnf.Text, "\nreplica_net_timeout = 5\n") {
		t.Errorf("replica_net_timeout is not 5 s by default (a receiver must not wait a minute to connect to a recreated primary):\n%s", cnf.Text)
	}
	in := baseMyCnfInput()
	in.Parameters = map[string]string{"require-secure-transport": "OFF"}
	cnf, err = RenderMyCnf(in)
	if err != nil {
		t.Fatal(err)
	}
	on, off := strings.Index(cnf.Text, "\nrequire_secure_transport = ON\n"), strings.Index(cnf.Text, "\nrequire_secure_transport = OFF\n")
	if on < 0 || off < on || len(cnf.Refused) != 0 {
		t.Errorf("the user's OFF must come after the default ON (at %d, %d), refused %v:\n%s", on, off, cnf.Refused, cnf.Text)
	}
}

func TestRenderMyCnfParameters(t *testing.T) {
	for _, tc := range []struct {
		name    string
		key     string
		value   string
		line    string // expected line, "" when refused
		refused string // substring of the reason
	}{
		{"a plain parameter passes", "max_connections", "500", "max_connections = 500", ""},
		{"dashes become underscores", "max-connections", "500", "max_connections = 500", ""},
		{"a value with # and spaces is quoted", "init_connect", "SET @a = '#x'", `init_connect = "SET @a = '#x'"`, ""},
		{"backslashes are doubled", "init_connect", `a\nb`, `init_connect = "a\\nb"`, ""},
		{"an empty value is quoted", "secure_file_priv", "", `secure_file_priv = ""`, ""},
		{"require_secure_transport is the user's choice", "require_secure_transport", "ON", "require_secure_transport = ON", ""},
		{"the binary log expiry is the user's", "binlog_expire_logs_seconds", "86400", "binlog_expire_logs_seconds = 86400", ""},
		{"sync_relay_log is the user's (an acknowledging replica's relay log across an OS crash, at a cost)", "sync_relay_log", "1", "sync_relay_log = 1", ""},
		{"relay_log_recovery is owned: ON throws an acknowledged tail away", "relay-log-recovery", "ON", "", "acknowledged"},
		{"server_id is owned", "server_id", "9", "", "identity"},
		{"owned keys are case-insensitive", "Server-ID", "9", "", "identity"},
		{"gtid_mode is owned", "gtid_mode", "OFF", "", "GTID"},
		{"super_read_only is owned", "super_read_only", "OFF", "", "read-only"},
		{"skip- cannot turn the binary log off", "skip-log-bin", "", "", "binary log"},
		{"disable- cannot either", "disable_log_bin", "1", "", "binary log"},
		{"loose- does not hide an owned key", "loose-sync-binlog", "0", "", "durability"},
		{"an abbreviation of an owned key", "innodb_flush_log", "0", "", "abbreviation of innodb_flush_log_at_trx_commit"},
		{"old replication names are owned too", "log-slave-updates", "OFF", "", "replication"},
		{"TLS files are owned", "ssl-key", "/tmp/k", "", "TLS"},
		{"semi-sync is runtime-only", "rpl_semi_sync_source_timeout", "10", "", "runtime"},
		{"the administrative interface is owned", "admin-port", "1", "", "fences"},
		{"its TLS too", "admin_ssl_ca", "/tmp/ca", "", "administrative interface"},
		{"authentication cannot be turned off", "skip-grant-tables", "", "", "security"},
		{"name resolution stays off", "skip_name_resolve", "OFF", "", "security"},
		{"a replication filter is owned", "replicate-ignore-table", "app.t", "", "filter"},
		{"a wild filter too", "replicate_wild_do_table", "app.%", "", "filter"},
		{"a source-side filter too", "binlog_ignore_db", "app", "", "filter"},
		{"skipped replication errors are owned", "replica_skip_errors", "1062", "", "silently different"},
		{"their old name too", "slave-skip-errors", "all", "", "silently different"},
		{"the idempotent applier is owned", "replica_exec_mode", "IDEMPOTENT", "", "IDEMPOTENT"},
		{"SET PERSIST cannot be let in at start", "persisted_globals_load", "ON", "", "SET PERSIST"},
		{"the X Protocol stays off", "mysqlx", "ON", "", "X Protocol"},
		{"skip- cannot hide it", "skip-mysqlx", "", "", "X Protocol"},
		{"the X Protocol's own settings are the user's (it is off)", "mysqlx_port", "33061", "mysqlx_port = 33061", ""},
		{"a line break cannot inject options", "init_connect", "x\nserver_id=1", "", "line break"},
		{"a double quote is refused", "init_connect", `say "hi"`, "", "double quote"},
		{"a key that is not an option name", "a b", "1", "", "not an option name"},
		{"a key injecting a section", "[client]", "1", "", "not an option name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := baseMyCnfInput()
			in.Parameters = map[string]string{tc.key: tc.value, "max_allowed_packet": "64M"}
			cnf, err := RenderMyCnf(in)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(cnf.Text, "\nmax_allowed_packet = 64M\n") {
				t.Errorf("the other parameter is missing:\n%s", cnf.Text)
			}
			if tc.line != "" {
				if !strings.Contains(cnf.Text, "\n"+tc.line+"\n") || len(cnf.Refused) != 0 {
					t.Errorf("want line %q and nothing refused; refused %v:\n%s", tc.line, cnf.Refused, cnf.Text)
				}
				return
			}
			i := slices.IndexFunc(cnf.Refused, func(r RefusedParameter) bool { return r.Key == tc.key })
			if i < 0 || len(cnf.Refused) != 1 || !strings.Contains(cnf.Refused[i].Reason, tc.refused) {
				t.Fatalf("refused = %+v, want %q refused for %q", cnf.Refused, tc.key, tc.refused)
			}
			userPart := cnf.Text[:strings.Index(cnf.Text, "# operator-owned")]
			if strings.Contains(strings.ToLower(userPart), strings.ToLower(strings.SplitN(tc.key, "\n", 2)[0])+" =") {
				t.Errorf("refused key rendered:\n%s", cnf.Text)
			}
		})
	}
}

func TestRenderMyCnfRefusedInKeyOrder(t *testing.T) {
	in := baseMyCnfInput()
	in.Parameters = map[string]string{"server_id": "1", "gtid_mode": "OFF", "read_only": "OFF", "port": "1"}
	cnf, err := RenderMyCnf(in)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, r := range cnf.Refused {
		keys = append(keys, r.Key)
	}
	if want := []string{"gtid_mode", "port", "read_only", "server_id"}; !slices.Equal(keys, want) {
		t.Errorf("refused keys = %v, want %v", keys, want)
	}
}

func TestRenderMyCnfRejectsBadInput(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*MyCnfInput)
	}{
		{"serial 0 cannot be a server_id", func(in *MyCnfInput) { in.Serial = 0 }},
		{"no port", func(in *MyCnfInput) { in.Port = 0 }},
		{"an administrative address without a port", func(in *MyCnfInput) { in.AdminAddress = "10.1.2.3" }},
		{"the administrative port is mysqld's", func(in *MyCnfInput) { in.AdminAddress, in.AdminPort = "10.1.2.3", in.Port }},
		{"no data directory", func(in *MyCnfInput) { in.DataDir = "" }},
		{"no TLS key", func(in *MyCnfInput) { in.TLS.KeyFile = "" }},
		{"a path with a line break", func(in *MyCnfInput) { in.DataDir = "/a\nserver_id=1" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := baseMyCnfInput()
			tc.mutate(&in)
			if _, err := RenderMyCnf(in); !errors.Is(err, errMyCnf) {
				t.Errorf("RenderMyCnf error = %v, want errMyCnf", err)
			}
		})
	}
}

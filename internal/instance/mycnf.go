package instance

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// MyCnfInput is everything my.cnf depends on. Paths are the ones mysqld sees.
type MyCnfInput struct {
	// Serial is the instance's serial (<cluster>-<serial>); it becomes server_id, so it must be
	// at least 1 and is never reused within a cluster.
	Serial      int32
	Port        int
	BindAddress string // "*" when empty
	// ReportHost is the name replicas and the operator use to reach the instance.
	ReportHost string
	// AdminAddress and AdminPort are the administrative interface (admin_address, admin_port),
	// left out when AdminAddress is empty. mysqld takes a single address there, no wildcard.
	AdminAddress string
	AdminPort    int
	DataDir      string
	RunDir       string // socket and pid file
	ErrorLog     string // empty: stderr, which the container runtime collects
	TLS          TLSPaths
	// User is the OS user mysqld switches to when started as root; empty leaves it out.
	User string
	// Parameters are spec.mysql.parameters.
	Parameters map[string]string
}

// TLSPaths are the server certificate files mysqld reads.
type TLSPaths struct {
	CAFile, CertFile, KeyFile string
}

// RefusedParameter is a user parameter left out of my.cnf, and why.
type RefusedParameter struct {
	Key    string
	Reason string
}

// MyCnf is the rendered file and the parameters it left out.
type MyCnf struct {
	Text    string
	Refused []RefusedParameter
}

var errMyCnf = errors.New("invalid my.cnf input")

// plainValue needs no quoting in an option file.
var plainValue = regexp.MustCompile(`^[A-Za-z0-9_.,:/+@%=*-]+$`)

// overridableDefaults are settings the operator chooses and the user may change: they come before
// the user's parameters, so that a parameter of the same name, read later, wins.
// require_secure_transport refuses plain TCP connections (TLS or the local socket only); turn it
// off with spec.mysql.parameters.require_secure_transport: "OFF". replica_net_timeout is also how
// long a replica's receiver waits to connect to its source: with the server default of 60 s, a
// replica whose primary's Pod was recreated on its volume (a new IP under the same name) hangs in
// a connect to the old address for a minute, and the primary's commits wait for its
// acknowledgements meanwhile; 5 s bounds that wait and sends a heartbeat every 2.5 s.
var overridableDefaults = [][2]string{{"require_secure_transport", "ON"}, {"replica_net_timeout", "5"}}

// RenderMyCnf renders my.cnf: the overridable defaults, the user's parameters, in key order, then
// the operator's settings, which thus win even over a spelling the ownership check did not
// foresee. A
// parameter that names an operator-owned option or cannot be written safely is left out and
// listed in Refused, in key order, for the operator to report on the Cluster.
func RenderMyCnf(in MyCnfInput) (MyCnf, error) {
	if err := in.validate(); err != nil {
		return MyCnf{}, err
	}
	var b strings.Builder
	b.WriteString("# Written by the cloudnative-mysql instance manager: set spec.mysql.parameters instead.\n")
	b.WriteString("[mysqld]\n")
	var out MyCnf
	keys := make([]string, 0, len(in.Parameters))
	for k := range in.Parameters {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var lines []string
	for _, k := range keys {
		line, reason := userLine(k, in.Parameters[k])
		if reason != "" {
			out.Refused = append(out.Refused, RefusedParameter{Key: k, Reason: reason})
			continue
		}
		lines = append(lines, line)
	}
	b.WriteString("\n# defaults, which spec.mysql.parameters may override\n")
	for _, kv := range overridableDefaults {
		b.WriteString(kv[0] + " = " + quoteValue(kv[1]) + "\n")
	}
	if len(lines) > 0 {
		b.WriteString("\n# spec.mysql.parameters\n" + strings.Join(lines, ""))
	}
	b.WriteString("\n# operator-owned\n")
	for _, kv := range in.owned() {
		b.WriteString(kv[0] + " = " + quoteValue(kv[1]) + "\n")
	}
	out.Text = b.String()
	return out, nil
}

func (in MyCnfInput) validate() error {
	switch {
	case in.Serial < 1:
		return fmt.Errorf("%w: serial %d, want at least 1", errMyCnf, in.Serial)
	case in.Port < 1 || in.Port > 65535:
		return fmt.Errorf("%w: port %d", errMyCnf, in.Port)
	case in.AdminAddress != "" && (in.AdminPort < 1 || in.AdminPort > 65535 || in.AdminPort == in.Port):
		return fmt.Errorf("%w: admin port %d", errMyCnf, in.AdminPort)
	case in.DataDir == "" || in.RunDir == "" || in.ReportHost == "":
		return fmt.Errorf("%w: data directory, run directory and report host are required", errMyCnf)
	case in.TLS.CAFile == "" || in.TLS.CertFile == "" || in.TLS.KeyFile == "":
		return fmt.Errorf("%w: TLS files are required", errMyCnf)
	}
	for _, v := range []string{in.BindAddress, in.AdminAddress, in.ReportHost, in.DataDir, in.RunDir, in.ErrorLog,
		in.TLS.CAFile, in.TLS.CertFile, in.TLS.KeyFile, in.User} {
		if !safeValue(v) {
			return fmt.Errorf("%w: %q cannot be written to an option file", errMyCnf, v)
		}
	}
	return nil
}

// owned returns the operator's settings, in a fixed order.
func (in MyCnfInput) owned() [][2]string {
	bind := in.BindAddress
	if bind == "" {
		bind = "*"
	}
	kv := [][2]string{
		{"server_id", strconv.Itoa(int(in.Serial))},
		{"port", strconv.Itoa(in.Port)},
		{"bind_address", bind},
		{"report_host", in.ReportHost},
		{"report_port", strconv.Itoa(in.Port)},
		{"datadir", in.DataDir},
		{"socket", in.RunDir + "/mysqld.sock"},
		{"pid_file", in.RunDir + "/mysqld.pid"},
	}
	if in.AdminAddress != "" {
		kv = append(kv, [2]string{"admin_address", in.AdminAddress}, [2]string{"admin_port", strconv.Itoa(in.AdminPort)})
	}
	if in.ErrorLog != "" {
		kv = append(kv, [2]string{"log_error", in.ErrorLog})
	}
	if in.User != "" {
		kv = append(kv, [2]string{"user", in.User})
	}
	return append(kv, [][2]string{
		{"gtid_mode", "ON"},
		{"enforce_gtid_consistency", "ON"},
		{"log_bin", "binlog"},
		{"log_replica_updates", "ON"},
		{"relay_log", "relay-bin"},
		// OFF: ON discards the relay log at every start and fetches it again from the source, so
		// a replica's acknowledged, unapplied tail is lost when the source is gone
		// (TestRelayLogKeepsAcknowledgedTail). The tail is synced by sync_relay_log (the user's).
		{"relay_log_recovery", "OFF"},
		{"skip_replica_start", "ON"},
		{"sync_binlog", "1"},
		{"innodb_flush_log_at_trx_commit", "1"},
		{"read_only", "ON"},
		{"super_read_only", "ON"},
		{"ssl_ca", in.TLS.CAFile},
		{"ssl_cert", in.TLS.CertFile},
		{"ssl_key", in.TLS.KeyFile},
		{"plugin_load_add", "mysql_clone.so"},
		{"skip_name_resolve", "ON"},
		{"persisted_globals_load", "OFF"},
		{"mysqlx", "OFF"},
	}...)
}

// userLine renders one user parameter, or says why it is refused.
func userLine(key, value string) (string, string) {
	if !validKey.MatchString(key) {
		return "", "not an option name"
	}
	if reason := ownedReason(key); reason != "" {
		return "", "operator-owned: " + reason
	}
	if !safeValue(value) {
		return "", "value contains a line break, a NUL or a double quote"
	}
	return canonicalKey(key) + " = " + quoteValue(value) + "\n", ""
}

// safeValue excludes what an option file cannot hold unambiguously.
func safeValue(v string) bool {
	return !strings.ContainsAny(v, "\n\r\x00\"")
}

// quoteValue writes v so that mysqld reads back exactly v: plain values as they are, others in
// double quotes (which protect '#', ';' and spaces) with backslashes doubled (mysqld turns "\\"
// into "\" and would read "\n", "\t", "\s" as escapes).
func quoteValue(v string) string {
	if plainValue.MatchString(v) {
		return v
	}
	return `"` + strings.ReplaceAll(v, `\`, `\\`) + `"`
}

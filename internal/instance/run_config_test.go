package instance

import (
	"strings"
	"testing"
)

func TestRunConfigPathsAsMysqldSeesThem(t *testing.T) {
	c := &RunConfig{Instance: "db-2", Namespace: "ns", Cluster: "db", MysqldCommand: []string{"chroot", "/r", "/usr/sbin/mysqld"},
		MysqldRoot: "/r", DataDir: "/r/tmp/i/data", RunDir: "/r/tmp/i/run", ServerTLSDir: "/r/tmp/i/server",
		ClientTLSDir: "/r/tmp/i/client", Port: 3306, ReportHost: "db-2.ns.svc"}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	in := c.MyCnfInput(2, nil)
	if in.DataDir != "/tmp/i/data" || in.RunDir != "/tmp/i/run" || in.TLS.CAFile != "/tmp/i/server/ca.crt" || in.Serial != 2 {
		t.Errorf("my.cnf input %+v", in)
	}
	cmd := c.Mysqld()("--initialize-insecure")
	if got := strings.Join(cmd.Args, " "); got != "chroot /r /usr/sbin/mysqld --defaults-file=/tmp/i/run/my.cnf --initialize-insecure" {
		t.Errorf("mysqld command %q", got)
	}
	c.DataDir = "/elsewhere/data"
	if err := c.Validate(); err == nil {
		t.Error("a data directory outside mysqld's root was accepted")
	}
	c.DataDir, c.Instance = "/r/tmp/i/data", "other-2"
	if err := c.Validate(); err == nil {
		t.Error("an instance name not of the cluster was accepted")
	}
}

func TestPeerDirectory(t *testing.T) {
	d := PeerDirectory{Namespace: "ns", Cluster: "db", Static: map[string]PeerAddress{
		"db-3": {Host: "127.0.0.13", MySQLPort: 4000, ManagerAddr: "127.0.0.13:4001"}}}
	if a := d.Address("db-2"); a != (PeerAddress{Host: "db-2.ns.svc", MySQLPort: 3306, ManagerAddr: "db-2.ns.svc:8000"}) {
		t.Errorf("default address %+v", a)
	}
	for _, tc := range []struct {
		host string
		port int
		want string
	}{
		{"db-2.ns.svc", 3306, "db-2"},
		{"127.0.0.13", 4000, "db-3"},
		{"db-2.ns.svc", 3307, ""},
		{"db-3.ns.svc", 3306, ""}, // listed elsewhere
		{"other-2.ns.svc", 3306, ""},
		{"db-2.other.svc", 3306, ""},
	} {
		if got := d.InstanceAt(tc.host, tc.port); got != tc.want {
			t.Errorf("InstanceAt(%s, %d) = %q, want %q", tc.host, tc.port, got, tc.want)
		}
	}
}

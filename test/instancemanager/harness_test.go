package instancemanager

import (
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	driver "github.com/go-sql-driver/mysql"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/certs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/proc"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/mysqldtest"
)

// node is one instance: its manager process, its directories and its addresses.
type node struct {
	name                       string
	host                       string
	mysqlPort, apiPort, probes int
	metrics                    int    // the /metrics port; the token is metricsToken
	dir                        string // host path, inside the MySQL root filesystem
	manager                    *proc.Child
	op                         mysql.Operator // root over the local socket, as the manager connects (mysql.OpenLocalAdmin)
	db                         *sql.DB
	stopped, cleanup           bool
	// kubeconfig, when set, replaces the world's (an API server reached through a proxy).
	kubeconfig string
	// peerAPIPorts, when set, is where this node reaches another's control API (a proxy on the
	// other's address); peerMySQLPorts the same for another's mysqld (replication, clone).
	peerAPIPorts   map[string]int
	peerMySQLPorts map[string]int
	// operatorAPIPort, when set, is where the operator reaches this node's control API (a proxy
	// on its address); the test itself always reaches it directly (target).
	operatorAPIPort int
	// args are extra flags of `manager instance run`.
	args []string
	// passwordsFromAPI makes the manager read the passwords from the Secrets <cluster>-<user> on
	// the API server, as in a Pod, instead of the files newNode writes. rootPassword, when set,
	// is root's for the test's own connections (withRootPassword also writes it for the manager).
	passwordsFromAPI bool
	rootPassword     string
}

// buildManager builds the manager binary once for the test binary.
func buildManager(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "manager")
	out, err := exec.Command("go", "build", "-o", bin, "../../cmd/manager").CombinedOutput()
	if err != nil {
		t.Fatalf("building the manager: %v\n%s", err, out)
	}
	return bin
}

// pki is the cluster CA and the two client certificates, as the operator issues them.
type pki struct {
	ca, operator, replication *certs.KeyPair
}

func newPKI(t *testing.T) pki {
	t.Helper()
	now := time.Now()
	ca := must1(certs.NewCA("db-ca", now))(t)
	return pki{ca: ca,
		operator:    must1(certs.Issue(ca, certs.Request{CommonName: certs.OperatorCommonName, Client: true}, now))(t),
		replication: must1(certs.Issue(ca, certs.Request{CommonName: "replication", Client: true}, now))(t),
	}
}

// must1 returns the value once the test has checked there was no error: must1(f())(t).
func must1[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// must is check.Must, the one way a test stops on an error it does not expect.
func must(t *testing.T, err error) {
	t.Helper()
	check.Must(t, err)
}

// metricsToken is the scrapers' token, as the Secret <cluster>-metrics would hold it.
const metricsToken = "scrape-token-0123456789"

// passwords are the accounts' passwords, as the Secrets <cluster>-<user> would hold them.
var passwords = map[string]string{"root": "root-pw", "replication": "repl-pw", "backup": "backup-pw", "app": "app-pw", "fence": "fence-pw"}

// newNode prepares the directories, certificates and passwords of one instance under base.
func newNode(t *testing.T, p pki, base, name, host string) *node {
	t.Helper()
	n := &node{name: name, host: host, dir: filepath.Join(base, name)}
	ports, err := mysqldtest.FreePorts(host, 4)
	must(t, err)
	n.mysqlPort, n.apiPort, n.probes, n.metrics = ports[0], ports[1], ports[2], ports[3]
	server := must1(certs.Issue(p.ca, certs.Request{CommonName: name, DNSNames: []string{"localhost"},
		IPAddresses: []net.IP{net.ParseIP(host)}}, time.Now()))(t)
	writeTLS(t, filepath.Join(n.dir, "server-tls"), server.SecretData(p.ca))
	writeTLS(t, filepath.Join(n.dir, "client-tls"), p.replication.SecretData(p.ca))
	must(t, os.WriteFile(filepath.Join(n.dir, "metrics-token"), []byte(metricsToken+"\n"), 0o600))
	for user, pw := range passwords {
		must(t, os.MkdirAll(filepath.Join(n.dir, "secrets", user), 0o700))
		must(t, os.WriteFile(filepath.Join(n.dir, "secrets", user, "password"), []byte(pw+"\n"), 0o600))
	}
	return n
}

func writeTLS(t *testing.T, dir string, data map[string][]byte) {
	t.Helper()
	must(t, os.MkdirAll(dir, 0o700))
	for k, v := range data {
		must(t, os.WriteFile(filepath.Join(dir, k), v, 0o600))
	}
}

// start runs `manager instance run` for n; the process gets SIGTERM at cleanup.
func (n *node) start(t *testing.T, bin, rootfs, kubeconfig, namespace string, peers []*node) {
	t.Helper()
	if n.kubeconfig != "" {
		kubeconfig = n.kubeconfig
	}
	args := []string{"instance", "run", "--pod-name", n.name, "--namespace", namespace, "--cluster", "db",
		"--kubeconfig", kubeconfig, "--data-dir", n.dir + "/data", "--run-dir", n.dir + "/run",
		"--server-tls-dir", n.dir + "/server-tls", "--client-tls-dir", n.dir + "/client-tls",
		"--mysqld-root", rootfs,
		"--mysqld-command", "chroot " + rootfs + " /usr/sbin/mysqld", "--mysqld-user", "root",
		"--bind-address", n.host, "--port", strconv.Itoa(n.mysqlPort), "--report-host", n.host,
		"--manager-address", net.JoinHostPort(n.host, strconv.Itoa(n.apiPort)),
		"--probe-address", net.JoinHostPort(n.host, strconv.Itoa(n.probes)),
		"--metrics-address", net.JoinHostPort(n.host, strconv.Itoa(n.metrics)), "--metrics-token-file", n.dir + "/metrics-token",
		"--reconcile-interval", "200ms", "--grace-period", "20s",
	}
	for _, o := range []string{"innodb_buffer_pool_size=32M", "innodb_redo_log_capacity=32M",
		"max_connections=50", "performance_schema=OFF", "secure_file_priv="} {
		args = append(args, "--mysqld-option", o)
	}
	if !n.passwordsFromAPI {
		args = append(args, "--secrets-dir", n.dir+"/secrets")
	}
	for _, p := range peers {
		if p != n {
			apiPort, mysqlPort := p.apiPort, p.mysqlPort
			if port, ok := n.peerAPIPorts[p.name]; ok {
				apiPort = port
			}
			if port, ok := n.peerMySQLPorts[p.name]; ok {
				mysqlPort = port
			}
			args = append(args, "--peer", fmt.Sprintf("%s=%s:%d:%d", p.name, p.host, mysqlPort, apiPort))
		}
	}
	args = append(args, n.args...)
	log, err := os.Create(filepath.Join(n.dir, "manager.log"))
	must(t, err)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	n.manager, err = proc.StartTied(cmd)
	log.Close() // the manager holds its own descriptor
	must(t, err)
	cfg := driver.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = "root", passwords["root"], "unix", n.socket()
	if n.rootPassword != "" {
		cfg.Passwd = n.rootPassword
	}
	n.op = must1(mysql.NewFactory().NewLocalAdmin(cfg))(t)
	n.db = must1(mysql.OpenLocalAdmin(cfg))(t)
	n.stopped = false
	if !n.cleanup {
		n.cleanup = true
		t.Cleanup(func() { n.stop(t) })
	}
}

// socket is the path of mysqld's Unix socket.
func (n *node) socket() string { return filepath.Join(n.dir, "run", "mysqld.sock") }

// stop sends SIGTERM and waits for the manager to shut mysqld down.
func (n *node) stop(t *testing.T) {
	if n.stopped {
		return
	}
	n.stopped = true
	_ = n.op.Close()
	_ = n.db.Close()
	switch err := n.manager.Stop(30 * time.Second); {
	case errors.Is(err, proc.ErrKilled):
		t.Errorf("%s: the manager did not stop within 30 s of SIGTERM", n.name)
	case n.manager.Err() != nil:
		t.Errorf("%s: the manager exited after SIGTERM with %v, want exit status 0 (mysqld stopped cleanly)",
			n.name, n.manager.Err())
	}
	if t.Failed() {
		log, _ := os.ReadFile(filepath.Join(n.dir, "manager.log"))
		t.Logf("%s manager log (tail):\n%s", n.name, tail(string(log), 4000))
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// status reads the local server's status, nil while mysqld does not answer.
func (n *node) status(t *testing.T) *mysql.Status {
	st, err := n.op.Status(t.Context())
	if err != nil {
		return nil
	}
	return st
}

// gtidExecuted reads the local server's gtid_executed; the test fails when it cannot.
func (n *node) gtidExecuted(t *testing.T) gtid.Set {
	t.Helper()
	st, err := n.op.Status(t.Context())
	if err != nil {
		t.Fatalf("%s: reading gtid_executed: %v", n.name, err)
	}
	return st.GTIDExecuted
}

func (n *node) exec(t *testing.T, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := n.db.ExecContext(t.Context(), s); err != nil {
			t.Fatalf("%s: %s: %v", n.name, s, err)
		}
	}
}

// errantWrite lifts read-only and inserts row 100 into app.t at once, before the manager's next
// pass can turn the server read-only again: a transaction no primary ever had.
func (n *node) errantWrite(t *testing.T) {
	t.Helper()
	conn, err := n.db.Conn(t.Context())
	must(t, err)
	defer conn.Close()
	eventually(t, 10*time.Second, "an errant write on "+n.name, func() bool {
		if _, err := conn.ExecContext(t.Context(), "SET GLOBAL read_only = OFF"); err != nil {
			return false
		}
		_, err := conn.ExecContext(t.Context(), "INSERT INTO app.t VALUES (100)")
		return err == nil
	})
}

// probe returns the HTTP status of a probe path.
func (n *node) probe(path string) int {
	resp, err := http.Get("http://" + net.JoinHostPort(n.host, strconv.Itoa(n.probes)) + path)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func (n *node) target() instanceclient.Target {
	return instanceclient.Target{Instance: n.name, Address: net.JoinHostPort(n.host, strconv.Itoa(n.apiPort)), ServerName: n.host}
}

// operatorTarget is where the operator reaches n's control API: through its proxy when it has one.
func (n *node) operatorTarget() instanceclient.Target {
	t := n.target()
	if n.operatorAPIPort != 0 {
		t.Address = net.JoinHostPort(n.host, strconv.Itoa(n.operatorAPIPort))
	}
	return t
}

// mysqldPID reads the pid file mysqld writes.
func (n *node) mysqldPID(t *testing.T) int {
	data, err := os.ReadFile(filepath.Join(n.dir, "run", "mysqld.pid"))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return pid
}

// eventually is check.Eventually for a condition without an error.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	check.Eventually(t, timeout, what, check.True(cond))
}

// rootFS returns the MySQL root filesystem and a fresh directory inside it for the instances.
func rootFS(t *testing.T) (rootfs, base string) {
	t.Helper()
	rootfs, err := mysqldtest.RootFS()
	if err != nil {
		t.Fatalf("MySQL root filesystem (make test builds it): %v", err)
	}
	must(t, os.MkdirAll(filepath.Join(rootfs, "tmp"), 0o1777))
	base, err = os.MkdirTemp(filepath.Join(rootfs, "tmp"), "cnm-im-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	return rootfs, base
}

// withRootPassword gives node n root password pw instead of the shared one: the file the manager
// reads and the test's own connections.
func withRootPassword(t *testing.T, pw string) func(*node) {
	return func(n *node) {
		must(t, os.WriteFile(filepath.Join(n.dir, "secrets", "root", "password"), []byte(pw+"\n"), 0o600))
		n.rootPassword = pw
	}
}

// withAppPassword gives the node's Cluster its own application owner's password.
func withAppPassword(t *testing.T, pw string) func(*node) {
	return func(n *node) {
		must(t, os.WriteFile(filepath.Join(n.dir, "secrets", "app", "password"), []byte(pw+"\n"), 0o600))
	}
}

// step is one stage of a test on world W whose later stages depend on the earlier ones.
type step[W any] struct {
	name string
	run  func(*testing.T, W)
}

// runSteps runs steps in order, each as a subtest, and stops at the first that fails; explain,
// when given, runs at the end of each step (it reports the world's state when the step failed).
func runSteps[W any](t *testing.T, w W, steps []step[W], explain func(*testing.T)) {
	t.Helper()
	for _, s := range steps {
		if !t.Run(s.name, func(t *testing.T) {
			if explain != nil {
				defer explain(t)
			}
			s.run(t, w)
		}) {
			t.Fatalf("step %q failed; later steps depend on it", s.name)
		}
	}
}

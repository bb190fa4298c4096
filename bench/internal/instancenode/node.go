package instancenode

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	driver "github.com/go-sql-driver/mysql"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/certs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/proc"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/mysqldtest"
)

// RootPassword is root@localhost's password, which the manager sets on the primary.
const RootPassword = "root-pw"

// Options are what differs between the benchmarks' instance managers.
type Options struct {
	// ReconcileInterval is the manager's --reconcile-interval; 0 leaves the manager's default.
	ReconcileInterval time.Duration
	// MetricsToken, when set, has the manager serve /metrics (HTTPS, its server certificate) on
	// a free port of its address (MetricsPort) to scrapers presenting this bearer token; unset,
	// the manager gets no metrics flags.
	MetricsToken string
	// Args are more arguments of `manager instance run`.
	Args []string
}

// Node is one instance manager process with its directories and addresses.
type Node struct {
	Name, Host, Dir               string
	MySQLPort, APIPort, ProbePort int
	// MetricsPort serves /metrics when Options.MetricsToken is set.
	MetricsPort int
	opts        Options
	Manager     *proc.Child
	// DB is a root connection over mysqld's socket, once the manager started.
	DB *sql.DB
}

// PKI is the cluster CA and the replication client certificate.
type PKI struct{ CA, Replication *certs.KeyPair }

func newPKI() (PKI, error) {
	ca, err := certs.NewCA("db-ca", time.Now())
	if err != nil {
		return PKI{}, err
	}
	repl, err := certs.Issue(ca, certs.Request{CommonName: "replication", Client: true}, time.Now())
	return PKI{CA: ca, Replication: repl}, err
}

// newNode writes the node's certificates (a server certificate for its address) and passwords.
func newNode(p PKI, base, name, host string, opts Options) (*Node, error) {
	n := &Node{Name: name, Host: host, Dir: filepath.Join(base, name), opts: opts}
	ports, err := mysqldtest.FreePorts(host, 4)
	if err != nil {
		return nil, err
	}
	n.MySQLPort, n.APIPort, n.ProbePort, n.MetricsPort = ports[0], ports[1], ports[2], ports[3]
	server, err := certs.Issue(p.CA, certs.Request{CommonName: name, IPAddresses: []net.IP{net.ParseIP(host)}}, time.Now())
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for k, v := range server.SecretData(p.CA) {
		files["server-tls/"+k] = v
	}
	for k, v := range p.Replication.SecretData(p.CA) {
		files["client-tls/"+k] = v
	}
	files["secrets/replication/password"], files["secrets/backup/password"] = []byte("repl-pw"), []byte("backup-pw")
	files["secrets/root/password"], files["secrets/app/password"] = []byte(RootPassword), []byte("app-pw")
	files["secrets/fence/password"] = []byte("fence-pw")
	if opts.MetricsToken != "" {
		files["metrics/token"] = []byte(opts.MetricsToken)
	}
	for rel, data := range files {
		path := filepath.Join(n.Dir, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// start runs `manager instance run` for n, logging into <dir>/manager.log.
func (n *Node) start(bin, rootfs, kubeconfig, namespace string, peers []*Node) error {
	args := []string{"instance", "run", "--pod-name", n.Name, "--namespace", namespace, "--cluster", ClusterName,
		"--kubeconfig", kubeconfig, "--data-dir", n.Dir + "/data", "--run-dir", n.Dir + "/run",
		"--server-tls-dir", n.Dir + "/server-tls", "--client-tls-dir", n.Dir + "/client-tls",
		"--secrets-dir", n.Dir + "/secrets", "--mysqld-root", rootfs,
		"--mysqld-command", "chroot " + rootfs + " /usr/sbin/mysqld", "--mysqld-user", "root",
		"--bind-address", n.Host, "--port", strconv.Itoa(n.MySQLPort), "--report-host", n.Host,
		"--manager-address", net.JoinHostPort(n.Host, strconv.Itoa(n.APIPort)),
		"--probe-address", net.JoinHostPort(n.Host, strconv.Itoa(n.ProbePort)),
	}
	if n.opts.MetricsToken != "" {
		args = append(args, "--metrics-address", net.JoinHostPort(n.Host, strconv.Itoa(n.MetricsPort)),
			"--metrics-token-file", filepath.Join(n.Dir, "metrics", "token"))
	}
	if n.opts.ReconcileInterval > 0 {
		args = append(args, "--reconcile-interval", n.opts.ReconcileInterval.String())
	}
	for _, o := range []string{"innodb_buffer_pool_size=256M", "innodb_redo_log_capacity=128M",
		"max_connections=50", "performance_schema=OFF", "secure_file_priv=", "max_allowed_packet=64M"} {
		args = append(args, "--mysqld-option", o)
	}
	for _, p := range peers {
		if p != n {
			args = append(args, "--peer", fmt.Sprintf("%s=%s:%d:%d", p.Name, p.Host, p.MySQLPort, p.APIPort))
		}
	}
	args = append(args, n.opts.Args...)
	log, err := os.Create(filepath.Join(n.Dir, "manager.log"))
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	n.Manager, err = proc.StartTied(cmd)
	log.Close() // the manager holds its own descriptor
	if err != nil {
		return err
	}
	cfg := driver.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = "root", RootPassword, "unix", filepath.Join(n.Dir, "run", "mysqld.sock")
	n.DB, err = mysql.OpenLocalAdmin(cfg)
	return err
}

// MetricsURL is where the manager serves /metrics when Options.MetricsToken is set; its server
// certificate names Host.
func (n *Node) MetricsURL() string {
	return "https://" + net.JoinHostPort(n.Host, strconv.Itoa(n.MetricsPort)) + "/metrics"
}

// LogTail is the last lines of the manager's log, for an error message.
func (n *Node) LogTail(lines int) string {
	data, err := os.ReadFile(filepath.Join(n.Dir, "manager.log"))
	if err != nil {
		return err.Error()
	}
	all := strings.Split(strings.TrimSpace(string(data)), "\n")
	return strings.Join(all[max(0, len(all)-lines):], "\n")
}

// Stop sends SIGTERM and waits for the manager to stop mysqld.
func (n *Node) Stop() {
	if n.Manager == nil {
		return
	}
	if n.DB != nil {
		_ = n.DB.Close()
	}
	_ = n.Manager.Stop(60 * time.Second)
}

// Ready reports whether the readiness probe succeeds.
func (n *Node) Ready() bool {
	resp, err := http.Get("http://" + net.JoinHostPort(n.Host, strconv.Itoa(n.ProbePort)) + "/readyz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// WaitReady polls until every node is ready.
func WaitReady(ctx context.Context, timeout time.Duration, nodes ...*Node) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		all := true
		for _, n := range nodes {
			all = all && n.Ready()
		}
		if all {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for readiness: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

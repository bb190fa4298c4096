package main

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
	"time"

	driver "github.com/go-sql-driver/mysql"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/certs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/proc"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/mysqldtest"
)

// rootPassword is root@localhost's password, which the manager sets on the primary.
const rootPassword = "root-pw"

// node is one instance manager process with its directories and addresses.
type node struct {
	name, host, dir           string
	mysqlPort, apiPort, probe int
	manager                   *proc.Child
	db                        *sql.DB
}

// pki is the cluster CA and the replication client certificate.
type pki struct{ ca, replication *certs.KeyPair }

func newPKI() (pki, error) {
	ca, err := certs.NewCA("db-ca", time.Now())
	if err != nil {
		return pki{}, err
	}
	repl, err := certs.Issue(ca, certs.Request{CommonName: "replication", Client: true}, time.Now())
	return pki{ca: ca, replication: repl}, err
}

func newNode(p pki, base, name, host string) (*node, error) {
	n := &node{name: name, host: host, dir: filepath.Join(base, name)}
	ports, err := mysqldtest.FreePorts(host, 3)
	if err != nil {
		return nil, err
	}
	n.mysqlPort, n.apiPort, n.probe = ports[0], ports[1], ports[2]
	server, err := certs.Issue(p.ca, certs.Request{CommonName: name, IPAddresses: []net.IP{net.ParseIP(host)}}, time.Now())
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for k, v := range server.SecretData(p.ca) {
		files["server-tls/"+k] = v
	}
	for k, v := range p.replication.SecretData(p.ca) {
		files["client-tls/"+k] = v
	}
	files["secrets/replication/password"], files["secrets/backup/password"] = []byte("repl-pw"), []byte("backup-pw")
	files["secrets/root/password"], files["secrets/app/password"] = []byte(rootPassword), []byte("app-pw")
	for rel, data := range files {
		path := filepath.Join(n.dir, rel)
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
func (n *node) start(bin, rootfs, kubeconfig, namespace string, peers []*node) error {
	args := []string{"instance", "run", "--pod-name", n.name, "--namespace", namespace, "--cluster", "db",
		"--kubeconfig", kubeconfig, "--data-dir", n.dir + "/data", "--run-dir", n.dir + "/run",
		"--server-tls-dir", n.dir + "/server-tls", "--client-tls-dir", n.dir + "/client-tls",
		"--secrets-dir", n.dir + "/secrets", "--mysqld-root", rootfs,
		"--mysqld-command", "chroot " + rootfs + " /usr/sbin/mysqld", "--mysqld-user", "root",
		"--bind-address", n.host, "--port", strconv.Itoa(n.mysqlPort), "--report-host", n.host,
		"--manager-address", net.JoinHostPort(n.host, strconv.Itoa(n.apiPort)),
		"--probe-address", net.JoinHostPort(n.host, strconv.Itoa(n.probe)), "--reconcile-interval", "200ms",
	}
	for _, o := range []string{"innodb_buffer_pool_size=256M", "innodb_redo_log_capacity=128M",
		"max_connections=50", "performance_schema=OFF", "secure_file_priv=", "max_allowed_packet=64M"} {
		args = append(args, "--mysqld-option", o)
	}
	for _, p := range peers {
		if p != n {
			args = append(args, "--peer", fmt.Sprintf("%s=%s:%d:%d", p.name, p.host, p.mysqlPort, p.apiPort))
		}
	}
	log, err := os.Create(filepath.Join(n.dir, "manager.log"))
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	n.manager, err = proc.StartTied(cmd)
	log.Close() // the manager holds its own descriptor
	if err != nil {
		return err
	}
	cfg := driver.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = "root", rootPassword, "unix", filepath.Join(n.dir, "run", "mysqld.sock")
	n.db, err = mysql.OpenLocalAdmin(cfg)
	return err
}

// stop sends SIGTERM and waits for the manager to stop mysqld.
func (n *node) stop() {
	if n.manager == nil {
		return
	}
	_ = n.db.Close()
	_ = n.manager.Stop(60 * time.Second)
}

// ready reports whether the readiness probe succeeds.
func (n *node) ready() bool {
	resp, err := http.Get("http://" + net.JoinHostPort(n.host, strconv.Itoa(n.probe)) + "/readyz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// waitReady polls until every node is ready.
func waitReady(ctx context.Context, timeout time.Duration, nodes ...*node) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		all := true
		for _, n := range nodes {
			all = all && n.ready()
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

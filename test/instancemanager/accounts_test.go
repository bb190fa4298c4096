package instancemanager

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"net"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	driver "github.com/go-sql-driver/mysql"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/certs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
)

// accountsWorld is a primary and a replica whose managers read the passwords from the Secrets
// on the API server, as in a Pod; the Cluster asks for the application database shop owned by
// shopper.
type accountsWorld struct {
	*world
	pki pki
	// secrets are the Secrets <cluster>-<user> as the operator creates them, by user.
	secrets map[string]*corev1.Secret
}

// TestAccounts checks the accounts a new Cluster gets at bootstrap: the application connects
// with exactly what the app Secret holds and owns its database only; root has the root Secret's
// password; the replication and clone donor accounts take only the replication certificate.
func TestAccounts(t *testing.T) {
	w := startAccountsWorld(t)
	steps := []step[*accountsWorld]{
		{"a primary and a replica cloned from it come up", func(t *testing.T, w *accountsWorld) {
			w.waitRoles(t, 120*time.Second, "db-1", "db-2")
		}},
		{"the application connects with the app Secret's fields and URI, and owns its database only", testAppAccount},
		{"root needs the root Secret's password, on the primary and the replica", testRootPassword},
		{"the replication account refuses another certificate of the cluster CA", testReplicationSubject},
		{"require_secure_transport is on: plain TCP is refused, TLS and the socket are not, the replica replicates", testSecureTransport},
	}
	runSteps(t, w, steps, nil)
}

func startAccountsWorld(t *testing.T) *accountsWorld {
	env := kubetest.StartT(t, kubetest.Options{})
	bin := buildManager(t)
	rootfs, base := rootFS(t)
	p := newPKI(t)
	ns := env.NewNamespace(t)
	cluster := &v1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns},
		Spec: v1alpha1.ClusterSpec{Instances: 2, MaxSwitchoverDelay: 60, Storage: v1alpha1.StorageConfiguration{Size: resource.MustParse("1Gi")},
			Bootstrap: &v1alpha1.BootstrapConfiguration{InitDB: &v1alpha1.BootstrapInitDB{Database: "shop", Owner: "shopper"}}},
	}
	must(t, env.Client.Create(t.Context(), cluster))
	w := &accountsWorld{world: &world{env: env, key: types.NamespacedName{Namespace: ns, Name: "db"}, nodes: map[string]*node{}},
		pki: p, secrets: map[string]*corev1.Secret{}}
	for _, user := range specs.Users {
		password := must1(specs.GeneratePassword(rand.Reader))(t)
		s := specs.BuildUserSecret(cluster, user, password)
		must(t, env.Client.Create(t.Context(), s))
		w.secrets[user] = s
	}
	w.setTarget(t, "db-1")
	first := 20 + syscall.Getpid()%200
	var all []*node
	for i := 1; i <= 2; i++ {
		n := newNode(t, p, base, "db-"+strconv.Itoa(i), net.IPv4(127, 0, 1, byte(first+i)).String())
		n.passwordsFromAPI, n.rootPassword = true, w.password("root")
		w.nodes[n.name] = n
		all = append(all, n)
	}
	kubeconfig := env.KubeconfigFile(t)
	w.start = func(t *testing.T, n *node) { n.start(t, bin, rootfs, kubeconfig, ns, all) }
	for _, n := range all {
		w.start(t, n)
	}
	return w
}

func (w *accountsWorld) password(user string) string {
	return string(w.secrets[user].Data[corev1.BasicAuthPasswordKey])
}

// appSecret reads <cluster>-app back from the API server.
func (w *accountsWorld) appSecret(t *testing.T) map[string]string {
	t.Helper()
	var s corev1.Secret
	must(t, w.env.Client.Get(t.Context(), client.ObjectKey{Namespace: w.key.Namespace, Name: "db-app"}, &s))
	out := map[string]string{}
	for k, v := range s.Data {
		out[k] = string(v)
	}
	return out
}

// serviceDialer registers a network that resolves host:port, as the Service in the app Secret
// names it, to n: what the cluster DNS and the -rw Service do for an application in a Pod.
func serviceDialer(t *testing.T, hostPort string, n *node) string {
	t.Helper()
	name := "svc-" + strings.ReplaceAll(t.Name(), "/", "-")
	target := net.JoinHostPort(n.host, strconv.Itoa(n.mysqlPort))
	driver.RegisterDialContext(name, func(ctx context.Context, addr string) (net.Conn, error) {
		if addr != hostPort {
			return nil, &net.AddrError{Err: "not the Service of the app Secret", Addr: addr}
		}
		var d net.Dialer
		return d.DialContext(ctx, "tcp", target)
	})
	return name
}

func openDB(t *testing.T, cfg *driver.Config) *sql.DB {
	t.Helper()
	connector := must1(driver.NewConnector(cfg))(t)
	db := sql.OpenDB(connector)
	t.Cleanup(func() { db.Close() })
	return db
}

func testAppAccount(t *testing.T, w *accountsWorld) {
	s := w.appSecret(t)
	for _, k := range []string{"username", "password", "host", "port", "dbname", "uri", "jdbc-uri"} {
		if s[k] == "" {
			t.Fatalf("the app Secret has no %s", k)
		}
	}
	if s["username"] != "shopper" || s["dbname"] != "shop" || s["host"] != "db-rw."+w.key.Namespace+".svc" || s["port"] != "3306" {
		t.Fatalf("the app Secret names %s@%s:%s/%s, want shopper@db-rw.<ns>.svc:3306/shop", s["username"], s["host"], s["port"], s["dbname"])
	}
	primary := w.nodes["db-1"]
	hostPort := net.JoinHostPort(s["host"], s["port"])
	network := serviceDialer(t, hostPort, primary)

	// The fields, as an application would put them together (TLS: the server requires it
	// unless require_secure_transport is turned off, and the URIs ask for it).
	fields := driver.NewConfig()
	fields.User, fields.Passwd, fields.Net, fields.Addr, fields.DBName = s["username"], s["password"], network, hostPort, s["dbname"]
	fields.TLSConfig = "skip-verify"
	// The URI, parsed as a client library would.
	u := must1(url.Parse(s["uri"]))(t)
	uriPassword, _ := u.User.Password()
	if u.Scheme != "mysql" || u.Host != hostPort || u.Query().Get("ssl-mode") != "VERIFY_IDENTITY" {
		t.Fatalf("the URI %s is not mysql://...@%s/...?ssl-mode=VERIFY_IDENTITY", u.Redacted(), hostPort)
	}
	fromURI := driver.NewConfig()
	fromURI.User, fromURI.Passwd, fromURI.Net, fromURI.Addr, fromURI.DBName = u.User.Username(), uriPassword, network, u.Host,
		strings.TrimPrefix(u.Path, "/")
	fromURI.TLSConfig = "skip-verify"

	for i, cfg := range []*driver.Config{fields, fromURI} {
		via := []string{"the Secret's fields", "the Secret's URI"}[i]
		db := openDB(t, cfg)
		table := "t" + strconv.Itoa(i)
		for _, stmt := range []string{"CREATE TABLE " + table + " (id INT PRIMARY KEY)", "INSERT INTO " + table + " VALUES (1)"} {
			if _, err := db.ExecContext(t.Context(), stmt); err != nil {
				t.Fatalf("through %s: %s: %v", via, stmt, err)
			}
		}
		var current string
		must(t, db.QueryRowContext(t.Context(), "SELECT DATABASE()").Scan(&current))
		if current != "shop" {
			t.Errorf("through %s the session's database is %q, want shop", via, current)
		}
		for _, stmt := range []string{"CREATE DATABASE elsewhere", "CREATE TABLE mysql.stolen (id INT PRIMARY KEY)",
			"CREATE TABLE sys.stolen (id INT PRIMARY KEY)", "SELECT COUNT(*) FROM mysql.user"} {
			if _, err := db.ExecContext(t.Context(), stmt); err == nil {
				t.Errorf("through %s the application ran %q outside its database", via, stmt)
			}
		}
	}
	// The accounts reached the replica through the binary log, like any write.
	eventually(t, 30*time.Second, "the application's tables on the replica", func() bool {
		var n int
		err := w.nodes["db-2"].db.QueryRowContext(t.Context(), "SELECT COUNT(*) FROM shop.t0 JOIN shop.t1 USING (id)").Scan(&n)
		return err == nil && n == 1
	})
}

func testRootPassword(t *testing.T, w *accountsWorld) {
	for _, n := range []*node{w.nodes["db-1"], w.nodes["db-2"]} {
		cfg := driver.NewConfig()
		cfg.User, cfg.Net, cfg.Addr = "root", "unix", n.socket()
		err := openDB(t, cfg).PingContext(t.Context())
		var me *driver.MySQLError
		if err == nil || !asMySQLError(err, &me) || me.Number != 1045 {
			t.Errorf("%s: root without a password over the socket: %v, want access denied (1045)", n.name, err)
		}
		cfg.Passwd = w.password("root")
		if err := openDB(t, cfg).PingContext(t.Context()); err != nil {
			t.Errorf("%s: root with the root Secret's password: %v", n.name, err)
		}
		// root is root@localhost only: over TCP, even with its password, it is no one.
		tcp := driver.NewConfig()
		tcp.User, tcp.Passwd, tcp.Net, tcp.Addr, tcp.TLSConfig = "root", w.password("root"), "tcp",
			net.JoinHostPort(n.host, strconv.Itoa(n.mysqlPort)), "skip-verify"
		if err := openDB(t, tcp).PingContext(t.Context()); err == nil {
			t.Errorf("%s: root logged in over TCP", n.name)
		}
	}
}

func asMySQLError(err error, target **driver.MySQLError) bool {
	me, ok := err.(*driver.MySQLError)
	if ok {
		*target = me
	}
	return ok
}

// testReplicationSubject logs in as replication and backup over TLS with their passwords,
// presenting the operator's client certificate (same CA, another subject), then the
// replication certificate.
func testReplicationSubject(t *testing.T, w *accountsWorld) {
	primary := w.nodes["db-1"]
	roots := x509.NewCertPool()
	roots.AddCert(w.pki.ca.Cert)
	login := func(user string, kp *certs.KeyPair) error {
		name := "subject-" + user + "-" + kp.Cert.Subject.CommonName
		must(t, driver.RegisterTLSConfig(name, &tls.Config{RootCAs: roots, ServerName: primary.host,
			Certificates: []tls.Certificate{must1(tls.X509KeyPair(kp.CertPEM, kp.KeyPEM))(t)}}))
		t.Cleanup(func() { driver.DeregisterTLSConfig(name) })
		cfg := driver.NewConfig()
		cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.TLSConfig = user, w.password(user), "tcp",
			net.JoinHostPort(primary.host, strconv.Itoa(primary.mysqlPort)), name
		return openDB(t, cfg).PingContext(t.Context())
	}
	for _, user := range []string{"replication", "backup"} {
		var me *driver.MySQLError
		if err := login(user, w.pki.operator); err == nil || !asMySQLError(err, &me) || me.Number != 1045 {
			t.Errorf("%s with the operator's certificate (%s): %v, want access denied (1045)", user, w.pki.operator.Cert.Subject, err)
		}
		if err := login(user, w.pki.replication); err != nil {
			t.Errorf("%s with the replication certificate: %v", user, err)
		}
	}
}

// errSecureTransportRequired is ER_SECURE_TRANSPORT_REQUIRED.
const errSecureTransportRequired = 3159

func testSecureTransport(t *testing.T, w *accountsWorld) {
	s := w.appSecret(t)
	for _, n := range []*node{w.nodes["db-1"], w.nodes["db-2"]} {
		var on bool
		must(t, n.db.QueryRowContext(t.Context(), "SELECT @@GLOBAL.require_secure_transport").Scan(&on))
		if !on {
			t.Errorf("%s: require_secure_transport is off", n.name)
		}
		plain := driver.NewConfig()
		plain.User, plain.Passwd, plain.Net, plain.Addr = s["username"], s["password"], "tcp", net.JoinHostPort(n.host, strconv.Itoa(n.mysqlPort))
		err := openDB(t, plain).PingContext(t.Context())
		var me *driver.MySQLError
		if !asMySQLError(err, &me) || me.Number != errSecureTransportRequired {
			t.Errorf("%s: the application over plain TCP: %v, want error %d (secure transport required)", n.name, err, errSecureTransportRequired)
		}
		secure := plain.Clone()
		secure.TLSConfig = "skip-verify"
		if err := openDB(t, secure).PingContext(t.Context()); err != nil {
			t.Errorf("%s: the application over TLS: %v", n.name, err)
		}
	}
	// The replica follows over TLS and the manager over the socket: a write reaches it.
	w.nodes["db-1"].exec(t, "INSERT INTO shop.t0 VALUES (2)")
	w.waitRoles(t, 30*time.Second, "db-1", "db-2")
}

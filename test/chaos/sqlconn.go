package chaos

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"database/sql/driver"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Account is the MySQL account the checker connects with.
type Account struct {
	User, Password string
	// CA, when set, is the certificate the server's must chain to, and ServerName the name it
	// must carry: the application Secret's ca.crt and host (every instance's certificate names
	// every role Service, so the -rw name verifies on any instance dialed by its IP).
	CA         []byte
	ServerName string
}

// dialConfig is how every connection of the checker is opened: through the node's network
// namespace, over TLS (the account uses caching_sha2_password), verifying the server as an
// application does with the app Secret (Account.CA; the checker's own account, used only when
// the Cluster has no app account, does not verify), with short network timeouts so a cut server
// never stalls a loop for long.
func (e *Env) dialConfig(a Account, addr string, read time.Duration) *mysql.Config {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd = a.User, a.Password
	cfg.Net, cfg.Addr = "tcp", addr
	cfg.DialFunc = e.Dialer.DialContext
	cfg.TLS = &tls.Config{InsecureSkipVerify: true}
	if len(a.CA) > 0 {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(a.CA)
		cfg.TLS = &tls.Config{RootCAs: pool, ServerName: a.ServerName, MinVersion: tls.VersionTLS12}
	}
	cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = time.Second, read, read
	cfg.InterpolateParams = true
	cfg.ParseTime = true
	cfg.Logger = quiet{} // broken connections are the point of the exercise; they are counted, not logged
	return cfg
}

type quiet struct{}

func (quiet) Print(...any) {}

// conn is one connection that is replaced after any error: database/sql's pool would retry on
// another connection behind our back, which would hide a broken one.
type conn struct {
	db *sql.DB
	c  *sql.Conn
}

func (e *Env) newConn(a Account, addr string, read time.Duration) (*conn, error) {
	connector, err := mysql.NewConnector(e.dialConfig(a, addr, read))
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(connector)
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	return &conn{db: db}, nil
}

// get returns the open connection, dialing a fresh one if there is none.
func (c *conn) get(ctx context.Context) (*sql.Conn, error) {
	if c.c != nil {
		return c.c, nil
	}
	sc, err := c.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	c.c = sc
	return sc, nil
}

// drop discards the connection (marked bad, so the pool does not keep it).
func (c *conn) drop() {
	if c.c == nil {
		return
	}
	_ = c.c.Raw(func(any) error { return driver.ErrBadConn })
	_ = c.c.Close()
	c.c = nil
}

func (c *conn) close() {
	c.drop()
	_ = c.db.Close()
}

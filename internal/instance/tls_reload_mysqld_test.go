package instance

import (
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	driver "github.com/go-sql-driver/mysql"
	"k8s.io/utils/clock"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/mysqldtest"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/tlsfiles"
)

// replaceFile writes data to path through a rename, as a reader must never see half a file.
func replaceFile(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".new")
	check.Must(t, os.WriteFile(tmp, data, 0o600))
	check.Must(t, os.Rename(tmp, path))
}

// clientTLS trusts caPEM (one CA or a bundle), verifies the server's name and presents
// certPEM/keyPEM; the serial of each certificate the server presents is sent to seen.
func clientTLS(t *testing.T, host string, caPEM, certPEM, keyPEM []byte, seen chan<- *big.Int) *tls.Config {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("no CA in the PEM")
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	check.Must(t, err)
	return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}, ServerName: host, MinVersion: tls.VersionTLS12,
		VerifyConnection: func(cs tls.ConnectionState) error {
			if seen != nil {
				seen <- cs.PeerCertificates[0].SerialNumber
			}
			return nil
		}}
}

// presentedSerial connects a new session to s with cfg and returns the serial of the
// certificate mysqld presented.
func presentedSerial(t *testing.T, s *mysqldtest.Server, cfg func(chan<- *big.Int) *tls.Config) (*big.Int, error) {
	t.Helper()
	seen := make(chan *big.Int, 4)
	dc := s.MySQLConfig("root", "", "")
	dc.TLSConfig, dc.TLS = "", cfg(seen)
	connector, err := driver.NewConnector(dc)
	check.Must(t, err)
	db := sql.OpenDB(connector)
	defer db.Close()
	if err := db.PingContext(t.Context()); err != nil {
		return nil, err
	}
	return <-seen, nil
}

// TestMysqldServesRenewedCertificateAfterReload: mysqld whose server certificate files are
// replaced keeps presenting the old certificate (it reads them at start only) until MysqldTLS
// sees the change and reloads; then new sessions get the new certificate, without a restart.
// A CA roll follows: with both CAs in ssl_ca, client certificates of either CA are accepted and
// the server presents its leaf of the new CA.
func TestMysqldServesRenewedCertificateAfterReload(t *testing.T) {
	ca1, err := mysqldtest.NewCA()
	check.Must(t, err)
	s, err := mysqldtest.StartServer(t.Context(), mysqldtest.Config{CA: ca1})
	check.Must(t, err)
	t.Cleanup(func() { _ = s.Close() })
	pid := s.PID()
	ca2, err := mysqldtest.NewCA()
	check.Must(t, err)
	bundle := append(append([]byte(nil), ca1.CertPEM...), ca2.CertPEM...)
	client1Cert, client1Key, err := ca1.Issue("root", x509.ExtKeyUsageClientAuth)
	check.Must(t, err)
	client2Cert, client2Key, err := ca2.Issue("root", x509.ExtKeyUsageClientAuth)
	check.Must(t, err)
	viaCA1 := func(seen chan<- *big.Int) *tls.Config {
		return clientTLS(t, s.Host, bundle, client1Cert, client1Key, seen)
	}
	viaCA2 := func(seen chan<- *big.Int) *tls.Config {
		return clientTLS(t, s.Host, bundle, client2Cert, client2Key, seen)
	}
	opCfg := s.MySQLConfig("root", "", "")
	opCfg.TLSConfig, opCfg.TLS = "", viaCA1(nil)
	op, err := mysql.NewFactory().New(opCfg)
	check.Must(t, err)
	t.Cleanup(func() { _ = op.Close() })
	files, err := tlsfiles.NewLoader(tlsfiles.Files{CA: s.TLS.CAFile, Cert: s.TLS.CertFile, Key: s.TLS.KeyFile}, time.Millisecond, nil)
	check.Must(t, err)
	r := &MysqldTLS{Files: files, Op: op, Clock: clock.RealClock{}, Log: testr.New(t)}
	reload := func(want bool) {
		t.Helper()
		time.Sleep(5 * time.Millisecond) // past the loader's interval
		got, err := r.Check(t.Context())
		check.Must(t, err)
		if got != want {
			t.Fatalf("reloaded %v, want %v", got, want)
		}
	}
	reload(true) // the first check loads what the files hold
	reload(false)
	initial := presented(t, s, viaCA1)

	// Renewal under the same CA.
	renewedCert, renewedKey, err := ca1.Issue("mysqld renewed", x509.ExtKeyUsageServerAuth, s.Host, "127.0.0.1")
	check.Must(t, err)
	renewed := certSerial(t, renewedCert, renewedKey)
	replaceFile(t, s.TLS.KeyFile, renewedKey)
	replaceFile(t, s.TLS.CertFile, renewedCert)
	if got := presented(t, s, viaCA1); got.Cmp(initial) != 0 {
		t.Fatalf("mysqld presented %x before any reload, want the certificate it started with (%x)", got, initial)
	}
	if _, err := presentedSerial(t, s, viaCA2); err == nil {
		t.Fatal("a client certificate of a CA not in ssl_ca is accepted")
	}
	reload(true)
	if got := presented(t, s, viaCA1); got.Cmp(renewed) != 0 {
		t.Fatalf("after the reload mysqld presents %x, want the renewed certificate %x", got, renewed)
	}

	// CA roll: both CAs trusted, then the leaf of the new CA.
	replaceFile(t, s.TLS.CAFile, bundle)
	reload(true)
	if _, err := presentedSerial(t, s, viaCA2); err != nil {
		t.Fatalf("with both CAs in ssl_ca, a client certificate of the new CA is refused: %v", err)
	}
	rolledCert, rolledKey, err := ca2.Issue("mysqld rolled", x509.ExtKeyUsageServerAuth, s.Host, "127.0.0.1")
	check.Must(t, err)
	rolled := certSerial(t, rolledCert, rolledKey)
	replaceFile(t, s.TLS.KeyFile, rolledKey)
	replaceFile(t, s.TLS.CertFile, rolledCert)
	reload(true)
	for name, cfg := range map[string]func(chan<- *big.Int) *tls.Config{"old CA": viaCA1, "new CA": viaCA2} {
		got, err := presentedSerial(t, s, cfg)
		if err != nil {
			t.Errorf("during the roll, a client certificate of the %s is refused: %v", name, err)
		} else if got.Cmp(rolled) != 0 {
			t.Errorf("mysqld presents %x to a client of the %s, want its leaf of the new CA %x", got, name, rolled)
		}
	}
	if s.PID() != pid {
		t.Errorf("mysqld was restarted (pid %d, then %d)", pid, s.PID())
	}
}

func certSerial(t *testing.T, certPEM, keyPEM []byte) *big.Int {
	t.Helper()
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	check.Must(t, err)
	return pair.Leaf.SerialNumber
}

// presented is presentedSerial that must connect.
func presented(t *testing.T, s *mysqldtest.Server, cfg func(chan<- *big.Int) *tls.Config) *big.Int {
	t.Helper()
	got, err := presentedSerial(t, s, cfg)
	check.Must(t, err)
	return got
}

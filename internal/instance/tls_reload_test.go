package instance

import (
	"crypto/tls"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/certs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/secretmount"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/tlsfiles"
)

// TestControlAPIFollowsRenewedCertificates: the control API as the instance manager builds it,
// and the operator's client, both with certificates that expire in seconds. They are renewed
// underneath (the kubelet's symlink swap) and the operator still reads the status after the old
// ones expired; a client that kept the old certificate is refused.
func TestControlAPIFollowsRenewedCertificates(t *testing.T) {
	dir := t.TempDir()
	serverDir, operatorDir := filepath.Join(dir, "server"), filepath.Join(dir, "operator")
	ca, err := certs.NewCA("db-ca", time.Now())
	check.Must(t, err)
	issue := func(req certs.Request) *certs.KeyPair {
		kp, err := certs.Issue(ca, req, time.Now())
		check.Must(t, err)
		return kp
	}
	mount := func(dir string, kp *certs.KeyPair) {
		check.Must(t, secretmount.Write(dir, kp.SecretData(ca)))
	}
	const shortLived = 3 * time.Second
	serverReq := certs.Request{CommonName: "db-1", DNSNames: []string{"db-1.ns.svc"}, Validity: shortLived}
	operatorReq := certs.Request{CommonName: certs.OperatorCommonName, Client: true, Validity: shortLived}
	oldOperator := issue(operatorReq)
	expiry := oldOperator.Cert.NotAfter
	mount(serverDir, issue(serverReq))
	mount(operatorDir, oldOperator)

	serverFiles, err := tlsfiles.NewLoader(tlsfiles.In(serverDir), 100*time.Millisecond, nil)
	check.Must(t, err)
	m := &manager{cfg: &RunConfig{Instance: "db-1", ManagerAddr: "127.0.0.1:0"},
		op: statusOp{st: &mysql.Status{}}, deps: RunDeps{Log: testr.New(t)}}
	srv, ln, err := m.controlAPI(serverFiles, "replication", &LocalState{}, &PrimaryLease{}, nil, nil, nil, nil) // never held
	check.Must(t, err)
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { _ = srv.Close() })

	operatorFiles, err := tlsfiles.NewLoader(tlsfiles.In(operatorDir), 100*time.Millisecond, nil)
	check.Must(t, err)
	operator := instanceclient.NewFollowing(func() (*tls.Config, error) { return tlsfiles.ClientConfig(operatorFiles) }, 2*time.Second)
	target := instanceclient.Target{Instance: "db-1", Address: ln.Addr().String(), ServerName: "db-1.ns.svc"}
	if _, err := operator.Status(t.Context(), target); err != nil {
		t.Fatalf("before the renewal: %v", err)
	}

	serverReq.Validity, operatorReq.Validity = time.Hour, time.Hour
	mount(serverDir, issue(serverReq))
	mount(operatorDir, issue(operatorReq))
	time.Sleep(time.Until(expiry) + time.Second)
	if _, err := operator.Status(t.Context(), target); err != nil {
		t.Errorf("after the old certificates expired: %v", err)
	}
	cur, err := operatorFiles.Current()
	check.Must(t, err)
	stale := &tls.Config{RootCAs: cur.Roots, Certificates: []tls.Certificate{mustPair(t, oldOperator)}}
	if _, err := instanceclient.New(stale, 2*time.Second).Status(t.Context(), target); err == nil {
		t.Error("the expired operator certificate is still accepted: the test did not outlive it")
	}
}

func mustPair(t *testing.T, kp *certs.KeyPair) tls.Certificate {
	t.Helper()
	pair, err := tls.X509KeyPair(kp.CertPEM, kp.KeyPEM)
	check.Must(t, err)
	return pair
}

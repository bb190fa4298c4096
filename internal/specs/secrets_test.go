package specs

import (
	"bytes"
	"crypto/rand"
	"errors"
	"strings"
	"testing"
	"testing/iotest"

	corev1 "k8s.io/api/core/v1"
)

func TestGeneratePassword(t *testing.T) {
	a, err := GeneratePassword(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := GeneratePassword(rand.Reader)
	for _, tc := range []struct {
		rule string
		ok   bool
	}{
		{"32 characters", len(a) == passwordLength},
		{"only characters that need no quoting", strings.Trim(a, passwordAlphabet) == ""},
		{"two draws differ", a != b},
	} {
		if !tc.ok {
			t.Errorf("rule broken: %s (%q)", tc.rule, a)
		}
	}
	boom := errors.New("boom")
	if _, err := GeneratePassword(iotest.ErrReader(boom)); !errors.Is(err, boom) {
		t.Errorf("a failing random source is reported, wrapped: %v", err)
	}
	// Bytes at or above the rejection limit (248 for 62 characters) are skipped, not folded.
	p, err := GeneratePassword(bytes.NewReader(append([]byte{255, 248}, bytes.Repeat([]byte{1}, 32)...)))
	if err != nil || p != strings.Repeat("b", 32) {
		t.Errorf("biased bytes must be rejected: %q, %v", p, err)
	}
}

func TestBuildUserSecret(t *testing.T) {
	s := BuildUserSecret(testCluster(), UserReplication, "pw")
	if s.Name != "db-replication" || s.Type != corev1.SecretTypeBasicAuth || !ownedByCluster(s.ObjectMeta) ||
		string(s.Data["username"]) != "replication" || string(s.Data["password"]) != "pw" {
		t.Errorf("a basic-auth Secret <cluster>-<user> owned by the Cluster: %+v", s)
	}
}

func TestBuildTLSSecrets(t *testing.T) {
	tlsSecret := BuildTLSSecret(testCluster(), "db-1-server-tls", map[string][]byte{"tls.crt": []byte("c")})
	if tlsSecret.Type != corev1.SecretTypeTLS || !ownedByCluster(tlsSecret.ObjectMeta) || string(tlsSecret.Data["tls.crt"]) != "c" {
		t.Errorf("a certificate Secret is kubernetes.io/tls and owned: %+v", tlsSecret)
	}
	ca := BuildCASecret(testCluster(), []byte("cert"), []byte("key"))
	if ca.Name != "db-ca" || ca.Type != corev1.SecretTypeOpaque || string(ca.Data["ca.crt"]) != "cert" || string(ca.Data["ca.key"]) != "key" {
		t.Errorf("the CA Secret is Opaque with ca.crt and ca.key: %+v", ca)
	}
}

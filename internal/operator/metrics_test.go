package operator_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
)

const (
	operatorNamespace = "cloudnative-mysql-system"
	operatorAccount   = "cloudnative-mysql-manager"
)

// applyRBAC creates every object of the RBAC kustomization in config/rbac, the ServiceAccount in
// the operator's namespace.
func applyRBAC(t *testing.T, env *kubetest.Env) {
	t.Helper()
	dir := filepath.Join("..", "..", "config", "rbac")
	var k struct{ Resources []string }
	check.Must(t, yaml.Unmarshal(readFile(t, filepath.Join(dir, "kustomization.yaml")), &k))
	for _, file := range k.Resources {
		for _, doc := range bytes.Split(readFile(t, filepath.Join(dir, file)), []byte("\n---")) {
			var obj unstructured.Unstructured
			check.Must(t, yaml.Unmarshal(doc, &obj.Object))
			if obj.Object == nil {
				continue
			}
			if obj.GetKind() == "ServiceAccount" {
				obj.SetNamespace(operatorNamespace)
			}
			check.Must(t, env.Client.Create(t.Context(), &obj))
		}
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	check.Must(t, err)
	return b
}

// tokenOf returns a token of a new ServiceAccount name in ns, bound to clusterRole unless empty.
func tokenOf(t *testing.T, env *kubetest.Env, cs kubernetes.Interface, ns, name, clusterRole string) string {
	t.Helper()
	check.Must(t, env.Client.Create(t.Context(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}))
	if clusterRole != "" {
		check.Must(t, env.Client.Create(t.Context(), &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-metrics"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}},
		}))
	}
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(t.Context(), name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	check.Must(t, err)
	return tr.Status.Token
}

// metricsAccount is who the operator runs as in the tests: its ServiceAccount with the RBAC of
// config/rbac, impersonated, so that the RBAC shipped is the RBAC tested.
func metricsAccount(t *testing.T, env *kubetest.Env) (asOperator *rest.Config, reader, stranger string) {
	t.Helper()
	check.Must(t, env.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNamespace}}))
	applyRBAC(t, env)
	cs := kubernetes.NewForConfigOrDie(env.Config)
	reader = tokenOf(t, env, cs, "default", "prometheus", "cloudnative-mysql-metrics-reader")
	stranger = tokenOf(t, env, cs, "default", "stranger", "")
	asOperator = rest.CopyConfig(env.Config)
	asOperator.Impersonate = rest.ImpersonationConfig{UserName: fmt.Sprintf("system:serviceaccount:%s:%s", operatorNamespace, operatorAccount)}
	return asOperator, reader, stranger
}

// checkMetricsAccess: /metrics at addr is HTTPS only, refused without a token (401), with a
// token the API server does not know, and to an account not granted the metrics reader role
// (403); served to one that is, with want in the body.
func checkMetricsAccess(t *testing.T, metrics, reader, stranger, want string) {
	t.Helper()
	// The certificate is self-signed: the test checks who may read, not the server's identity.
	insecure := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	get := func(scheme, token string) (int, string, error) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, scheme+"://"+metrics+"/metrics", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := insecure.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), err
	}
	check.Eventually(t, 60*time.Second, "the metrics server serves the reader", func(context.Context) (bool, error) {
		code, body, err := get("https", reader)
		return err == nil && code == http.StatusOK && strings.Contains(body, want), err
	})
	check.Eventually(t, 5*time.Second, "the metrics server answers", func(context.Context) (bool, error) {
		_, _, err := get("https", "")
		return err == nil, err
	})
	// want 0: refused one way or another (controller-runtime answers 500 when the API server
	// cannot review a token, and Go's TLS server 400 to plain HTTP), never the metrics.
	for _, tc := range []struct {
		rule   string
		scheme string
		token  string
		want   int
	}{
		{"a request without a token is refused", "https", "", http.StatusUnauthorized},
		{"a token the API server does not know is refused", "https", "not-a-token", 0},
		{"an account without the metrics reader role is refused", "https", stranger, http.StatusForbidden},
		{"an account with the metrics reader role is served", "https", reader, http.StatusOK},
		{"plain HTTP is not served", "http", reader, 0},
	} {
		code, body, err := get(tc.scheme, tc.token)
		served := err == nil && code == http.StatusOK && strings.Contains(body, "controller_runtime_")
		switch {
		case tc.want == http.StatusOK && !served:
			t.Errorf("%s: status %d (%v), want the metrics", tc.rule, code, err)
		case tc.want == 0 && (code == http.StatusOK || strings.Contains(body, "controller_runtime_")):
			t.Errorf("%s: status %d, want a refusal", tc.rule, code)
		case tc.want != 0 && tc.want != http.StatusOK && (err != nil || code != tc.want):
			t.Errorf("%s: status %d (%v), want %d", tc.rule, code, err, tc.want)
		}
	}
}

package operatorauth

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
)

// The operator's namespace and ServiceAccount, as config/default installs them.
const (
	Namespace      = "cloudnative-mysql-system"
	ServiceAccount = "cloudnative-mysql-manager"
)

// tokenLifetime is how long the tokens asked for are valid: longer than a benchmark.
const tokenLifetime = int64(3600)

// InstallRBAC creates the operator's namespace and ServiceAccount, and every object of the given
// files of config/rbac (role.yaml, role_binding.yaml, metrics_auth_role.yaml, ...).
func InstallRBAC(ctx context.Context, c client.Client, files ...string) error {
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: ServiceAccount, Namespace: Namespace}},
	}
	for _, file := range files {
		data, err := os.ReadFile(filepath.Join(kubetest.RepoRoot(), "config", "rbac", file))
		if err != nil {
			return err
		}
		for _, doc := range bytes.Split(data, []byte("\n---")) {
			obj := &unstructured.Unstructured{}
			if err := yaml.UnmarshalStrict(doc, &obj.Object); err != nil {
				return fmt.Errorf("reading config/rbac/%s: %w", file, err)
			}
			if obj.Object != nil {
				objs = append(objs, obj)
			}
		}
	}
	for _, obj := range objs {
		if err := c.Create(ctx, obj); err != nil {
			return fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
		}
	}
	return nil
}

// OperatorConfig installs the RBAC of files (InstallRBAC) and returns a rest.Config that
// authenticates as the operator's ServiceAccount with a bearer token, as in production: the API
// server checks a token on every request and the operator's RBAC is exercised.
func OperatorConfig(ctx context.Context, env *kubetest.Env, files ...string) (*rest.Config, error) {
	if err := InstallRBAC(ctx, env.Client, files...); err != nil {
		return nil, err
	}
	token, err := Token(ctx, env.Config, Namespace, ServiceAccount)
	if err != nil {
		return nil, err
	}
	return WithToken(env.Config, token), nil
}

// Token asks the TokenRequest API, with admin's credentials, for a token of ServiceAccount
// namespace/name.
func Token(ctx context.Context, admin *rest.Config, namespace, name string) (string, error) {
	cs, err := kubernetes.NewForConfig(admin)
	if err != nil {
		return "", fmt.Errorf("creating a clientset: %w", err)
	}
	expiry := tokenLifetime
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}},
		metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("requesting a token for ServiceAccount %s/%s: %w", namespace, name, err)
	}
	return tr.Status.Token, nil
}

// WithToken is admin's API server and CA with a bearer token instead of admin's credentials.
func WithToken(admin *rest.Config, token string) *rest.Config {
	return &rest.Config{Host: admin.Host, BearerToken: token,
		TLSClientConfig: rest.TLSClientConfig{CAData: admin.CAData}}
}

// BoundToken creates the ServiceAccount namespace/name, binds it to clusterRole, and returns a
// token of it: a scraper bound to cloudnative-mysql-metrics-reader, say.
func BoundToken(ctx context.Context, env *kubetest.Env, namespace, name, clusterRole string) (string, error) {
	for _, obj := range []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}},
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: namespace + "-" + name + "-" + clusterRole},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRole},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: name}},
		},
	} {
		if err := env.Client.Create(ctx, obj); err != nil {
			return "", fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
		}
	}
	return Token(ctx, env.Config, namespace, name)
}

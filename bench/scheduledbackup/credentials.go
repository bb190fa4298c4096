package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
)

// The operator's namespace and ServiceAccount, as config/default installs them.
const (
	operatorNamespace      = "cloudnative-mysql-system"
	operatorServiceAccount = "cloudnative-mysql-manager"
)

// operatorCredentials is the rest.Config the operator process uses. By default it authenticates
// as in production: the operator's ServiceAccount with a bearer token from the TokenRequest API,
// bound to the ClusterRole of config/rbac, so the API server checks a token instead of a client
// certificate on every request and the operator's RBAC is exercised. With admin, the control
// plane's admin client certificate.
func operatorCredentials(ctx context.Context, env *kubetest.Env, admin bool) (*rest.Config, error) {
	if admin {
		return env.Config, nil
	}
	if err := installOperatorRBAC(ctx, env.Client); err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		return nil, fmt.Errorf("creating a clientset: %w", err)
	}
	expiry := int64(3600)
	tr, err := cs.CoreV1().ServiceAccounts(operatorNamespace).CreateToken(ctx, operatorServiceAccount,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}},
		metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("requesting a token for ServiceAccount %s: %w", operatorServiceAccount, err)
	}
	return &rest.Config{Host: env.Config.Host, BearerToken: tr.Status.Token,
		TLSClientConfig: rest.TLSClientConfig{CAData: env.Config.CAData}}, nil
}

// installOperatorRBAC creates the operator's namespace, its ServiceAccount, and the ClusterRole
// and ClusterRoleBinding of config/rbac.
func installOperatorRBAC(ctx context.Context, c client.Client) error {
	var role rbacv1.ClusterRole
	var binding rbacv1.ClusterRoleBinding
	for file, obj := range map[string]any{"role.yaml": &role, "role_binding.yaml": &binding} {
		data, err := os.ReadFile(filepath.Join(kubetest.RepoRoot(), "config", "rbac", file))
		if err != nil {
			return err
		}
		if err := yaml.UnmarshalStrict(data, obj); err != nil {
			return fmt.Errorf("reading config/rbac/%s: %w", file, err)
		}
	}
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNamespace}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: operatorServiceAccount, Namespace: operatorNamespace}},
		&role, &binding,
	} {
		if err := c.Create(ctx, obj); err != nil {
			return fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
		}
	}
	return nil
}

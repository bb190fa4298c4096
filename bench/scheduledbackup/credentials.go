package main

import (
	"context"

	"k8s.io/client-go/rest"

	"github.com/cloudnative-mysql/cloudnative-mysql/bench/internal/operatorauth"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
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
	return operatorauth.OperatorConfig(ctx, env, "role.yaml", "role_binding.yaml")
}

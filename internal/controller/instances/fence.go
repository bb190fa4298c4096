package instances

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// MySQLFencer stops writes on an instance's mysqld from outside its Pod, without its instance
// manager (mysql.Fence). MTLS implements it; without it a failover relies on the Lease, the
// manager's own self-fence and the Pod's deletion.
type MySQLFencer interface {
	// FenceMySQL fences the mysqld of pod over its administrative interface. An error wrapping
	// mysql.ErrUnreachable means nothing was done because nothing answered.
	FenceMySQL(ctx context.Context, c *v1.Cluster, pod corev1.Pod) (mysql.FenceResult, error)
}

// FenceMySQL implements MySQLFencer: the fence account (specs.UserFence, its password from the
// Cluster's Secret) with the operator's client certificate, trusting the cluster CA, at the Pod
// IP's administrative port, the server certificate verified for the instance's Service name.
func (s MTLS) FenceMySQL(ctx context.Context, c *v1.Cluster, pod corev1.Pod) (mysql.FenceResult, error) {
	if pod.Status.PodIP == "" {
		return mysql.FenceResult{}, fmt.Errorf("%w: the Pod %s has no IP", mysql.ErrUnreachable, pod.Name)
	}
	tlsConfig, err := s.tlsConfig(ctx, c)
	if err != nil {
		return mysql.FenceResult{}, err
	}
	tlsConfig.ServerName = instanceTarget(pod).ServerName
	var secret corev1.Secret
	key := client.ObjectKey{Namespace: c.Namespace, Name: specs.UserSecretName(c.Name, specs.UserFence)}
	if err := s.Reader.Get(ctx, key, &secret); err != nil {
		return mysql.FenceResult{}, fmt.Errorf("reading the fence account's password: %w", err)
	}
	password := string(secret.Data[corev1.BasicAuthPasswordKey])
	return mysql.Fence(ctx, mysql.FenceConfig(pod.Status.PodIP, specs.AdminPort, specs.UserFence, password, tlsConfig))
}

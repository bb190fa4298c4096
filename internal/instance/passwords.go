package instance

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// Passwords reads the password of one of the Cluster's accounts (specs.Users).
type Passwords interface {
	Password(ctx context.Context, user string) (string, error)
}

// FilePasswords reads <Dir>/<user>/password: each basic-auth Secret mounted in its own directory.
type FilePasswords struct{ Dir string }

// Password implements Passwords; the error never holds the password.
func (f FilePasswords) Password(_ context.Context, user string) (string, error) {
	data, err := os.ReadFile(filepath.Join(f.Dir, user, corev1.BasicAuthPasswordKey))
	if err != nil {
		return "", fmt.Errorf("reading the password of %s: %w", user, err)
	}
	return nonEmpty(user, strings.TrimRight(string(data), "\r\n"))
}

// SecretPasswords reads the Secret <cluster>-<user> from the API server, which the instance
// Pods' Role allows.
type SecretPasswords struct {
	Reader             client.Reader
	Namespace, Cluster string
}

// Password implements Passwords.
func (s SecretPasswords) Password(ctx context.Context, user string) (string, error) {
	var secret corev1.Secret
	key := client.ObjectKey{Namespace: s.Namespace, Name: specs.UserSecretName(s.Cluster, user)}
	if err := s.Reader.Get(ctx, key, &secret); err != nil {
		return "", fmt.Errorf("reading Secret %s: %w", key.Name, err)
	}
	return nonEmpty(user, string(secret.Data[corev1.BasicAuthPasswordKey]))
}

func nonEmpty(user, password string) (string, error) {
	if password == "" {
		return "", fmt.Errorf("the password of %s is empty", user)
	}
	return password, nil
}

// ClusterUsers returns root@localhost, the replication, clone donor and fence accounts with their
// passwords. Replication and clone donor require the client certificate the operator issues for
// them (REQUIRE SUBJECT, specs.ReplicationClientSubject), the fence account the operator's own
// (specs.FenceClientSubject), both signed by the cluster CA.
func ClusterUsers(ctx context.Context, p Passwords) (mysql.Users, error) {
	root, err := p.Password(ctx, specs.UserRoot)
	if err != nil {
		return mysql.Users{}, err
	}
	repl, err := p.Password(ctx, specs.UserReplication)
	if err != nil {
		return mysql.Users{}, err
	}
	backup, err := p.Password(ctx, specs.UserBackup)
	if err != nil {
		return mysql.Users{}, err
	}
	fence, err := p.Password(ctx, specs.UserFence)
	if err != nil {
		return mysql.Users{}, err
	}
	return mysql.Users{
		Fence:       mysql.Account{Name: specs.UserFence, Password: fence, RequireSubject: specs.FenceClientSubject},
		Root:        mysql.Account{Name: specs.UserRoot, Host: "localhost", Password: root},
		Replication: mysql.Account{Name: specs.UserReplication, Password: repl, RequireSubject: specs.ReplicationClientSubject},
		Backup:      mysql.Account{Name: specs.UserBackup, Password: backup, RequireSubject: specs.ReplicationClientSubject},
	}, nil
}

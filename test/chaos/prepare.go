package chaos

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// CheckerUser is the account the checker creates when the Cluster's app account does not exist in
// mysqld.
const CheckerUser = "chaos"

// Prepared says which account the checker writes with, and why.
type Prepared struct {
	Account Account
	// Note says what was found and done, for the report.
	Note string
}

// Prepare creates the database chaos and its table writes on the primary through the root
// account (kubectl exec, statements on stdin), and picks the account to write with: the app
// account of <cluster>-app when mysqld has it (granted SELECT, INSERT on chaos.*), else an account
// of the checker's own with a random password.
func (e *Env) Prepare(ctx context.Context, t Target, primary string) (Prepared, error) {
	var secret corev1.Secret
	secretNote := ""
	key := client.ObjectKey{Namespace: t.Namespace, Name: specs.UserSecretName(t.Name, specs.UserApp)}
	switch err := e.Client.Get(ctx, key, &secret); {
	case apierrors.IsNotFound(err):
		secretNote = "no Secret " + key.Name
	case err != nil:
		return Prepared{}, err
	default:
		secretNote = fmt.Sprintf("Secret %s holds user %q and a password of %d characters", key.Name,
			secret.Data[corev1.BasicAuthUsernameKey], len(secret.Data[corev1.BasicAuthPasswordKey]))
	}
	appUser := string(secret.Data[corev1.BasicAuthUsernameKey])
	out, err := e.RootSQL(ctx, t.Namespace, primary,
		fmt.Sprintf("SELECT COUNT(*) FROM mysql.user WHERE user = '%s';", sqlQuote(appUser)))
	if err != nil {
		return Prepared{}, err
	}
	appExists := appUser != "" && strings.TrimSpace(out) != "0"

	p := Prepared{}
	var user string
	if appExists {
		user = appUser
		ca := secret.Data[specs.AppCAKey]
		if len(ca) == 0 {
			return Prepared{}, fmt.Errorf("the Secret %s has no %s to verify the server with", key.Name, specs.AppCAKey)
		}
		p.Account = Account{User: appUser, Password: string(secret.Data[corev1.BasicAuthPasswordKey]), CA: ca,
			ServerName: string(secret.Data[specs.AppHostKey])}
		p.Note = secretNote + "; mysqld has the account: the checker writes as " + appUser +
			", verifying the server with the Secret's " + specs.AppCAKey + " and host " + p.Account.ServerName
	} else {
		user = CheckerUser
		p.Account = Account{User: CheckerUser, Password: rand.Text()}
		p.Note = secretNote + "; mysqld has no such account (the operator does not create it yet): " +
			"the checker created its own account " + CheckerUser + " through root on " + primary
	}
	stmts := "CREATE DATABASE IF NOT EXISTS chaos;\n" +
		"CREATE TABLE IF NOT EXISTS chaos.writes (id BIGINT PRIMARY KEY, server_uuid CHAR(36) NOT NULL, at DATETIME(6) NOT NULL);\n"
	if !appExists {
		stmts += fmt.Sprintf("CREATE USER IF NOT EXISTS '%[1]s'@'%%' IDENTIFIED BY '%[2]s';\nALTER USER '%[1]s'@'%%' IDENTIFIED BY '%[2]s';\n",
			CheckerUser, p.Account.Password)
	}
	stmts += fmt.Sprintf("GRANT SELECT, INSERT ON chaos.* TO '%s'@'%%';\n", sqlQuote(user))
	if _, err := e.RootSQL(ctx, t.Namespace, primary, stmts); err != nil {
		return Prepared{}, fmt.Errorf("creating the checker's table and account: %w", err)
	}
	return p, nil
}

func sqlQuote(s string) string { return strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) }

package mysql

import (
	"context"
	"errors"
	"fmt"
)

// Account is a MySQL account the operator owns. Its Password is a secret: it is sent to the
// server only and never appears in errors.
type Account struct {
	Name     string
	Password string
	// Host is the account's host part; "%" when empty.
	Host string
	// RequireSubject, when set, pins the client certificate subject (REQUIRE SUBJECT), e.g.
	// "/CN=replication"; otherwise any certificate from the trusted CA will do (REQUIRE X509).
	RequireSubject string
}

func (a Account) host() string {
	if a.Host == "" {
		return "%"
	}
	return a.Host
}

// Users are the accounts the operator owns on every instance.
type Users struct {
	// Root is the local administrator root@localhost, which the instance manager connects as over
	// the socket; its password is set when Password is not empty.
	Root Account
	// Replication is used by replicas to stream the binary log (REPLICATION SLAVE).
	Replication Account
	// Backup is the clone donor account (BACKUP_ADMIN), used to bootstrap replicas and backups.
	Backup Account
	// Fence is the operator's account on the administrative interface (FencePrivileges): it stops
	// writes on a server whose instance manager does not answer (Fence). Left out when its name
	// is empty.
	Fence Account
}

// FencePrivileges are the fence account's: set offline_mode, super_read_only and the semi-sync
// source switch (SYSTEM_VARIABLES_ADMIN), end and outlast other sessions (CONNECTION_ADMIN), the
// instance manager's root sessions included (SYSTEM_USER), log in on the administrative
// interface (SERVICE_CONNECTION_ADMIN) and see every session (PROCESS).
const FencePrivileges = "PROCESS, SYSTEM_VARIABLES_ADMIN, CONNECTION_ADMIN, SYSTEM_USER, SERVICE_CONNECTION_ADMIN"

var errAccount = errors.New("invalid account")

// CreateUsers creates the accounts if missing and (re)sets their password, TLS requirement and
// privileges, so that it also rotates a changed password. Both accounts require a client
// certificate signed by the CA mysqld trusts (with the subject they name, if any). root@localhost
// gets its password; the statements are binary-logged like any other, so replicas get the same.
func (o *operator) CreateUsers(ctx context.Context, users Users) error {
	return o.createUsers(ctx, o.db, users)
}

// createUsers runs CreateUsers' statements on e, the clone donor account last: on a first primary
// (BootstrapAccounts) no replica can clone before every other account exists.
func (o *operator) createUsers(ctx context.Context, e execer, users Users) error {
	if users.Root.Password != "" {
		if err := o.execOn(ctx, e, "setting the password of root@localhost",
			"ALTER USER 'root'@'localhost' IDENTIFIED BY ?", users.Root.Password); err != nil {
			return err
		}
	}
	if err := o.ensureAccount(ctx, e, users.Replication, "REPLICATION SLAVE"); err != nil {
		return fmt.Errorf("replication account: %w", err)
	}
	if users.Fence.Name != "" {
		if err := o.ensureAccount(ctx, e, users.Fence, FencePrivileges); err != nil {
			return fmt.Errorf("fence account: %w", err)
		}
	}
	if err := o.ensureAccount(ctx, e, users.Backup, "BACKUP_ADMIN"); err != nil {
		return fmt.Errorf("backup account: %w", err)
	}
	return nil
}

func (o *operator) ensureAccount(ctx context.Context, e execer, a Account, privileges string) error {
	if a.Name == "" || a.Password == "" {
		return fmt.Errorf("%w: name and password are required", errAccount)
	}
	require, args := "REQUIRE X509", []any{a.Name, a.host(), a.Password}
	if a.RequireSubject != "" {
		require, args = "REQUIRE SUBJECT ?", append(args, a.RequireSubject)
	}
	// CREATE ... IF NOT EXISTS then ALTER: the second also updates an existing account.
	if err := o.execOn(ctx, e, "creating account "+a.Name,
		"CREATE USER IF NOT EXISTS ?@? IDENTIFIED BY ? "+require, args...); err != nil {
		return err
	}
	if err := o.execOn(ctx, e, "updating account "+a.Name,
		"ALTER USER ?@? IDENTIFIED BY ? "+require, args...); err != nil {
		return err
	}
	return o.execOn(ctx, e, "granting "+privileges+" to "+a.Name,
		"GRANT "+privileges+" ON *.* TO ?@?", a.Name, a.host())
}

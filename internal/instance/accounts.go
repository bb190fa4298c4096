package instance

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// applicationPendingMarker, in the data directory, marks a first primary's data directory whose
// application database and owner are not created yet: it is written right after
// --initialize and removed once they exist, so a manager restarted in between creates them.
const applicationPendingMarker = ".cnm-application-pending"

// MarkApplicationPending records that dataDir awaits the application database and owner.
func MarkApplicationPending(dataDir string) error {
	if err := os.WriteFile(filepath.Join(dataDir, applicationPendingMarker), nil, 0o600); err != nil {
		return fmt.Errorf("marking the application database pending: %w", err)
	}
	return nil
}

// ApplicationPending reports whether dataDir carries the marker.
func ApplicationPending(dataDir string) (bool, error) {
	return exists(filepath.Join(dataDir, applicationPendingMarker))
}

func clearApplicationPending(dataDir string) error {
	if err := os.Remove(filepath.Join(dataDir, applicationPendingMarker)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("clearing the application marker: %w", err)
	}
	return nil
}

// readPassword reads the password of user, retrying until it succeeds or ctx ends: the Secret
// may not be readable yet when the Pod starts.
func (m *manager) readPassword(ctx context.Context, user string) (string, error) {
	for {
		password, err := m.deps.Passwords.Password(ctx, user)
		if err == nil {
			return password, nil
		}
		m.deps.Log.Info("reading a password failed; retrying", "user", user, "error", err.Error())
		if err := m.sleep(ctx, time.Second); err != nil {
			return "", fmt.Errorf("reading the password of %s: %w", user, err)
		}
	}
}

// accountsOnPrimary returns the role reconciler's OnPrimary hook: once per start of a primary,
// it sets root's password and creates or updates the replication and clone donor accounts
// (applying rotated passwords; each pass adds a transaction, hence once), and on a first primary
// whose data directory is marked, creates the application database and owner. Every statement
// is binary-logged: a first primary runs them before any replica is cloned from it and before
// any backup, and later ones reach the replicas like any write, so no instance's history differs.
func (m *manager) accountsOnPrimary(users mysql.Users, log logr.Logger) func(context.Context) error {
	var usersDone bool
	return func(ctx context.Context) error {
		if !usersDone {
			if err := m.op.CreateUsers(ctx, users); err != nil {
				return err
			}
			usersDone = true
			log.Info("accounts created or updated", "users", []string{users.Root.Name, users.Replication.Name, users.Backup.Name, users.Fence.Name})
		}
		pending, err := ApplicationPending(m.cfg.DataDir)
		if err != nil || !pending {
			return err
		}
		app, err := m.application(ctx)
		if err != nil {
			return err
		}
		if err := m.op.CreateApplication(ctx, app); err != nil {
			return err
		}
		log.Info("application database created", "database", app.Database, "owner", app.Owner.Name)
		return clearApplicationPending(m.cfg.DataDir)
	}
}

// application reads the application database and owner from the Cluster, and the owner's
// password from <cluster>-app.
func (m *manager) application(ctx context.Context) (mysql.Application, error) {
	c, err := m.readCluster(ctx)
	if err != nil {
		return mysql.Application{}, err
	}
	password, err := m.deps.Passwords.Password(ctx, specs.UserApp)
	if err != nil {
		return mysql.Application{}, err
	}
	database, owner := specs.AppAccount(c)
	return mysql.Application{Database: database, Owner: mysql.Account{Name: owner, Password: password}}, nil
}

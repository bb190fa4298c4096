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

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/failover"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/semisync"
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

// accountGateMax bounds how long a primary's account statements wait for its semi-sync
// replicas to connect (semisync.AccountStatementsWait): replicas repoint to a promoted primary
// within a few seconds. Past it, the statements run anyway (a replica that cannot log in without
// them, say with a rotated password, never connects): they then wait for the fallback, as any
// commit does.
const accountGateMax = failover.LeaseTTL

// accountsOnPrimary returns the role reconciler's OnPrimary hook: once per start of a primary,
// it sets root's password and creates or updates the replication, fence and clone donor accounts
// (applying rotated passwords; each pass adds a transaction, hence once).
//
// On a first primary (first: no primary recorded yet, so no replica can have cloned from it),
// the statements run on one unlogged session (mysql.BootstrapAccounts), with the application
// database and owner when its data directory is marked: every replica starts from a clone and
// gets them with the data. Elsewhere they are binary-logged and reach the replicas like any
// write; they first wait, for at most accountGateMax, until as many semi-sync replicas are
// connected as the primary waits for (semisync.AccountStatementsWait): a promoted replica's first
// pass comes before the replicas that follow it connect, and a statement waiting for their
// acknowledgement would keep them from logging in, so the first write after a failover would
// wait for the fallback.
func (m *manager) accountsOnPrimary(users mysql.Users, log logr.Logger) func(context.Context, bool) error {
	names := []string{users.Root.Name, users.Replication.Name, users.Fence.Name, users.Backup.Name}
	var done bool
	var waitingSince time.Time
	return func(ctx context.Context, first bool) error {
		if done {
			return nil
		}
		pending, err := ApplicationPending(m.cfg.DataDir)
		if err != nil {
			return err
		}
		if first {
			var app *mysql.Application
			if pending {
				a, err := m.application(ctx)
				if err != nil {
					return err
				}
				app = &a
			}
			if err := m.op.BootstrapAccounts(ctx, app, users); err != nil {
				return err
			}
			if app != nil {
				log.Info("application database created", "database", app.Database, "owner", app.Owner.Name)
				if err := clearApplicationPending(m.cfg.DataDir); err != nil {
					return err
				}
			}
			log.Info("accounts created or updated", "users", names, "binaryLogged", false)
			if err := m.literalApplicationGrant(ctx, log); err != nil {
				return err
			}
			done = true
			return nil
		}
		if pending {
			// A first primary that recorded itself before its application database was created
			// (a manager of an earlier version): replicas may exist, so it is binary-logged.
			app, err := m.application(ctx)
			if err != nil {
				return err
			}
			if err := m.op.CreateApplication(ctx, app); err != nil {
				return err
			}
			if err := clearApplicationPending(m.cfg.DataDir); err != nil {
				return err
			}
		}
		st, err := m.op.Status(ctx)
		if err != nil {
			return fmt.Errorf("reading the semi-sync state before the account statements: %w", err)
		}
		now := m.deps.Clock.Now()
		if semisync.AccountStatementsWait(st.SemiSync) {
			if waitingSince.IsZero() {
				waitingSince = now
				log.Info("account statements wait for the semi-sync replicas to connect", "connected", st.SemiSync.Clients,
					"count", st.SemiSync.WaitForReplicaCount, "atMost", accountGateMax)
			}
			if now.Sub(waitingSince) < accountGateMax {
				return nil
			}
			log.Info("account statements run before the semi-sync replicas connected; they wait for the fallback",
				"connected", st.SemiSync.Clients, "count", st.SemiSync.WaitForReplicaCount)
		}
		if err := m.op.CreateUsers(ctx, users); err != nil {
			return err
		}
		log.Info("accounts created or updated", "users", names, "binaryLogged", true)
		if err := m.literalApplicationGrant(ctx, log); err != nil {
			return err
		}
		done = true
		return nil
	}
}

// literalApplicationGrant replaces the application owner's wildcard grant, which an older build
// gave it, with the literal one (mysql.LiteralApplicationGrant), binary-logged.
func (m *manager) literalApplicationGrant(ctx context.Context, log logr.Logger) error {
	c, err := m.readCluster(ctx)
	if err != nil {
		return err
	}
	database, owner := specs.AppAccount(c)
	changed, err := m.op.LiteralApplicationGrant(ctx, mysql.Application{Database: database, Owner: mysql.Account{Name: owner}})
	if err != nil {
		return fmt.Errorf("replacing the application owner's wildcard grant: %w", err)
	}
	if changed {
		log.Info("the application owner's wildcard grant replaced by the literal one", "database", database, "owner", owner)
	}
	return nil
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

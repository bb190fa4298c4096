package mysql

import (
	"context"
	"fmt"
	"regexp"
	"strings"
)

// Application is the application database and the account that owns it.
type Application struct {
	Database string
	Owner    Account
}

// identifier is what the API admits for a database or owner name: nothing that needs quoting.
var identifier = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// CreateApplication creates the database and its owner, with every privilege on the database and
// none elsewhere, if they are missing; an existing owner keeps its password. The grant names the
// database literally (grantDatabase); a wildcard grant an older build gave the owner on the same
// name is revoked. The
// statements are binary-logged; a first primary at bootstrap runs them through
// BootstrapAccounts instead.
func (o *operator) CreateApplication(ctx context.Context, app Application) error {
	return o.createApplication(ctx, o.db, app)
}

func (o *operator) createApplication(ctx context.Context, e execer, app Application) error {
	if err := checkNames(app); err != nil {
		return err
	}
	if len(app.Owner.Name) > 32 {
		return fmt.Errorf("%w: database %q and owner %q must be lower-case identifiers", errAccount, app.Database, app.Owner.Name)
	}
	if app.Owner.Password == "" {
		return fmt.Errorf("%w: the owner's password is required", errAccount)
	}
	if err := o.execOn(ctx, e, "creating database "+app.Database, "CREATE DATABASE IF NOT EXISTS `"+app.Database+"`"); err != nil {
		return err
	}
	if err := o.execOn(ctx, e, "creating account "+app.Owner.Name, "CREATE USER IF NOT EXISTS ?@? IDENTIFIED BY ?",
		app.Owner.Name, app.Owner.host(), app.Owner.Password); err != nil {
		return err
	}
	if err := o.grantLiteral(ctx, e, app); err != nil {
		return err
	}
	held, err := wildcardGrantHeld(ctx, e, app)
	if err != nil || !held {
		return err
	}
	return o.revokeWildcard(ctx, e, app)
}

// LiteralApplicationGrant gives an existing owner the literal grant on its database in place of
// the wildcard grant an older build gave it (`m_sql`.* also reaches mysql), when it still holds
// that one; it returns whether it changed anything. Unlike CreateApplication it creates nothing:
// a primary runs it at every start, binary-logged, so that a Cluster made by an older build, or
// recovered from its backup, loses the wildcard on its next primary.
func (o *operator) LiteralApplicationGrant(ctx context.Context, app Application) (bool, error) {
	if err := checkNames(app); err != nil {
		return false, err
	}
	held, err := wildcardGrantHeld(ctx, o.db, app)
	if err != nil || !held {
		return false, err
	}
	if err := o.grantLiteral(ctx, o.db, app); err != nil {
		return false, err
	}
	return true, o.revokeWildcard(ctx, o.db, app)
}

// checkNames refuses a database or owner name that would need quoting.
func checkNames(app Application) error {
	if !identifier.MatchString(app.Database) || !identifier.MatchString(app.Owner.Name) {
		return fmt.Errorf("%w: database %q and owner %q must be lower-case identifiers", errAccount, app.Database, app.Owner.Name)
	}
	return nil
}

// grantDatabase is name as a database grant reads it literally. In the database part of a grant,
// `_` and `%` are wildcards: `m_sql`.* would also grant the `mysql` schema, and `s_s`.* the `sys`
// schema. Escaped, the grant covers the named database only. identifier admits no `%`, which is
// escaped all the same.
func grantDatabase(name string) string {
	return strings.NewReplacer(`_`, `\_`, `%`, `\%`).Replace(name)
}

// grantLiteral grants the owner every privilege on its database, named literally.
func (o *operator) grantLiteral(ctx context.Context, e execer, app Application) error {
	return o.execOn(ctx, e, "granting "+app.Database+" to "+app.Owner.Name,
		"GRANT ALL PRIVILEGES ON `"+grantDatabase(app.Database)+"`.* TO ?@?", app.Owner.Name, app.Owner.host())
}

// wildcardGrantHeld reports whether the owner holds a grant on the unescaped database name, a
// pattern an older build granted: only a name with a wildcard can have one, and mysql.db keeps
// the pattern as written.
func wildcardGrantHeld(ctx context.Context, e execer, app Application) (bool, error) {
	if grantDatabase(app.Database) == app.Database {
		return false, nil
	}
	var n int
	err := e.QueryRowContext(ctx, "SELECT COUNT(*) FROM mysql.db WHERE User = ? AND Host = ? AND Db = ?",
		app.Owner.Name, app.Owner.host(), app.Database).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("reading the grants of %s on %s: %w", app.Owner.Name, app.Database, err)
	}
	return n > 0, nil
}

// revokeWildcard revokes the owner's grant on the unescaped database name; the caller checked it
// exists (a REVOKE of a grant that does not exist fails).
func (o *operator) revokeWildcard(ctx context.Context, e execer, app Application) error {
	return o.execOn(ctx, e, "revoking the wildcard grant of "+app.Database+" from "+app.Owner.Name,
		"REVOKE ALL PRIVILEGES ON `"+app.Database+"`.* FROM ?@?", app.Owner.Name, app.Owner.host())
}

package mysql

import (
	"context"
	"fmt"
	"regexp"
)

// Application is the application database and the account that owns it.
type Application struct {
	Database string
	Owner    Account
}

// identifier is what the API admits for a database or owner name: nothing that needs quoting.
var identifier = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// CreateApplication creates the database and its owner, with every privilege on the database and
// none elsewhere, if they are missing; an existing owner keeps its password and grants. The
// statements are binary-logged; a first primary at bootstrap runs them through
// BootstrapAccounts instead.
func (o *operator) CreateApplication(ctx context.Context, app Application) error {
	return o.createApplication(ctx, o.db, app)
}

func (o *operator) createApplication(ctx context.Context, e execer, app Application) error {
	if !identifier.MatchString(app.Database) || !identifier.MatchString(app.Owner.Name) || len(app.Owner.Name) > 32 {
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
	return o.execOn(ctx, e, "granting "+app.Database+" to "+app.Owner.Name,
		"GRANT ALL PRIVILEGES ON `"+app.Database+"`.* TO ?@?", app.Owner.Name, app.Owner.host())
}

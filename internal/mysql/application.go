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
// none elsewhere, if they are missing; an existing owner keeps its password and grants. Called
// once, by the first primary at bootstrap; the server must be writable. The statements are
// binary-logged like any other, so every replica gets the same accounts.
func (o *operator) CreateApplication(ctx context.Context, app Application) error {
	if !identifier.MatchString(app.Database) || !identifier.MatchString(app.Owner.Name) || len(app.Owner.Name) > 32 {
		return fmt.Errorf("%w: database %q and owner %q must be lower-case identifiers", errAccount, app.Database, app.Owner.Name)
	}
	if app.Owner.Password == "" {
		return fmt.Errorf("%w: the owner's password is required", errAccount)
	}
	if err := o.exec(ctx, "creating database "+app.Database, "CREATE DATABASE IF NOT EXISTS `"+app.Database+"`"); err != nil {
		return err
	}
	if err := o.exec(ctx, "creating account "+app.Owner.Name, "CREATE USER IF NOT EXISTS ?@? IDENTIFIED BY ?",
		app.Owner.Name, app.Owner.host(), app.Owner.Password); err != nil {
		return err
	}
	return o.exec(ctx, "granting "+app.Database+" to "+app.Owner.Name,
		"GRANT ALL PRIVILEGES ON `"+app.Database+"`.* TO ?@?", app.Owner.Name, app.Owner.host())
}

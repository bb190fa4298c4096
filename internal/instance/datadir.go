package instance

import (
	"context"
	"fmt"
	"path/filepath"
)

// HasData reports whether dataDir (a path the instance manager sees) holds an initialized data
// directory: the data dictionary tablespace mysql.ibd exists.
func HasData(dataDir string) (bool, error) {
	return exists(filepath.Join(dataDir, "mysql.ibd"))
}

// InitializeDataDir creates the system tables in an empty data directory with
// mysqld --initialize-insecure. root@localhost gets no password: skip_name_resolve (set by
// my.cnf) limits it to the local socket, which only the instance manager reaches.
func InitializeDataDir(ctx context.Context, mysqld MysqldCommand) error {
	cmd := mysqld("--initialize-insecure")
	if err := runUntilDone(ctx, cmd); err != nil {
		return fmt.Errorf("initializing the data directory: %w", err)
	}
	return nil
}

package mysql

import (
	"errors"
	"fmt"
	"testing"

	driver "github.com/go-sql-driver/mysql"
)

// TestReplicaMetadataError: which server errors say the channel's metadata cannot be initialized.
func TestReplicaMetadataError(t *testing.T) {
	for _, tc := range []struct {
		rule string
		err  error
		want bool
	}{
		{"1872, the applier's repository", fmt.Errorf("starting replication: %w", &driver.MySQLError{Number: 1872}), true},
		{"1201, the connection metadata (CHANGE REPLICATION SOURCE)", fmt.Errorf("configuring replication: %w", &driver.MySQLError{Number: 1201}), true},
		{"1871, the connection metadata repository (START REPLICA)", &driver.MySQLError{Number: 1871}, true},
		{"1200, not a replica, is not", &driver.MySQLError{Number: 1200}, false},
		{"a network error is not", errors.New("invalid connection"), false},
	} {
		if got := errors.Is(replicaMetadataError(tc.err), ErrReplicaMetadata); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.rule, got, tc.want)
		}
	}
	if replicaMetadataError(nil) != nil {
		t.Error("no error became one")
	}
}

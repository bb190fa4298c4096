package restore

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestInitParameterArgs: a data directory's record of its initialization-only values becomes
// mysqld options; other lines are ignored; no record, no options.
func TestInitParameterArgs(t *testing.T) {
	dir := t.TempDir()
	if got, err := InitParameterArgs(dir); err != nil || got != nil {
		t.Fatalf("without a record: %q, %v", got, err)
	}
	rec := "lower_case_table_names=1\ninnodb_page_size=8192\nmax_connections=5\n"
	if err := os.WriteFile(filepath.Join(dir, InitParametersFile), []byte(rec), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := InitParameterArgs(dir)
	if want := []string{"--innodb_page_size=8192", "--lower_case_table_names=1"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("got %q, %v; want %q", got, err, want)
	}
}

package restore

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDropPersistedSettings: a restored data directory loses the source's mysqld-auto.cnf and
// nothing else; one without it is fine.
func TestDropPersistedSettings(t *testing.T) {
	for _, tc := range []struct {
		rule  string
		files []string
	}{
		{"the source's SET PERSIST file goes, the data stays", []string{persistedSettings, "ibdata1", "mysql.ibd"}},
		{"a directory without it is left as it is", []string{"ibdata1"}},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if err := dropPersistedSettings(dir); err != nil {
				t.Fatal(err)
			}
			for _, f := range tc.files {
				_, err := os.Stat(filepath.Join(dir, f))
				if gone := os.IsNotExist(err); gone != (f == persistedSettings) {
					t.Errorf("%s gone: %v, want %v", f, gone, f == persistedSettings)
				}
			}
		})
	}
}

package instance

import (
	"maps"
	"os"
	"path/filepath"
	"testing"
)

// TestPinInitParameters: my.cnf carries the data directory's initialization-only values, whatever
// the spec says or however it spells them; without a record the spec's values stand (a data
// directory about to be initialized takes them).
func TestPinInitParameters(t *testing.T) {
	record := map[string]string{"lower_case_table_names": "0", "innodb_page_size": "16384", "innodb_data_file_path": "ibdata1:12M:autoextend"}
	spec := map[string]string{"Lower-Case-Table-Names": "1", "loose_innodb_page_size": "32768", "max_connections": "10"}
	want := map[string]string{"lower_case_table_names": "0", "innodb_page_size": "16384", "innodb_data_file_path": "ibdata1:12M:autoextend",
		"max_connections": "10"}
	if got := pinInitParameters(spec, record); !maps.Equal(got, want) {
		t.Errorf("pinned %v, want %v", got, want)
	}
	if got := pinInitParameters(spec, nil); !maps.Equal(got, spec) {
		t.Errorf("without a record %v, want the spec's %v", got, spec)
	}
}

func TestInitParametersRecordRoundTrip(t *testing.T) {
	dir := t.TempDir()
	if rec, err := readInitParameters(dir); err != nil || rec != nil {
		t.Fatalf("no record yet: %v %v", rec, err)
	}
	text := "innodb_page_size=16384\nlower_case_table_names=1\nnot_init_only=5\n"
	if err := writeFileAtomic(filepath.Join(dir, initParametersFile), text, 0o600); err != nil {
		t.Fatal(err)
	}
	rec, err := readInitParameters(dir)
	if err != nil || !maps.Equal(rec, map[string]string{"innodb_page_size": "16384", "lower_case_table_names": "1"}) {
		t.Errorf("read %v %v", rec, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("the atomic write left %d files behind", len(entries))
	}
}

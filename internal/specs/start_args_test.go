package specs

import (
	"slices"
	"testing"
)

func TestStartArgs(t *testing.T) {
	keys := []string{"innodb_page_size", "lower_case_table_names"}
	for _, tc := range []struct {
		rule   string
		params map[string]string
		want   []string
	}{
		{"the keys asked for, in their order", map[string]string{"lower_case_table_names": "1", "innodb_page_size": "8192"},
			[]string{"--innodb_page_size=8192", "--lower_case_table_names=1"}},
		{"any spelling: dashes, case", map[string]string{"InnoDB-Page-Size": "4096"}, []string{"--innodb_page_size=4096"}},
		{"a loose_ prefix is the same key", map[string]string{"loose-lower-case-table-names": "2"}, []string{"--lower_case_table_names=2"}},
		{"other parameters are left out", map[string]string{"max_connections": "10"}, nil},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			if got := StartArgs(tc.params, keys); !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

package main

import (
	"strings"
	"testing"
)

func TestRuleGroupsAsSpec(t *testing.T) {
	for name, tc := range map[string]struct {
		in, want, err string
	}{
		"the groups indented, the leading comments left out": {
			in:   "# about the file\n\ngroups:\n- name: g\n  rules:\n  # a rule\n  - record: r\n    expr: |\n      a\n      or b\n",
			want: "  groups:\n  - name: g\n    rules:\n    # a rule\n    - record: r\n      expr: |\n        a\n        or b\n",
		},
		"blank lines stay blank": {
			in:   "groups:\n- name: a\n\n- name: b\n",
			want: "  groups:\n  - name: a\n\n  - name: b\n",
		},
		"another top-level key is refused": {
			in:  "groups:\n- name: a\nnamespace: x\n",
			err: `line 3: only groups: may be at the top level, found "namespace: x"`,
		},
		"a key before groups is refused": {
			in:  "apiVersion: v1\ngroups: []\n",
			err: "line 1: only groups:",
		},
		"no groups": {
			in:  "# nothing\n",
			err: "no groups: line",
		},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := ruleGroupsAsSpec([]byte(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

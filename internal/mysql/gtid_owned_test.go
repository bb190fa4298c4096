package mysql

import "testing"

func TestParseOwned(t *testing.T) {
	const u = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
	const v = "4e11fa47-71ca-11e1-9e33-c80aa9429562"
	for _, tc := range []struct{ name, in, want string }{
		{"nothing owned", "", ""},
		{"one GTID with its owner", u + ":7#12", u + ":7"},
		{"several owners of one source", u + ":7#12, " + u + ":8#13", u + ":7-8"},
		{"several sources", u + ":7#12," + v + ":3#9", u + ":7," + v + ":3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseOwned(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != tc.want {
				t.Errorf("parseOwned(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

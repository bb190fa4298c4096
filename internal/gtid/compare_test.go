package gtid

import "testing"

func TestCompare(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b string
		want Relation
	}{
		{"identical histories", uA + ":1-5", uA + ":1-5", Same},
		{"both empty", "", "", Same},
		{"a replica lagging behind", uA + ":1-3", uA + ":1-5", Behind},
		{"a fresh replica is behind", "", uA + ":1-5", Behind},
		{"a primary ahead of its replica", uA + ":1-5", uA + ":1-3", Ahead},
		{"errant transaction on one side", uA + ":1-5," + uB + ":1", uA + ":1-6", Diverged},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Compare(MustParse(tc.a), MustParse(tc.b)); got != tc.want {
				t.Errorf("Compare(%q, %q) = %s, want %s", tc.a, tc.b, got, tc.want)
			}
		})
	}
}

func TestErrantAndCanFollow(t *testing.T) {
	for _, tc := range []struct {
		name             string
		replica, primary string
		errant           string
		canFollow        bool
	}{
		{"caught-up replica", uA + ":1-10", uA + ":1-10", "", true},
		{"lagging replica", uA + ":1-7", uA + ":1-10", "", true},
		{"empty replica", "", uA + ":1-10", "", true},
		{"a write made on the replica", uA + ":1-10," + uB + ":1-2", uA + ":1-12", uB + ":1-2", false},
		{"old primary with an unreplicated tail", uA + ":1-12", uB + ":1-3," + uA + ":1-10", uA + ":11-12", false},
		{"former primary fully replicated", uA + ":1-10", uB + ":1-3," + uA + ":1-10", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, p := MustParse(tc.replica), MustParse(tc.primary)
			if got := Errant(r, p); !got.Equal(MustParse(tc.errant)) {
				t.Errorf("Errant = %q, want %q", got, tc.errant)
			}
			if got := CanFollow(r, p); got != tc.canFollow {
				t.Errorf("CanFollow = %v, want %v", got, tc.canFollow)
			}
		})
	}
}

func TestMostAdvanced(t *testing.T) {
	for _, tc := range []struct {
		name   string
		sets   []string
		want   int
		wantOK bool
	}{
		{"no candidates", nil, 0, false},
		{"one candidate", []string{uA + ":1-3"}, 0, true},
		{"the most advanced wins", []string{uA + ":1-3", uA + ":1-9", uA + ":1-5"}, 1, true},
		{"ties go to the earliest", []string{uA + ":1-3", uA + ":1-9", uA + ":1-9"}, 1, true},
		{"an empty candidate never beats data", []string{"", uA + ":1"}, 1, true},
		{"diverged candidates: none", []string{uA + ":1-9", uA + ":1-5," + uB + ":1"}, 0, false},
		{"the best must contain every other",
			[]string{uA + ":1-9", uA + ":1-8," + uB + ":1", uA + ":1-2"}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sets := make([]Set, len(tc.sets))
			for i, s := range tc.sets {
				sets[i] = MustParse(s)
			}
			got, ok := MostAdvanced(sets)
			if ok != tc.wantOK || (ok && got != tc.want) {
				t.Errorf("MostAdvanced = %d, %v; want %d, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

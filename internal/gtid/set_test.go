package gtid

import (
	"errors"
	"testing"
)

const (
	uA = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
	uB = "4f22ab58-82db-22f2-af44-d91bb0530673"
	uC = "5a33bc69-93ec-33a3-b055-ea2cc1641784"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty string is the empty set", "", ""},
		{"whitespace only is the empty set", " \n\t", ""},
		{"single transaction", uA + ":7", uA + ":7"},
		{"interval", uA + ":1-5", uA + ":1-5"},
		{"adjacent intervals merge", uA + ":1-5:6-9", uA + ":1-9"},
		{"overlapping intervals merge", uA + ":1-5:3-9:20", uA + ":1-9:20"},
		{"unsorted intervals are sorted", uA + ":20-30:1-5", uA + ":1-5:20-30"},
		{"MySQL's multi-line output", uA + ":1-5,\n" + uB + ":1-3", uA + ":1-5," + uB + ":1-3"},
		{"upper-case UUID is normalized", "3E11FA47-71CA-11E1-9E33-C80AA9429562:1-2", uA + ":1-2"},
		{"same UUID twice merges", uA + ":1-2," + uA + ":3-4", uA + ":1-4"},
		{"tagged GTIDs (8.4+)", uA + ":1-5:blue:1-2", uA + ":1-5:blue:1-2"},
		{"tags are lower-cased", uA + ":Blue:1-2", uA + ":blue:1-2"},
		{"largest transaction number", uA + ":9223372036854775806", uA + ":9223372036854775806"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse(tc.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.in, err)
			}
			if got := s.String(); got != tc.want {
				t.Errorf("Parse(%q).String() = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestParseRejects(t *testing.T) {
	for _, tc := range []struct{ name, in string }{
		{"no interval", uA},
		{"bad UUID", "not-a-uuid:1-5"},
		{"transaction number 0", uA + ":0"},
		{"interval starting at 0", uA + ":0-5"},
		{"reversed interval", uA + ":5-1"},
		{"negative number", uA + ":-5"},
		{"non-numeric interval", uA + ":1-x"},
		{"three-part interval", uA + ":1-2-3"},
		{"tag without interval", uA + ":blue"},
		{"trailing comma", uA + ":1-5,"},
		{"number past int64", uA + ":1-9223372036854775808"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.in)
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("Parse(%q) error = %v, want ErrInvalid", tc.in, err)
			}
		})
	}
}

func TestContainsSubtractCount(t *testing.T) {
	for _, tc := range []struct {
		name        string
		a, b        string // does a contain b? what is a minus b?
		contains    bool
		aMinusB     string
		countAMinus uint64
	}{
		{"everything contains the empty set", uA + ":1-5", "", true, uA + ":1-5", 5},
		{"the empty set contains only itself", "", uA + ":1", false, "", 0},
		{"empty minus empty", "", "", true, "", 0},
		{"prefix", uA + ":1-10", uA + ":1-5", true, uA + ":6-10", 5},
		{"hole in the middle", uA + ":1-10", uA + ":4-6", true, uA + ":1-3:7-10", 7},
		{"not contained: longer", uA + ":1-5", uA + ":1-6", false, "", 0},
		{"not contained: other UUID", uA + ":1-5", uB + ":1", false, uA + ":1-5", 5},
		{"not contained: gap", uA + ":1-5:7-9", uA + ":5-7", false, uA + ":1-4:8-9", 6},
		{"subtract spanning several intervals", uA + ":1-3:5-7:9-11", uA + ":2-10", false, uA + ":1:11", 2},
		{"one interval of b covers two of a", uA + ":1-2:4-5", uA + ":1-5", false, "", 0},
		{"multiple UUIDs", uA + ":1-5," + uB + ":1-3", uB + ":2", true, uA + ":1-5," + uB + ":1:3", 7},
		{"tag is its own namespace", uA + ":1-5", uA + ":blue:1", false, uA + ":1-5", 5},
		{"tagged subset", uA + ":1-5:blue:1-3", uA + ":blue:2", true, uA + ":1-5:blue:1:3", 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := MustParse(tc.a), MustParse(tc.b)
			if got := a.Contains(b); got != tc.contains {
				t.Errorf("(%s).Contains(%s) = %v, want %v", tc.a, tc.b, got, tc.contains)
			}
			diff := a.Subtract(b)
			if !diff.Equal(MustParse(tc.aMinusB)) {
				t.Errorf("(%s) - (%s) = %q, want %q", tc.a, tc.b, diff, tc.aMinusB)
			}
			if got := diff.Count(); got != tc.countAMinus {
				t.Errorf("count of %q = %d, want %d", diff, got, tc.countAMinus)
			}
			if a.String() != MustParse(tc.a).String() || b.String() != MustParse(tc.b).String() {
				t.Errorf("Contains/Subtract modified an operand: %q, %q", a, b)
			}
		})
	}
}

func TestCountSaturates(t *testing.T) {
	s := MustParse(uA + ":1-9223372036854775806," + uB + ":1-9223372036854775806," + uC + ":1-9223372036854775806")
	if got := s.Count(); got != ^uint64(0) {
		t.Errorf("Count() = %d, want saturation at MaxUint64", got)
	}
}

package gtid

import "testing"

var fuzzSeeds = []string{
	"", uA + ":1-5", uA + ":1-5:7:9-12," + uB + ":1", uA + ":1-5:blue:1-3", uA + ":0",
	uA + ":5-1", uA + ":1-9223372036854775806", " " + uA + ":1 ,\n" + uB + ":3-4 ", uA + ":x:1:y",
}

// FuzzParse checks that parsing never panics and that every accepted set round-trips through
// String and obeys the algebra the safety checks rely on.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s, err := Parse(text)
		if err != nil {
			return
		}
		back, err := Parse(s.String())
		if err != nil {
			t.Fatalf("String() of %q = %q does not parse: %v", text, s, err)
		}
		if !back.Equal(s) || back.String() != s.String() {
			t.Fatalf("round trip of %q: %q != %q", text, back, s)
		}
		if !s.Contains(s) || !s.Subtract(s).IsEmpty() || !s.Subtract(Set{}).Equal(s) {
			t.Fatalf("identity laws fail for %q", s)
		}
	})
}

// FuzzAlgebra checks containment against difference on pairs of sets: b is in a exactly when b
// minus a is empty, a minus b is always in a and disjoint from b.
func FuzzAlgebra(f *testing.F) {
	for _, a := range fuzzSeeds {
		f.Add(a, uA+":2-4:8")
	}
	f.Fuzz(func(t *testing.T, ta, tb string) {
		a, errA := Parse(ta)
		b, errB := Parse(tb)
		if errA != nil || errB != nil {
			return
		}
		if a.Contains(b) != b.Subtract(a).IsEmpty() {
			t.Fatalf("Contains(%q, %q) = %v disagrees with the difference %q", a, b, a.Contains(b), b.Subtract(a))
		}
		d := a.Subtract(b)
		if !a.Contains(d) {
			t.Fatalf("%q minus %q = %q is not in %q", a, b, d, a)
		}
		if !d.Subtract(b).Equal(d) {
			t.Fatalf("%q minus %q = %q still shares transactions with %q", a, b, d, b)
		}
		if d.Count()+a.Subtract(d).Count() != a.Count() && a.Count() != ^uint64(0) {
			t.Fatalf("counts do not add up for %q minus %q", a, b)
		}
	})
}

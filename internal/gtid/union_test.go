package gtid

import "testing"

func TestUnion(t *testing.T) {
	const a = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
	const b = "4e11fa47-71ca-11e1-9e33-c80aa9429562"
	for _, tc := range []struct{ name, x, y, want string }{
		{"both empty", "", "", ""},
		{"one empty", a + ":1-5", "", a + ":1-5"},
		{"adjacent intervals merge", a + ":1-5", a + ":6-9", a + ":1-9"},
		{"overlap", a + ":1-5", a + ":3-7", a + ":1-7"},
		{"disjoint keeps the hole", a + ":1-5", a + ":8-9", a + ":1-5:8-9"},
		{"two sources", a + ":1-5", b + ":1-2", a + ":1-5," + b + ":1-2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, y, want := MustParse(tc.x), MustParse(tc.y), MustParse(tc.want)
			got := Union(x, y)
			if !got.Equal(want) {
				t.Fatalf("Union(%s, %s) = %s, want %s", x, y, got, want)
			}
			if !MustParse(tc.x).Equal(x) {
				t.Fatalf("Union modified its input")
			}
		})
	}
}

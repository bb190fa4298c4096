package gtid

import (
	"testing"

	"github.com/google/uuid"
)

func TestBuilderHasIntersect(t *testing.T) {
	a := uuid.MustParse("3e11fa47-71ca-11e1-9e33-c80aa9429562")
	b := uuid.MustParse("4e11fa47-71ca-11e1-9e33-c80aa9429562")
	var bld Builder
	if !bld.Set().IsEmpty() {
		t.Fatal("an empty builder is not the empty set")
	}
	for _, g := range []GTID{{SID: a, GNO: 1}, {SID: a, GNO: 2}, {SID: a, GNO: 3}, {SID: b, GNO: 7}, {SID: a, Tag: "Blue", GNO: 1}, {SID: a, GNO: 5}} {
		bld.Add(g)
	}
	want := MustParse("3e11fa47-71ca-11e1-9e33-c80aa9429562:1-3:5,3e11fa47-71ca-11e1-9e33-c80aa9429562:blue:1,4e11fa47-71ca-11e1-9e33-c80aa9429562:7")
	if got := bld.Set(); !got.Equal(want) {
		t.Fatalf("built %s, want %s", got, want)
	}
	for _, tc := range []struct {
		g    GTID
		want bool
	}{
		{GTID{SID: a, GNO: 3}, true}, {GTID{SID: a, GNO: 4}, false}, {GTID{SID: a, Tag: "blue", GNO: 1}, true},
		{GTID{SID: a, Tag: "blue", GNO: 2}, false}, {GTID{SID: b, GNO: 7}, true}, {GTID{SID: b, GNO: 6}, false},
	} {
		if got := want.Has(tc.g); got != tc.want {
			t.Errorf("Has(%s) = %v, want %v", tc.g, got, tc.want)
		}
		if got := MustParse(tc.g.String()); !want.Contains(got) != !tc.want {
			t.Errorf("%s parses to %s, Contains disagrees with Has", tc.g, got)
		}
	}
	inter := want.Intersect(MustParse("3e11fa47-71ca-11e1-9e33-c80aa9429562:2-9,4e11fa47-71ca-11e1-9e33-c80aa9429562:1-3"))
	if !inter.Equal(MustParse("3e11fa47-71ca-11e1-9e33-c80aa9429562:2-3:5")) {
		t.Fatalf("intersection %s", inter)
	}
}

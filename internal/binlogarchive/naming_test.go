package binlogarchive

import (
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

func TestSegmentName(t *testing.T) {
	base := func() string {
		return SegmentName(uuidA, "binlog.000002", set(uuidA+":1-10"), set(uuidA+":11-20"), t0, t0.Add(time.Second))
	}
	seg := objectstore.Segment{Name: base(), SHA256: "0000000000000000000000000000000000000000000000000000000000000000"}
	if err := seg.Validate(); err != nil {
		t.Fatalf("the name is not a valid segment name: %v", err)
	}
	if base() != base() {
		t.Fatal("the same segment must get the same name (a retried upload overwrites itself)")
	}
	for _, tc := range []struct{ name, other string }{
		{"another server, same file name", SegmentName(uuidB, "binlog.000002", set(uuidA+":1-10"), set(uuidA+":11-20"), t0, t0.Add(time.Second))},
		{"numbering restarted after a failback", SegmentName(uuidA, "binlog.000002", set(uuidA+":1-30"), set(uuidA+":31-40"), t0, t0.Add(time.Second))},
		{"same transactions, another time range", SegmentName(uuidA, "binlog.000002", set(uuidA+":1-10"), set(uuidA+":11-20"), t0.Add(time.Hour), t0.Add(time.Hour))},
		{"empty previous set", SegmentName(uuidA, "binlog.000002", gtid.Set{}, set(uuidA+":11-20"), t0, t0.Add(time.Second))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.other == base() {
				t.Fatalf("%q collides with %q", tc.other, base())
			}
		})
	}
}

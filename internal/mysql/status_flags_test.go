package mysql

import "testing"

func TestReadOnlyInEffect(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		readOnly, superReadOnly bool
		wantRO, wantSuperRO     bool
	}{
		{name: "writable server", wantRO: false, wantSuperRO: false},
		{name: "read_only alone is in effect", readOnly: true, wantRO: true},
		{name: "super_read_only with read_only is in effect", readOnly: true, superReadOnly: true, wantRO: true, wantSuperRO: true},
		{
			name:          "super_read_only set while read_only is still off is a SET waiting for the commits in flight: still writable",
			superReadOnly: true, wantRO: false, wantSuperRO: false,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ro, superRO := readOnlyInEffect(tc.readOnly, tc.superReadOnly)
			if ro != tc.wantRO || superRO != tc.wantSuperRO {
				t.Errorf("readOnlyInEffect(%v, %v) = %v, %v; want %v, %v",
					tc.readOnly, tc.superReadOnly, ro, superRO, tc.wantRO, tc.wantSuperRO)
			}
		})
	}
}

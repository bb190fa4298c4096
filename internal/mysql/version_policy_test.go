package mysql

import (
	"strings"
	"testing"
)

func TestParseServerVersion(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want ServerVersion // zero when the text must be refused
	}{
		{"9.7.0", ServerVersion{Major: 9, Minor: 7, Patch: 0}},
		{"8.4.3", ServerVersion{Major: 8, Minor: 4, Patch: 3}},
		{"8.0.40", ServerVersion{Major: 8, Minor: 0, Patch: 40}},
		{"9.7.0-debug", ServerVersion{Major: 9, Minor: 7, Patch: 0, Suffix: "-debug"}},
		// What the Debian build of the test machines prints and records.
		{"9.7.4-2", ServerVersion{Major: 9, Minor: 7, Patch: 4, Suffix: "-2"}},
		{"26.7.0", ServerVersion{Major: 26, Minor: 7, Patch: 0}},
		{"8.4.5+build1", ServerVersion{Major: 8, Minor: 4, Patch: 5, Suffix: "+build1"}},
		{"", ServerVersion{}},
		{"9.7", ServerVersion{}},
		{"9.7.x", ServerVersion{}},
		{"v9.7.0", ServerVersion{}},
		{"9.7.4.0-2", ServerVersion{}},
		{"9.7.0 debug", ServerVersion{}},
		{"99999999999999999999.7.0", ServerVersion{}},
	} {
		got, err := ParseServerVersion(tc.in)
		if tc.want == (ServerVersion{}) {
			if err == nil {
				t.Errorf("ParseServerVersion(%q) = %+v, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want || got.String() != tc.in {
			t.Errorf("ParseServerVersion(%q) = %+v (%q), %v; want %+v", tc.in, got, got.String(), err, tc.want)
		}
	}
}

func TestDecideVersionChange(t *testing.T) {
	for _, tc := range []struct {
		rule           string
		dataDir, image string
		allow          bool
		want           VersionRule
		message        string // a part of the message
	}{
		{"same version starts", "9.7.0", "9.7.0", true, VersionSame, "last used by MySQL 9.7.0; this image runs 9.7.0"},
		{"another build of the same release starts", "9.7.4-2", "9.7.4-debug", true, VersionSame, "the same release"},
		{"upgrade within a series starts", "8.4.3", "8.4.5", true, VersionUpgrade, "an upgrade"},
		{"upgrade across series starts", "8.4.3", "9.7.0", true, VersionUpgrade, "an upgrade"},
		{"upgrade from an 8.0 release starts", "8.0.40", "8.4.3", true, VersionUpgrade, "an upgrade"},
		{"upgrade to a calendar-versioned release starts", "9.7.4", "26.7.0", true, VersionUpgrade, "an upgrade"},
		{"downgrade within the 8.4 LTS series starts", "8.4.5", "8.4.3", true, VersionLTSDowngrade, "within the 8.4 LTS series"},
		{"downgrade within the 9.7 LTS series starts", "9.7.4-2", "9.7.0", true, VersionLTSDowngrade, "within the 9.7 LTS series"},
		{"downgrade of an 8.0 release is refused", "8.0.40", "8.0.36", false, Version80Downgrade,
			"within MySQL 8.0 are not done in place (8.0 supports them only between releases from 8.0.35 on); set imageName back to an image of MySQL 8.0.40 or later"},
		{"downgrade within an Innovation series is refused", "9.1.2", "9.1.0", false, VersionInnovationDowngrade,
			"only within an LTS series, and 9.1 is not one; set imageName back to an image of MySQL 9.1.2 or later"},
		{"downgrade within a calendar-versioned series not known as LTS is refused", "26.10.2", "26.10.1", false, VersionInnovationDowngrade,
			"26.10 is not one"},
		{"downgrade across series is refused", "9.7.0", "8.4.3", false, VersionSeriesDowngrade,
			"the data directory was last used by MySQL 9.7.0; this image runs 8.4.3: MySQL does not support downgrading across release series; set imageName back to a MySQL 9.7 image"},
		{"downgrade from an LTS to the Innovation series before it is refused", "8.4.0", "8.3.0", false, VersionSeriesDowngrade,
			"set imageName back to a MySQL 8.4 image"},
		{"downgrade from an Innovation series to the LTS before it is refused", "9.1.2", "8.4.3", false, VersionSeriesDowngrade,
			"set imageName back to an image of MySQL 9.1.2 or later"},
		{"downgrade from a calendar-versioned release to 9.7 is refused", "26.7.0", "9.7.4", false, VersionSeriesDowngrade,
			"across release series"},
		{"an unreadable data directory version is refused", "9.7", "9.7.4", false, VersionUnreadable,
			`the data directory records: "9.7" is not a MySQL version`},
		{"an unreadable image version is refused", "9.7.4", "Ver", false, VersionUnreadable,
			`this image's mysqld: "Ver" is not a MySQL version`},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			got := DecideVersionChange(tc.dataDir, tc.image)
			if got.Allow != tc.allow || got.Rule != tc.want || !strings.Contains(got.Message, tc.message) {
				t.Errorf("DecideVersionChange(%q, %q) = %v %v %q; want %v %v with %q",
					tc.dataDir, tc.image, got.Allow, got.Rule, got.Message, tc.allow, tc.want, tc.message)
			}
		})
	}
}

// The message ends up in a termination message, which the kubelet cuts at 4096 bytes.
func TestDecideVersionChangeKeepsAnUnreadableVersionShort(t *testing.T) {
	got := DecideVersionChange("9.7.4", strings.Repeat("x", 10000))
	if got.Allow || len(got.Message) > 400 {
		t.Errorf("a 10000-byte version gives %v and a %d-byte message", got.Allow, len(got.Message))
	}
}

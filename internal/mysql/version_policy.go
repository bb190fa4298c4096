package mysql

import (
	"fmt"
	"regexp"
	"strconv"
)

// RefusedStartMessage begins the termination message of an instance container whose manager
// refused to start mysqld on its data directory (a downgrade MySQL does not support): the operator
// finds it in the Pod's container status and reports it on the Cluster.
const RefusedStartMessage = "refusing to start mysqld"

// ServerVersion is a MySQL server version as mysqld prints it: MAJOR.MINOR.PATCH and an optional
// suffix ("9.7.0-debug", "9.7.4-2" of a distribution build, "8.4.1-u1" of a cloud update,
// "8.4.5+build" of a custom build).
type ServerVersion struct {
	Major, Minor, Patch int
	// Suffix is what follows the three numbers, its "-" included. It names a build, not a
	// release, so comparisons leave it out.
	Suffix string
}

var serverVersionPattern = regexp.MustCompile(`^([0-9]{1,4})\.([0-9]{1,4})\.([0-9]{1,6})([-+]\S*)?$`)

// ParseServerVersion reads a version such as "9.7.0", "8.0.40" or "9.7.0-debug".
func ParseServerVersion(s string) (ServerVersion, error) {
	m := serverVersionPattern.FindStringSubmatch(s)
	if m == nil {
		return ServerVersion{}, fmt.Errorf("%q is not a MySQL version (MAJOR.MINOR.PATCH with an optional -suffix)", clip(s))
	}
	var n [3]int
	for i := range n {
		var err error
		if n[i], err = strconv.Atoi(m[i+1]); err != nil {
			return ServerVersion{}, fmt.Errorf("version %q: %w", clip(s), err)
		}
	}
	return ServerVersion{Major: n[0], Minor: n[1], Patch: n[2], Suffix: m[4]}, nil
}

func (v ServerVersion) String() string {
	return fmt.Sprintf("%d.%d.%d%s", v.Major, v.Minor, v.Patch, v.Suffix)
}

// Series is MAJOR.MINOR: the release series, which is also the YY.M release base of a
// calendar-versioned release (26.7.1 is in 26.7).
func (v ServerVersion) Series() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// Compare returns -1, 0 or +1 as v is older than, the same release as, or newer than o.
func (v ServerVersion) Compare(o ServerVersion) int {
	for _, d := range [...]int{v.Major - o.Major, v.Minor - o.Minor, v.Patch - o.Patch} {
		if d < 0 {
			return -1
		}
		if d > 0 {
			return 1
		}
	}
	return 0
}

// ltsSeries are the MySQL series released as LTS, whose releases MySQL supports downgrading in
// place to an earlier release of the same series. A calendar version (MySQL after 9.7: 26.7 and
// on) does not say whether its series is LTS; such a series is added here once it is released as
// one, and until then a downgrade within it is refused, the safe side.
var ltsSeries = map[[2]int]bool{{8, 4}: true, {9, 7}: true}

func (v ServerVersion) isLTS() bool { return ltsSeries[[2]int{v.Major, v.Minor}] }

// VersionRule names the rule of DecideVersionChange that applied.
type VersionRule int

const (
	// VersionSame: the image runs the release that last ran on the data directory.
	VersionSame VersionRule = iota
	// VersionUpgrade: the image is newer; mysqld upgrades the data directory on its first start.
	// Whether MySQL supports that path (it documents none that skips an LTS series, 8.0 to 9.7)
	// is left to mysqld's own checks.
	VersionUpgrade
	// VersionLTSDowngrade: an earlier release of the same LTS series, which MySQL supports in
	// place (8.4.y to 8.4.x, 9.7.y to 9.7.x).
	VersionLTSDowngrade
	// Version80Downgrade: an earlier 8.0 release, refused. 8.0 is a bugfix series, not an LTS
	// one: it supports an in-place downgrade only between releases from 8.0.35 on, and InnoDB
	// refuses to boot a data directory of a later release below that. A downgrade that works for
	// some pairs of 8.0 releases only, on a series past its end of life, is not worth a rule that
	// could let a bad pair through.
	Version80Downgrade
	// VersionInnovationDowngrade: an earlier release of the same Innovation series (9.1.2 to
	// 9.1.0), or of a series not known to be LTS: MySQL supports no in-place downgrade there.
	VersionInnovationDowngrade
	// VersionSeriesDowngrade: an earlier series (9.7 to 8.4, 8.4 to 8.3, 8.4 to 8.0): MySQL
	// supports that only by dump and load or replication, never in place.
	VersionSeriesDowngrade
	// VersionUnreadable: a version cannot be read, so nothing says the start is safe.
	VersionUnreadable
)

func (r VersionRule) String() string {
	return [...]string{"same", "upgrade", "lts-downgrade", "8.0-downgrade", "innovation-downgrade",
		"series-downgrade", "unreadable"}[r]
}

// VersionDecision is the outcome of DecideVersionChange.
type VersionDecision struct {
	// Allow says whether mysqld may start on the data directory.
	Allow bool
	Rule  VersionRule
	// Message names both versions and the rule; a refusal says what to set imageName to.
	Message string
}

// DecideVersionChange decides whether mysqld of version image may start on a data directory on
// which version dataDir last ran, following MySQL's documented downgrade paths: only a downgrade
// within an LTS series is done in place; every other downgrade needs a dump and load, which the
// instance manager does not do, so it refuses rather than let mysqld fail on, or damage, the
// data. Every upgrade is allowed. A version that cannot be read is refused.
func DecideVersionChange(dataDir, image string) VersionDecision {
	d, err := ParseServerVersion(dataDir)
	if err != nil {
		return VersionDecision{Rule: VersionUnreadable, Message: fmt.Sprintf(
			"cannot read the MySQL version the data directory records: %v; mysqld is not started on data of an unknown version", err)}
	}
	i, err := ParseServerVersion(image)
	if err != nil {
		return VersionDecision{Rule: VersionUnreadable, Message: fmt.Sprintf(
			"cannot read the MySQL version of this image's mysqld: %v; mysqld is not started on data it may not support", err)}
	}
	was := fmt.Sprintf("the data directory was last used by MySQL %s; this image runs %s", d, i)
	allow := func(rule VersionRule, why string) VersionDecision {
		return VersionDecision{Allow: true, Rule: rule, Message: was + ": " + why}
	}
	refuse := func(rule VersionRule, why string) VersionDecision {
		back := "set imageName back to an image of MySQL " + d.String() + " or later"
		if d.isLTS() {
			back = "set imageName back to a MySQL " + d.Series() + " image"
		}
		return VersionDecision{Rule: rule, Message: was + ": " + why + "; " + back}
	}
	switch sameSeries := d.Major == i.Major && d.Minor == i.Minor; {
	case i.Compare(d) == 0:
		return allow(VersionSame, "the same release")
	case i.Compare(d) > 0:
		return allow(VersionUpgrade, "an upgrade, which mysqld performs on its first start")
	case sameSeries && d.isLTS():
		return allow(VersionLTSDowngrade, "a downgrade within the "+d.Series()+" LTS series, which MySQL supports in place")
	case sameSeries && d.Major == 8 && d.Minor == 0:
		return refuse(Version80Downgrade, "downgrades within MySQL 8.0 are not done in place (8.0 supports them only between releases from 8.0.35 on)")
	case sameSeries:
		return refuse(VersionInnovationDowngrade, "MySQL supports an in-place downgrade only within an LTS series, and "+d.Series()+" is not one")
	default:
		return refuse(VersionSeriesDowngrade, "MySQL does not support downgrading across release series")
	}
}

// clip keeps an unreadable version short enough for a container's termination message.
func clip(s string) string {
	const limit = 64
	if len(s) > limit {
		return s[:limit] + "..."
	}
	return s
}

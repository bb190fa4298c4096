package mysql

import (
	"regexp"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
)

// ownerSuffix is the "#<thread id>" MySQL appends to each GTID in @@GLOBAL.gtid_owned.
var ownerSuffix = regexp.MustCompile(`#[0-9]+`)

// parseOwned turns @@GLOBAL.gtid_owned (GTIDs each followed by the id of the thread that owns
// it, for example "uuid:7#12, uuid:8#13") into a GTID set.
func parseOwned(text string) (gtid.Set, error) {
	return gtid.Parse(ownerSuffix.ReplaceAllString(text, ""))
}

package binlogarchive

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
)

// segmentTimeLayout renders event times in names: sortable, no ':' (not allowed in a name).
const segmentTimeLayout = "20060102T150405.000000Z"

// SegmentName names the object of an archived binlog, relative to the cluster's binlog directory:
//
//	<server uuid>/<first event>_<last event>_<gtid digest>_<binlog file>
//
// The server UUID and the digest of the segment's GTID set (with its Previous_gtids) tell apart
// two servers writing files of the same name, or one server whose numbering restarted: the name
// repeats only for the same transactions of the same server, which is the same segment.
func SegmentName(serverUUID, file string, previous, gtids gtid.Set, first, last time.Time) string {
	digest := sha256.Sum256([]byte(previous.String() + "|" + gtids.String()))
	return fmt.Sprintf("%s/%s_%s_%s_%s", strings.ToLower(serverUUID), first.UTC().Format(segmentTimeLayout),
		last.UTC().Format(segmentTimeLayout), hex.EncodeToString(digest[:8]), file)
}

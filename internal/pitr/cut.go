package pitr

import (
	"fmt"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
)

// Transaction is one transaction read from a segment: its GTID and when it committed on the
// server that first ran it (original_commit_timestamp).
type Transaction struct {
	GTID       gtid.GTID
	CommitTime time.Time
}

// CutAtTime returns the transactions to replay for a time target: read in replay order, those
// not in the base backup up to the first one committed after the target (a prefix of the
// history, never a selection with holes). Transactions already in the base backup or read
// before are skipped; one in the base backup committed after the target means the base backup
// is past it (ErrBaseBeyondTarget).
func CutAtTime(txns []Transaction, base gtid.Set, at time.Time) (gtid.Set, error) {
	var apply gtid.Builder
	stopped := false
	for _, tx := range txns {
		if base.Has(tx.GTID) {
			if tx.CommitTime.After(at) {
				return gtid.Set{}, fmt.Errorf("%w: it holds %s, committed at %s, after the target %s", ErrBaseBeyondTarget,
					tx.GTID, tx.CommitTime.UTC().Format(time.RFC3339Nano), at.UTC().Format(time.RFC3339Nano))
			}
			continue
		}
		if stopped {
			continue
		}
		if tx.CommitTime.After(at) {
			stopped = true
			continue
		}
		apply.Add(tx.GTID)
	}
	return apply.Set(), nil
}

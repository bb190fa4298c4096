package pitr

import (
	"fmt"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

// Transaction is one transaction read from a segment: its GTID and when it committed on the
// server that first ran it (original_commit_timestamp).
type Transaction struct {
	GTID       gtid.GTID
	CommitTime time.Time
}

// Cut decides the transactions to replay for a time target, segment by segment in replay order:
// those not in the base backup up to the first one committed after the target (a prefix of the
// history, never a selection with holes). Transactions already in the base backup or seen before
// are skipped; one in the base backup committed after the target means the base backup is past
// it (ErrBaseBeyondTarget).
type Cut struct {
	base    gtid.Set
	at      time.Time
	apply   gtid.Builder
	whole   []gtid.Set
	stopped bool
}

// NewCut starts a cut of the history after base at the instant at.
func NewCut(base gtid.Set, at time.Time) *Cut { return &Cut{base: base, at: at} }

// indexTimeResolution is how coarse an index entry's event times may be: the archiver records
// the time of a tagged GTID event (MySQL 8.3+) from its header, to the second.
const indexTimeResolution = time.Second

// Whole takes a segment whose last event is known and a second or more before the target
// without reading it: all its transactions are in the cut (unless the cut stopped before it,
// when none is, and none of them can be a base backup's transaction after the target). It
// returns false when the segment must be read (Read).
func (c *Cut) Whole(s objectstore.Segment) (bool, error) {
	if s.LastEventTime.IsZero() || s.LastEventTime.Add(indexTimeResolution).After(c.at) {
		return false, nil
	}
	if !c.stopped {
		g, err := gtid.Parse(s.GTIDRange)
		if err != nil {
			return false, fmt.Errorf("segment %s: gtidRange: %w", s.Name, err)
		}
		c.whole = append(c.whole, g.Subtract(c.base))
	}
	return true, nil
}

// Read cuts the transactions of the next segment, read from its events.
func (c *Cut) Read(txns []Transaction) error {
	for _, tx := range txns {
		if c.base.Has(tx.GTID) {
			if tx.CommitTime.After(c.at) {
				return fmt.Errorf("%w: it holds %s, committed at %s, after the target %s", ErrBaseBeyondTarget,
					tx.GTID, tx.CommitTime.UTC().Format(time.RFC3339Nano), c.at.UTC().Format(time.RFC3339Nano))
			}
			continue
		}
		if c.stopped {
			continue
		}
		if tx.CommitTime.After(c.at) {
			c.stopped = true
			continue
		}
		c.apply.Add(tx.GTID)
	}
	return nil
}

// Set returns the transactions to replay.
func (c *Cut) Set() gtid.Set { return gtid.Union(append(c.whole, c.apply.Set())...) }

// CutAtTime is a Cut of transactions read in replay order.
func CutAtTime(txns []Transaction, base gtid.Set, at time.Time) (gtid.Set, error) {
	c := NewCut(base, at)
	if err := c.Read(txns); err != nil {
		return gtid.Set{}, err
	}
	return c.Set(), nil
}

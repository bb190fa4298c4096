package pitr

import (
	"fmt"
	"time"

	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/google/uuid"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
)

// ReadTransactions returns the transactions of a binary log file in the order it holds them,
// each with its commit time: the GTID event's original_commit_timestamp (the commit on the
// server that first ran it), else its immediate_commit_timestamp, else the event header's
// timestamp (seconds), as the archiver's segment times are.
func ReadTransactions(path string) ([]Transaction, error) {
	p := replication.NewBinlogParser()
	p.SetVerifyChecksum(true)
	// Only GTID events matter here: row images are not decoded.
	p.SetRowsEventDecodeFunc(func(*replication.RowsEvent, []byte) error { return nil })
	var out []Transaction
	err := p.ParseFile(path, 0, func(e *replication.BinlogEvent) error {
		var ev *replication.GTIDEvent
		switch g := e.Event.(type) {
		case *replication.GTIDEvent:
			ev = g
		case *replication.GtidTaggedLogEvent:
			ev = &g.GTIDEvent
		default:
			return nil
		}
		sid, err := uuid.FromBytes(ev.SID)
		if err != nil {
			return fmt.Errorf("GTID event at %d: %w", e.Header.LogPos, err)
		}
		when := ev.OriginalCommitTime()
		if when.IsZero() {
			when = ev.ImmediateCommitTime()
		}
		if when.IsZero() {
			when = time.Unix(int64(e.Header.Timestamp), 0)
		}
		out = append(out, Transaction{GTID: gtid.GTID{SID: sid, Tag: ev.Tag.String(), GNO: ev.GNO}, CommitTime: when.UTC()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the transactions of %s: %w", path, err)
	}
	return out, nil
}

package pitr

import "errors"

var (
	// ErrNoBase: no base backup fits the target (none started before a target time, none whose
	// gtid_executed is within a target GTID set).
	ErrNoBase = errors.New("no base backup fits the recovery target")
	// ErrBaseBeyondTarget: the base backup already holds transactions past the target.
	ErrBaseBeyondTarget = errors.New("the base backup holds transactions past the recovery target")
	// ErrGap: a transaction the target needs cannot be replayed because history before it is
	// neither in the base backup nor in any archived segment (a segment was never archived, or
	// the base backup is older than the archive).
	ErrGap = errors.New("the binlog archive has a gap")
	// ErrBeyondArchive: the target lies past what the archive is known to hold.
	ErrBeyondArchive = errors.New("the recovery target is beyond the binlog archive")
	// ErrSegment: an archived segment is missing from the object store, or its bytes differ from
	// the size and sha256 _index.json records.
	ErrSegment = errors.New("an archived binlog segment is missing or corrupt")
	// ErrReplayMismatch: after the replay, gtid_executed differs from the set expected.
	ErrReplayMismatch = errors.New("gtid_executed after the replay differs from the recovery target's")
)

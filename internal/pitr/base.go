package pitr

import (
	"fmt"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/restore"
)

// ChooseBase picks the base backup a recovery to t restores when none is named:
//   - latest: the newest backup (restore.Newest: the latest stoppedAt);
//   - a time: among the backups that started before it, the newest that also stopped at or
//     before it (it cannot hold a transaction past the target), else the newest that started
//     before it (whether it holds one past the target is checked against the archive);
//   - a GTID set: the newest backup whose gtid_executed is within the set.
func ChooseBase(backups []*objectstore.Metadata, t Target) (*objectstore.Metadata, error) {
	var fits, ended []*objectstore.Metadata
	for _, md := range backups {
		ok, err := baseFits(md, t)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		fits = append(fits, md)
		if t.Kind == AtTime && !md.StoppedAt.After(t.Time) {
			ended = append(ended, md)
		}
	}
	if best := restore.Newest(ended); best != nil {
		return best, nil
	}
	if best := restore.Newest(fits); best != nil {
		return best, nil
	}
	return nil, fmt.Errorf("%w: none of %d base backups %s", ErrNoBase, len(backups), fitRule(t))
}

// CheckBase refuses a named base backup that cannot reach t: one that started at or after a
// target time, or whose gtid_executed holds a transaction outside a target GTID set.
func CheckBase(md *objectstore.Metadata, t Target) error {
	ok, err := baseFits(md, t)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: backup %s/%s (started %s, gtid_executed %q) is not one that %s", ErrBaseBeyondTarget,
			md.BackupName, md.BackupID, md.StartedAt.UTC().Format("2006-01-02T15:04:05Z"), md.GTIDExecuted, fitRule(t))
	}
	return nil
}

func baseFits(md *objectstore.Metadata, t Target) (bool, error) {
	switch t.Kind {
	case AtTime:
		return md.StartedAt.Before(t.Time), nil
	case AtGTID:
		have, err := gtid.Parse(md.GTIDExecuted)
		if err != nil {
			return false, fmt.Errorf("backup %s/%s: gtidExecuted: %w", md.BackupName, md.BackupID, err)
		}
		return t.GTID.Contains(have), nil
	}
	return true, nil
}

func fitRule(t Target) string {
	switch t.Kind {
	case AtTime:
		return "started before " + t.String()
	case AtGTID:
		return "holds only transactions of the " + t.String()
	}
	return "exists"
}

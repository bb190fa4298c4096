package pitr

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

// Window is the span of instants a recovery to a time can reach with the backups and archive of
// a cluster.
type Window struct {
	// From is the end of the oldest base backup the archive carries, without a gap, to the
	// newest transaction it can reach: a target before a backup's end may find the backup
	// already past it (a clone backup is consistent as of its end).
	From time.Time
	// To is the commit time of the newest transaction that chain reaches (the backup's end
	// when the archive adds nothing to it).
	To time.Time
	// Base names the backup From comes from, as "<backup-name>/<backup-id>".
	Base string
}

// RecoverableWindow returns the window ending at the newest transaction reachable without a gap:
// backups are tried from the oldest end on, and one the archive cannot carry to the latest
// reachable transaction (a gap after it, ErrGap) does not open the window; ok is false when no
// backup can. To is where a recovery to latest from From's backup ends.
func RecoverableWindow(backups []*objectstore.Metadata, index *objectstore.Index) (w Window, ok bool, err error) {
	byEnd := slices.Clone(backups)
	slices.SortStableFunc(byEnd, func(a, b *objectstore.Metadata) int { return a.StoppedAt.Compare(b.StoppedAt) })
	for _, md := range byEnd {
		base, err := gtid.Parse(md.GTIDExecuted)
		if err != nil {
			return Window{}, false, fmt.Errorf("backup %s/%s: gtidExecuted: %w", md.BackupName, md.BackupID, err)
		}
		plan, err := PlanReplay(index, base, Target{Kind: Latest})
		if errors.Is(err, ErrGap) {
			continue
		}
		if err != nil {
			return Window{}, false, err
		}
		to := md.StoppedAt
		for _, s := range index.Segments {
			if s.LastEventTime.After(to) && plan.Expected.Contains(gtid.MustParse(s.GTIDRange)) {
				to = s.LastEventTime
			}
		}
		return Window{From: md.StoppedAt, To: to, Base: md.BackupName + "/" + md.BackupID}, true, nil
	}
	return Window{}, false, nil
}

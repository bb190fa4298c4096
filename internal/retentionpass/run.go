package retentionpass

import (
	"context"
	"fmt"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/retention"
)

// Run performs one retention pass of cluster under policy: it gathers the inventory (backup
// directories, their metadata.json, the binlog index), asks retention.Decide for a plan, deletes
// the expired backup directories and the incomplete ones older than the grace period (every
// metadata.json before any archive), aborts multipart uploads older than the grace period,
// deletes the uncoverable binlog segments, and last removes exactly those segments from
// _index.json with a conditional write retried on conflict.
//
// Only restorable backups of this cluster enter the plan: a directory whose metadata.json names
// another namespace than opts.Namespace (a Cluster of the same name elsewhere sharing the
// location), or whose archive is missing or of another size than recorded, is kept and reported,
// never counted; the first also stops segment deletion, the binlog directory being shared.
//
// A zero policy does nothing, without a request. On any store error Run stops and returns it
// (wrapped) with what it did so far in the Report; nothing is left inconsistent: a directory is
// either whole, gone, or without metadata.json (removed by a later pass), and the index only
// ever loses segments whose objects are gone. Index entries whose objects are already gone are
// planned again by the next pass and removed then. No index is created where there is none.
func Run(ctx context.Context, store Store, cluster string, policy retention.Policy, opts Options) (Report, error) {
	var report Report
	if policy.IsZero() {
		return report, nil
	}
	if opts.Now.IsZero() {
		return report, fmt.Errorf("retention pass of cluster %s: %w: no current time in the options", cluster, objectstore.ErrInvalid)
	}
	g, err := gather(ctx, store, cluster, opts)
	if err != nil {
		return report, fmt.Errorf("retention pass of cluster %s: gathering the inventory: %w", cluster, err)
	}
	report.Unreadable, report.Unrestorable = g.unreadable, g.unrestorable
	report.Foreign, report.ForeignNamespaces = g.foreign, g.foreignNS
	report.Listed, report.Found = true, g.found
	report.Plan = retention.Decide(g.inv, policy, opts.Now)
	if len(g.foreign) > 0 {
		// The binlog directory is shared with the other Cluster, whose backups the plan does not
		// know: none of its segments is this pass's to judge.
		report.Plan.DeleteSegments, report.Plan.SegmentBytes = nil, 0
	}
	if err := deleteDirs(ctx, store, g, opts, &report); err != nil {
		return report, fmt.Errorf("retention pass of cluster %s: deleting backup directories: %w", cluster, err)
	}
	if err := abortStaleUploads(ctx, store, cluster, opts, &report); err != nil {
		return report, fmt.Errorf("retention pass of cluster %s: aborting stale uploads: %w", cluster, err)
	}
	if err := deleteSegments(ctx, store, cluster, g, &report); err != nil {
		return report, fmt.Errorf("retention pass of cluster %s: deleting binlog segments: %w", cluster, err)
	}
	return report, nil
}

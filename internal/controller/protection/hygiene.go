package protection

import (
	"sort"
	"strings"
	"time"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// expiredBackups picks the Backup objects of the Cluster that spec.backup.finishedBackupTTL
// deletes: finished (completed, failed or superseded) more than ttl before now, not being
// deleted, except the newest completed one and those a Cluster of the namespace recovers from.
// Oldest first. No ttl, none.
func expiredBackups(now time.Time, ttl time.Duration, backups []v1.Backup, recoveringFrom map[string]bool) []v1.Backup {
	if ttl <= 0 {
		return nil
	}
	newest := lastSuccess(backups)
	var out []v1.Backup
	for _, b := range backups {
		switch {
		case !b.IsDone(), b.DeletionTimestamp != nil, b.Status.CompletedAt == nil, recoveringFrom[b.Name],
			newest != nil && b.Name == newest.Name, now.Sub(b.Status.CompletedAt.Time) <= ttl:
			continue
		}
		out = append(out, b)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Status.CompletedAt.Before(out[j].Status.CompletedAt) })
	return out
}

// recoverySources are the Backup names the Clusters recover from (bootstrap.recovery.backup).
func recoverySources(clusters []v1.Cluster) map[string]bool {
	out := map[string]bool{}
	for i := range clusters {
		if name := clusters[i].Recovery().BackupName(); name != "" {
			out[name] = true
		}
	}
	return out
}

func names(backups []v1.Backup) string {
	out := make([]string, 0, len(backups))
	for _, b := range backups {
		out = append(out, b.Name)
	}
	return strings.Join(out, ", ")
}

package retention

import (
	"time"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

// protection is the set of backup directories of one cluster a pass must not delete,
// whatever the policy says.
type protection struct {
	// refs are exact directories.
	refs map[objectstore.BackupRef]bool
	// names protect every directory of a backup name, when the id is not known.
	names map[string]bool
}

// protects reports whether ref is protected.
func (p protection) protects(ref objectstore.BackupRef) bool {
	return p.refs[ref] || p.names[ref.Name]
}

// protectedBackups finds what a pass of cluster (whose directory in the store is dir) must keep, from the Clusters and Backups of its
// namespace:
//   - the Backup a Cluster's spec.bootstrap.recovery.backup names (resolved through its
//     status.backupId), as long as that Cluster exists, whether or not it has bootstrapped;
//   - the Backups of cluster that are not done (pending or running): their directory may be
//     being written.
//
// When the id is unknown (a recovery names a Backup that is gone or has no backupId, a Backup not
// done has no backupId yet) every directory of that backup name in cluster is protected: the
// protection errs on the side of keeping.
func protectedBackups(cluster, dir string, clusters []v1.Cluster, backups []v1.Backup) protection {
	p := protection{refs: map[objectstore.BackupRef]bool{}, names: map[string]bool{}}
	byName := map[string]*v1.Backup{}
	for i := range backups {
		byName[backups[i].Name] = &backups[i]
	}
	protect := func(b *v1.Backup) {
		if b.Spec.Cluster.Name != cluster {
			return
		}
		if b.Status.BackupID == "" {
			p.names[b.Name] = true
			return
		}
		p.refs[objectstore.BackupRef{Cluster: dir, Name: b.Name, ID: b.Status.BackupID}] = true
	}
	for i := range clusters {
		name := clusters[i].Recovery().BackupName()
		if name == "" {
			continue
		}
		if b, ok := byName[name]; ok {
			protect(b)
		} else {
			p.names[name] = true
		}
	}
	for i := range backups {
		if !backups[i].IsDone() {
			protect(&backups[i])
		}
	}
	return p
}

// minIncompleteGrace is the least age of a backup directory without metadata.json before a pass
// deletes it as an interrupted upload.
const minIncompleteGrace = 24 * time.Hour

// incompleteGrace is how old a backup directory without metadata.json must be before a pass of
// cluster deletes it: at least minIncompleteGrace, and longer than the timeout of any of the
// cluster's Backups that is not done, since such a Backup may still write its metadata.json until
// its timeout fails it. The 24 hours floor also absorbs clock skew between the object store,
// which dates the objects, and the operator.
func incompleteGrace(cluster string, backups []v1.Backup) time.Duration {
	grace := minIncompleteGrace
	for i := range backups {
		b := &backups[i]
		if b.Spec.Cluster.Name == cluster && !b.IsDone() {
			grace = max(grace, b.EffectiveTimeout()+time.Hour)
		}
	}
	return grace
}

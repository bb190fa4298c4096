package controller

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

// retentionProtection is the set of backup directories of one cluster a pass must not delete,
// whatever the policy says.
type retentionProtection struct {
	// refs are exact directories.
	refs map[objectstore.BackupRef]bool
	// names protect every directory of a backup name, when the id is not known.
	names map[string]bool
}

// protects reports whether ref is protected.
func (p retentionProtection) protects(ref objectstore.BackupRef) bool {
	return p.refs[ref] || p.names[ref.Name]
}

// protectedBackups finds what a pass of cluster must keep, from the Clusters and Backups of its
// namespace:
//   - the Backup a Cluster's spec.bootstrap.recovery.backup names (resolved through its
//     status.backupId), as long as that Cluster exists, whether or not it has bootstrapped;
//   - the Backups of cluster that are not done (pending or running): their directory may be
//     being written.
//
// When the id is unknown (a recovery names a Backup that is gone or has no backupId, a Backup not
// done has no backupId yet) every directory of that backup name in cluster is protected: the
// protection errs on the side of keeping.
func protectedBackups(cluster string, clusters []v1.Cluster, backups []v1.Backup) retentionProtection {
	p := retentionProtection{refs: map[objectstore.BackupRef]bool{}, names: map[string]bool{}}
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
		p.refs[objectstore.BackupRef{Cluster: cluster, Name: b.Name, ID: b.Status.BackupID}] = true
	}
	for i := range clusters {
		rec := clusters[i].Spec.Bootstrap
		if rec == nil || rec.Recovery == nil || rec.Recovery.Backup.Name == "" {
			continue
		}
		name := rec.Recovery.Backup.Name
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

// backupsOfExpired returns the Backups whose recorded directory is one of the deleted refs in the
// store described by cfg: the same endpoint, bucket and destination path. Backups already marked
// expired are left out.
func backupsOfExpired(expired []objectstore.BackupRef, cfg objectstore.Config, backups []v1.Backup) []*v1.Backup {
	dirs := map[string]bool{}
	for _, ref := range expired {
		dirs[objectstore.BackupDir(cfg.Path, ref)] = true
	}
	var out []*v1.Backup
	for i := range backups {
		b := &backups[i]
		st := b.Status
		if !dirs[st.DestinationPath] || st.Bucket != cfg.Bucket || st.Endpoint != cfg.EndpointURL() {
			continue
		}
		if c := meta.FindStatusCondition(st.Conditions, v1.BackupArtifactsAvailable); c != nil &&
			c.Status == metav1.ConditionFalse && c.Reason == v1.ReasonArtifactsExpired {
			continue
		}
		out = append(out, b)
	}
	return out
}

// backupsMissing returns the completed Backups of cluster whose recorded directory is in the
// cluster's directory of the store described by cfg (the same endpoint, bucket and path) but was
// not among the complete directories a successful pass found, nor among those it deleted (gone):
// their metadata.json is no longer there, because an earlier pass deleted it and its marks were
// lost (a failed status write, a restart), or something else deleted it. Backups whose
// ArtifactsAvailable is already False are left out, and so are Backups recorded in another
// location, which the pass did not look at.
//
// backups must have been read before the pass listed the store: a Backup is completed only once
// its metadata.json was read back, so the listing saw every directory of the completed Backups
// read before it.
func backupsMissing(cluster string, found, gone []objectstore.BackupRef, cfg objectstore.Config, backups []v1.Backup) []*v1.Backup {
	seen := make(map[objectstore.BackupRef]bool, len(found)+len(gone))
	for _, ref := range slices.Concat(found, gone) {
		seen[ref] = true
	}
	var out []*v1.Backup
	for i := range backups {
		b := &backups[i]
		st := b.Status
		if !missingCandidate(b) || st.Bucket != cfg.Bucket || st.Endpoint != cfg.EndpointURL() {
			continue
		}
		prefix, ref, err := objectstore.ParseBackupDir(st.DestinationPath)
		if err != nil || prefix != cfg.Path || ref.Cluster != cluster || seen[ref] {
			continue
		}
		out = append(out, b)
	}
	return out
}

// missingCondition is the condition a completed Backup gets once a pass did not find its
// metadata.json.
func missingCondition(b *v1.Backup, now metav1.Time) metav1.Condition {
	return metav1.Condition{Type: v1.BackupArtifactsAvailable, Status: metav1.ConditionFalse,
		Reason: v1.ReasonArtifactsMissing, ObservedGeneration: b.Generation, LastTransitionTime: now,
		Message: "the retention pass did not find metadata.json in the object store: an earlier pass deleted it without recording it here, or it was deleted by other means"}
}

// expiredCondition is the condition a Backup gets once a pass of policy deleted its artifacts.
func expiredCondition(b *v1.Backup, policy string, now metav1.Time) metav1.Condition {
	return metav1.Condition{Type: v1.BackupArtifactsAvailable, Status: metav1.ConditionFalse,
		Reason: v1.ReasonArtifactsExpired, ObservedGeneration: b.Generation, LastTransitionTime: now,
		Message: "the retention policy (" + policy + ") deleted the archive and metadata.json from the object store"}
}

// missingCandidate says a Backup's artifacts can be marked missing: it completed, and is not marked
// unavailable already (an Expired mark is more precise).
func missingCandidate(b *v1.Backup) bool {
	return b.Status.Phase == v1.BackupPhaseCompleted &&
		!meta.IsStatusConditionFalse(b.Status.Conditions, v1.BackupArtifactsAvailable)
}

package retention

import (
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

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

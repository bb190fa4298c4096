package v1alpha1

import "time"

// DefaultBackupTimeout bounds a Backup without a timeout (the API defaults it to the same).
const DefaultBackupTimeout = 6 * time.Hour

// IsDone reports whether the Backup reached a final phase. A done Backup never runs again.
func (b *Backup) IsDone() bool {
	return b.Status.Phase == BackupPhaseCompleted || b.Status.Phase == BackupPhaseFailed ||
		b.Status.Phase == BackupPhaseSuperseded
}

// EffectiveTimeout is how long the whole backup may take: spec.timeout, or DefaultBackupTimeout
// when it is missing or not positive.
func (b *Backup) EffectiveTimeout() time.Duration {
	if b.Spec.Timeout != nil && b.Spec.Timeout.Duration > 0 {
		return b.Spec.Timeout.Duration
	}
	return DefaultBackupTimeout
}

// IsOnline reports whether the backup may run while the target keeps applying changes.
func (b *Backup) IsOnline() bool {
	return b.Spec.Online == nil || *b.Spec.Online
}

// EffectiveDeletionPolicy resolves the Backup's deletion policy against its Cluster's default;
// keep when neither says.
func (b *Backup) EffectiveDeletionPolicy(cluster *Cluster) DeletionPolicy {
	if b.Spec.DeletionPolicy != "" {
		return b.Spec.DeletionPolicy
	}
	if cluster != nil && cluster.Spec.Backup != nil && cluster.Spec.Backup.DeletionPolicy != "" {
		return cluster.Spec.Backup.DeletionPolicy
	}
	return DeletionPolicyKeep
}

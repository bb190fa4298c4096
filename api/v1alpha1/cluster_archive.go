package v1alpha1

import "time"

// DefaultArchiveTimeout is spec.backup.archiveTimeout when it is not set.
const DefaultArchiveTimeout = 3 * time.Second

// ArchiveTimeoutOrDefault returns spec.backup.archiveTimeout, or DefaultArchiveTimeout.
func (b *BackupConfiguration) ArchiveTimeoutOrDefault() time.Duration {
	if b == nil || b.ArchiveTimeout == nil || b.ArchiveTimeout.Duration <= 0 {
		return DefaultArchiveTimeout
	}
	return b.ArchiveTimeout.Duration
}

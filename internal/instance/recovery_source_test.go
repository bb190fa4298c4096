package instance

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/pitr"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/restore"
)

func TestRecoveryFailureReason(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("restoring b (p/c/b/1/): %w", err) }
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"a missing Backup object is not found", wrap(errRecoveryBackupMissing), v1alpha1.ReasonRecoveryBackupNotFound},
		{"a missing metadata.json is not found", wrap(objectstore.ErrNotFound), v1alpha1.ReasonRecoveryBackupNotFound},
		{"no complete backup in the bucket is not found", wrap(restore.ErrNoBackup), v1alpha1.ReasonRecoveryBackupNotFound},
		{"a sha256 or size mismatch fails verification", wrap(objectstore.ErrChecksumMismatch), v1alpha1.ReasonRecoveryVerificationFailed},
		{"an archive that does not unpack fails verification", wrap(restore.ErrCorrupt), v1alpha1.ReasonRecoveryVerificationFailed},
		{"a restored gtid_executed that differs fails verification", wrap(restore.ErrGTIDMismatch), v1alpha1.ReasonRecoveryVerificationFailed},
		{"a Backup checksum that differs from metadata.json fails verification", wrap(errRecoveryChecksum), v1alpha1.ReasonRecoveryVerificationFailed},
		{"an archive read that fails mid-stream on a vanished object is not found", wrap(fmt.Errorf("reading k: %w", objectstore.ErrNotFound)), v1alpha1.ReasonRecoveryBackupNotFound},
		{"an unreadable recovery target is unavailable", fmt.Errorf("%w: x", errRecoveryTarget), v1alpha1.ReasonRecoveryPointInTimeUnavailable},
		{"no base backup before the target is unavailable", wrap(pitr.ErrNoBase), v1alpha1.ReasonRecoveryPointInTimeUnavailable},
		{"a base backup past the target is unavailable", wrap(pitr.ErrBaseBeyondTarget), v1alpha1.ReasonRecoveryPointInTimeUnavailable},
		{"a target beyond the archive is unavailable", wrap(pitr.ErrBeyondArchive), v1alpha1.ReasonRecoveryPointInTimeUnavailable},
		{"a gap in the archive leaves it incomplete", wrap(pitr.ErrGap), v1alpha1.ReasonRecoveryArchiveIncomplete},
		{"a segment object that is gone leaves the archive incomplete", wrap(fmt.Errorf("%w: %w", pitr.ErrSegment, objectstore.ErrNotFound)), v1alpha1.ReasonRecoveryArchiveIncomplete},
		{"a segment whose sha256 differs fails verification", wrap(fmt.Errorf("%w: %w", pitr.ErrSegment, objectstore.ErrChecksumMismatch)), v1alpha1.ReasonRecoveryVerificationFailed},
		{"a gtid_executed after the replay that differs from the target's fails verification", wrap(pitr.ErrReplayMismatch), v1alpha1.ReasonRecoveryVerificationFailed},
		{"an unsupported archive is unreadable", wrap(restore.ErrUnsupported), v1alpha1.ReasonRecoveryBackupUnreadable},
		{"anything else (credentials, network) is unreadable", wrap(errors.New("connection refused")), v1alpha1.ReasonRecoveryBackupUnreadable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := RecoveryFailureReason(tc.err); got != tc.want {
				t.Errorf("RecoveryFailureReason(%v) = %s, want %s", tc.err, got, tc.want)
			}
		})
	}
}

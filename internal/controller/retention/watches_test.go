package retention

import (
	"testing"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

func TestWakesOnlyOnCompletion(t *testing.T) {
	phases := []v1.BackupPhase{"", v1.BackupPhasePending, v1.BackupPhaseRunning, v1.BackupPhaseCompleted, v1.BackupPhaseFailed}
	for _, from := range phases {
		for _, to := range phases {
			o, n := testBackup("b", "db", from, "", 0), testBackup("b", "db", to, "", 0)
			want := to == v1.BackupPhaseCompleted && from != v1.BackupPhaseCompleted
			if got := backupJustCompleted(&o, &n); got != want {
				t.Errorf("%q -> %q: wakes %v, want %v", from, to, got, want)
			}
		}
	}
}

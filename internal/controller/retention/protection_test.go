package retention

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

func TestProtectedBackups(t *testing.T) {
	recovering := func(name, backup string) v1.Cluster {
		return v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Spec: v1.ClusterSpec{
			Bootstrap: &v1.BootstrapConfiguration{Recovery: &v1.BootstrapRecovery{Backup: &v1.LocalObjectReference{Name: backup}}}}}
	}
	clusters := []v1.Cluster{*eligibleCluster(nil), recovering("restored", "pinned"), recovering("lost", "gone"),
		recovering("other-restore", "theirs")}
	backups := []v1.Backup{
		testBackup("pinned", "db", v1.BackupPhaseCompleted, "20260101T000000Z", 0),
		testBackup("old", "db", v1.BackupPhaseCompleted, "20260102T000000Z", 0),
		testBackup("running", "db", v1.BackupPhaseRunning, "20260301T110000Z", 0),
		testBackup("new", "db", v1.BackupPhase(""), "", 0),
		testBackup("failed", "db", v1.BackupPhaseFailed, "20260201T000000Z", 0),
		testBackup("theirs", "other", v1.BackupPhaseCompleted, "20260101T000000Z", 0),
		testBackup("their-running", "other", v1.BackupPhaseRunning, "20260301T110000Z", 0),
	}
	p := protectedBackups("db", "db", clusters, backups)
	ref := func(name, id string) objectstore.BackupRef {
		return objectstore.BackupRef{Cluster: "db", Name: name, ID: id}
	}
	cases := []struct {
		name string
		ref  objectstore.BackupRef
		want bool
	}{
		{"the backup a Cluster's bootstrap.recovery names is protected", ref("pinned", "20260101T000000Z"), true},
		{"another directory of that backup name is not (the recorded id decides)", ref("pinned", "20250101T000000Z"), false},
		{"a completed Backup nobody references is not protected", ref("old", "20260102T000000Z"), false},
		{"a running Backup's directory is protected", ref("running", "20260301T110000Z"), true},
		{"a Backup without a backupId yet protects every directory of its name", ref("new", "20260301T115959Z"), true},
		{"a recovery naming a Backup that is gone protects every directory of that name", ref("gone", "20250101T000000Z"), true},
		{"a failed Backup's directory is not protected", ref("failed", "20260201T000000Z"), false},
		{"another cluster's Backup named by a recovery does not protect this cluster's directories", ref("theirs", "20260101T000000Z"), false},
		{"another cluster's running Backup does not protect this cluster's directories", ref("their-running", "20260301T110000Z"), false},
	}
	for _, tc := range cases {
		if got := p.protects(tc.ref); got != tc.want {
			t.Errorf("%s: protects(%v) = %v, want %v", tc.name, tc.ref, got, tc.want)
		}
	}
}

func TestIncompleteGrace(t *testing.T) {
	cases := []struct {
		name    string
		backups []v1.Backup
		want    time.Duration
	}{
		{"no Backups: 24 hours", nil, 24 * time.Hour},
		{"a running Backup with the default timeout (6h): 24 hours",
			[]v1.Backup{testBackup("a", "db", v1.BackupPhaseRunning, "1", 0)}, 24 * time.Hour},
		{"a running Backup with a 48h timeout: an hour past it",
			[]v1.Backup{testBackup("a", "db", v1.BackupPhaseRunning, "1", 48*time.Hour)}, 49 * time.Hour},
		{"a pending Backup counts too",
			[]v1.Backup{testBackup("a", "db", v1.BackupPhasePending, "", 30*time.Hour)}, 31 * time.Hour},
		{"a completed Backup with a long timeout does not count",
			[]v1.Backup{testBackup("a", "db", v1.BackupPhaseCompleted, "1", 48*time.Hour)}, 24 * time.Hour},
		{"another cluster's running Backup does not count",
			[]v1.Backup{testBackup("a", "other", v1.BackupPhaseRunning, "1", 48*time.Hour)}, 24 * time.Hour},
	}
	for _, tc := range cases {
		if got := incompleteGrace("db", tc.backups); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

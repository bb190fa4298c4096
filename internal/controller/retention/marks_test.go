package retention

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

func TestBackupsOfExpired(t *testing.T) {
	cfg := objectstore.Config{Endpoint: "s3.example:9000", Bucket: "bucket", Path: "ctl"}
	at := func(name, id, bucket, endpoint string, mutate func(*v1.Backup)) v1.Backup {
		b := testBackup(name, "db", v1.BackupPhaseCompleted, id, 0)
		ref := objectstore.BackupRef{Cluster: "db", Name: name, ID: id}
		b.Status.Bucket, b.Status.Endpoint, b.Status.DestinationPath = bucket, endpoint, objectstore.BackupDir("ctl", ref)
		if mutate != nil {
			mutate(&b)
		}
		return b
	}
	backups := []v1.Backup{
		at("old", "1", "bucket", "http://s3.example:9000", nil),
		at("old", "0", "bucket", "http://s3.example:9000", nil), // an earlier Backup object of the same name
		at("moved", "1", "elsewhere", "http://s3.example:9000", nil),
		at("marked", "1", "bucket", "http://s3.example:9000", func(b *v1.Backup) {
			b.Status.Conditions = []metav1.Condition{expiredCondition(b, "7d", metav1.NewTime(testNow))}
		}),
		at("kept", "1", "bucket", "http://s3.example:9000", nil),
	}
	expired := []objectstore.BackupRef{{Cluster: "db", Name: "old", ID: "1"}, {Cluster: "db", Name: "moved", ID: "1"},
		{Cluster: "db", Name: "marked", ID: "1"}}
	got := backupsOfExpired(expired, cfg, backups)
	if len(got) != 1 || got[0].Name != "old" || got[0].Status.BackupID != "1" {
		t.Fatalf("got %v, want only old/1: the Backup whose status names the expired directory in this store and is not yet marked", got)
	}
	c := expiredCondition(got[0], "window 7d", metav1.NewTime(testNow))
	if c.Type != v1.BackupArtifactsAvailable || c.Status != metav1.ConditionFalse || c.Reason != v1.ReasonArtifactsExpired {
		t.Errorf("condition %+v", c)
	}
}

func TestBackupsMissing(t *testing.T) {
	cfg := objectstore.Config{Endpoint: "s3.example:9000", Bucket: "bucket", Path: "ctl"}
	at := func(name string, mutate func(*v1.Backup)) v1.Backup {
		b := testBackup(name, "db", v1.BackupPhaseCompleted, "1", 0)
		ref := objectstore.BackupRef{Cluster: "db", Name: name, ID: "1"}
		b.Status.Bucket, b.Status.Endpoint, b.Status.DestinationPath = "bucket", "http://s3.example:9000", objectstore.BackupDir("ctl", ref)
		if mutate != nil {
			mutate(&b)
		}
		return b
	}
	backups := []v1.Backup{
		at("lost", nil),
		at("found", nil),
		at("deleted-now", nil),
		at("other-bucket", func(b *v1.Backup) { b.Status.Bucket = "elsewhere" }),
		at("other-endpoint", func(b *v1.Backup) { b.Status.Endpoint = "http://s3.other:9000" }),
		at("other-path", func(b *v1.Backup) {
			b.Status.DestinationPath = objectstore.BackupDir("old-path", objectstore.BackupRef{Cluster: "db", Name: "other-path", ID: "1"})
		}),
		at("other-cluster", func(b *v1.Backup) {
			b.Status.DestinationPath = objectstore.BackupDir("ctl", objectstore.BackupRef{Cluster: "db2", Name: "other-cluster", ID: "1"})
		}),
		at("running", func(b *v1.Backup) { b.Status.Phase = v1.BackupPhaseRunning }),
		at("failed", func(b *v1.Backup) { b.Status.Phase = v1.BackupPhaseFailed }),
		at("expired", func(b *v1.Backup) {
			b.Status.Conditions = []metav1.Condition{expiredCondition(b, "7d", metav1.NewTime(testNow))}
		}),
		at("missing", func(b *v1.Backup) {
			b.Status.Conditions = []metav1.Condition{missingCondition(b, metav1.NewTime(testNow))}
		}),
		at("garbled", func(b *v1.Backup) { b.Status.DestinationPath = "not a directory" }),
	}
	found := []objectstore.BackupRef{{Cluster: "db", Name: "found", ID: "1"}, {Cluster: "db", Name: "deleted-now", ID: "1"}}
	gone := []objectstore.BackupRef{{Cluster: "db", Name: "deleted-now", ID: "1"}}
	got := backupsMissing("db", found, gone, cfg, backups)
	if len(got) != 1 || got[0].Name != "lost" {
		t.Fatalf("got %v, want only lost: a completed, unmarked Backup recorded in this cluster's directory of this store, neither found nor deleted by the pass", got)
	}
	c := missingCondition(got[0], metav1.NewTime(testNow))
	if c.Type != v1.BackupArtifactsAvailable || c.Status != metav1.ConditionFalse || c.Reason != v1.ReasonArtifactsMissing {
		t.Errorf("condition %+v", c)
	}
}

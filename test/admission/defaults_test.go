package admission_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// create sends a manifest to the real API server and reads the stored object back into obj, so
// the schema defaults the server applied are visible.
func create(t *testing.T, manifest string, obj client.Object) {
	t.Helper()
	env := shared.Get(t)
	ns := env.NewNamespace(t)
	u := decode(t, strings.ReplaceAll(manifest, "%NAME%", "defaults"))
	u.SetNamespace(ns)
	if err := env.Client.Create(context.Background(), u); err != nil {
		t.Fatalf("create: %v", err)
	}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "defaults"}, obj); err != nil {
		t.Fatalf("get: %v", err)
	}
}

func TestScheduledBackupDefaults(t *testing.T) {
	var sb v1.ScheduledBackup
	create(t, validScheduledBackup, &sb)
	s := sb.Spec
	checks := []struct {
		field     string
		got, want any
	}{
		{"suspend", *s.Suspend, false},
		{"immediate", *s.Immediate, false},
		{"skipImmediately unset follows the operator flag", s.SkipImmediately == nil, true},
		{"backupOwnerReference", s.BackupOwnerReference, v1.BackupOwnerReferenceNone},
		{"method", s.Method, v1.BackupMethodClone},
		{"target", s.Target, v1.BackupTargetPreferStandby},
		{"online", *s.Online, true},
		{"timeout", s.Timeout.Duration, 6 * time.Hour},
		{"failedBackupsHistoryLimit", *s.FailedBackupsHistoryLimit, int32(3)},
		{"successfulBackupsHistoryLimit unset keeps all", s.SuccessfulBackupsHistoryLimit == nil, true},
		{"deletionPolicy unset inherits", s.DeletionPolicy, v1.DeletionPolicy("")},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s defaulted to %v, want %v", c.field, c.got, c.want)
		}
	}
}

func TestBackupDefaults(t *testing.T) {
	var b v1.Backup
	create(t, validBackup, &b)
	if b.Spec.Method != v1.BackupMethodClone || b.Spec.Target != v1.BackupTargetPreferStandby {
		t.Errorf("method/target defaulted to %q/%q, want clone/prefer-standby", b.Spec.Method, b.Spec.Target)
	}
	if !b.IsOnline() || b.Spec.Online == nil {
		t.Errorf("online not defaulted to true: %v", b.Spec.Online)
	}
	if b.Spec.Timeout == nil || b.Spec.Timeout.Duration != 6*time.Hour {
		t.Errorf("timeout defaulted to %v, want 6h", b.Spec.Timeout)
	}
	if got := b.EffectiveDeletionPolicy(nil); got != v1.DeletionPolicyKeep {
		t.Errorf("effective deletion policy %q, want keep", got)
	}
}

func TestClusterDefaults(t *testing.T) {
	var c v1.Cluster
	manifest := validCluster + "  mysql:\n    semiSync: {enabled: true}\n  minSyncReplicas: 1\n  maxSyncReplicas: 1\n" +
		"  backup:\n" + objectStore +
		"  managed:\n    services:\n      additional:\n      - {name: lb, selectorType: rw}\n"
	create(t, manifest, &c)
	s := c.Spec
	checks := []struct {
		field     string
		got, want any
	}{
		{"imageName", s.ImageName, "percona/percona-server:8.4"},
		{"failoverDelay", s.FailoverDelay, int32(0)},
		{"maxSwitchoverDelay", s.MaxSwitchoverDelay, int32(3600)},
		{"enablePrimaryLease", *s.EnablePrimaryLease, true},
		{"semiSync.timeoutMillis", s.MySQL.SemiSync.TimeoutMillis, int64(10000)},
		{"semiSync.dataDurability", s.MySQL.SemiSync.DataDurability, v1.DataDurabilityPreferred},
		{"objectStore.region", s.Backup.ObjectStore.Region, "us-east-1"},
		{"backup.archiveTimeout", s.Backup.ArchiveTimeout.Duration, 3 * time.Second},
		{"additional[0].updateStrategy", s.Managed.Services.Additional[0].UpdateStrategy, v1.ServiceUpdateStrategyPatch},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s defaulted to %v, want %v", c.field, c.got, c.want)
		}
	}
}

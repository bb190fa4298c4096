package plugin_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/plugin"
)

func TestBuildOnDemandBackup(t *testing.T) {
	now := time.Date(2026, 11, 22, 9, 30, 5, 0, time.FixedZone("CET", 3600))
	cases := []struct {
		name     string
		opts     plugin.BackupOptions
		wantName string
		online   *bool
	}{
		{"name from the cluster and the UTC time", plugin.BackupOptions{}, "main-20261122083005", nil},
		{"explicit name", plugin.BackupOptions{Name: "before-upgrade"}, "before-upgrade", nil},
		{"offline", plugin.BackupOptions{Offline: true}, "main-20261122083005", new(bool)},
	}
	for _, c := range cases {
		b := plugin.BuildOnDemandBackup("ns", "main", c.opts, now)
		if b.Name != c.wantName || b.Spec.Cluster.Name != "main" || b.Labels[v1.ClusterLabel] != "main" {
			t.Errorf("%s: got name %q cluster %q labels %v", c.name, b.Name, b.Spec.Cluster.Name, b.Labels)
		}
		if (b.Spec.Online == nil) != (c.online == nil) || (b.Spec.Online != nil && *b.Spec.Online != *c.online) {
			t.Errorf("%s: online %v, want %v", c.name, b.Spec.Online, c.online)
		}
	}
}

// TestBackupVerbCreatesBackup runs the plugin's cobra command against the real API server.
func TestBackupVerbCreatesBackup(t *testing.T) {
	w := newWorld(t)
	w.newCluster(t, 1, func(c *v1.Cluster) { c.Status.ObservedGeneration = c.Generation })
	run := w.run

	out, err := run("backup", "db", "--method", "clone", "--target", "primary")
	if err != nil {
		t.Fatalf("backup verb: %v (%s)", err, out)
	}
	if !strings.Contains(out, "backup/db-20261122080000 created") {
		t.Errorf("unexpected output %q", out)
	}
	var b v1.Backup
	if err := w.env.Client.Get(context.Background(), client.ObjectKey{Namespace: w.ns, Name: "db-20261122080000"}, &b); err != nil {
		t.Fatalf("the Backup was not created: %v", err)
	}
	if b.Spec.Target != v1.BackupTargetPrimary || b.Spec.Method != v1.BackupMethodClone || !b.IsOnline() {
		t.Errorf("unexpected spec %+v", b.Spec)
	}

	if out, err := run("backup", "db", "--method", "rsync", "--backup-name", "bad"); err == nil ||
		!strings.Contains(err.Error(), `Unsupported value: "rsync"`) {
		t.Errorf("an invalid method must be refused by the API server with its message; got %v (%s)", err, out)
	}
}

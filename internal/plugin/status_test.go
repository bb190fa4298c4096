package plugin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/plugin"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

// TestStatusVerb shows a Cluster in the middle of a switchover, with a fenced, a diverged and a
// requested-but-not-yet-mirrored fenced instance, as it reads them from the real API server.
func TestStatusVerb(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	w.newCluster(t, 4, func(c *v1.Cluster) {
		fenced(`["db-3","db-4"]`)(c)
		c.Status.TargetPrimary = "db-2"
		c.Status.TargetPrimaryTimestamp = &metav1.Time{Time: testNow.Add(-time.Minute)}
		c.Status.FencedInstances = []string{"db-3"}
		c.Status.DivergedInstances = []string{"db-4"}
		c.Status.GTIDExecutedByInstance = map[string]string{"db-1": "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-9", "db-2": "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-8,4e11fa47-71ca-11e1-9e33-c80aa9429562:1"}
		c.Status.ObjectStoreLocation = &v1.ObjectStoreLocationStatus{Location: "s3://backups/prod/db/", Phase: v1.LocationClaimed}
		c.Status.InstanceReplication = map[string]v1.InstanceReplicationStatus{"db-2": {Source: "db-1", IOState: "Connecting", SQLRunning: true,
			LagSeconds: ptr.To[int64](12), LagTransactions: ptr.To[int64](3), LastIOError: "error connecting to source 'repl@db-1:3306'"}}
		c.Status.FailoverReadiness = &v1.FailoverReadiness{Reason: "PrimaryChangeUnderWay", Candidate: "db-2",
			Message: "a primary change from db-1 to db-2 is under way", LastTransitionTime: &metav1.Time{Time: testNow.Add(-time.Minute)}}
		done, failedAt := metav1.NewTime(testNow.Add(-2*time.Hour)), metav1.NewTime(testNow.Add(-time.Hour))
		c.Status.Backups = &v1.BackupsStatus{
			LastSuccessful: &v1.SuccessfulBackupRecord{Name: "nightly-1", CompletedAt: &done, Size: 1024},
			LastFailed:     &v1.FailedBackupRecord{Name: "nightly-2", At: &failedAt, Reason: "uploading: 503"},
			Restorable:     3, RestorableBytes: 4096, ListedAt: &failedAt}
		c.Status.LastVerifiedBackup = &v1.LastVerifiedBackup{Name: "nightly-1", JobName: "nightly-1-verify-aa", Reason: "TableCheckFailed",
			CompletedAt: &failedAt, LastPassedAt: &done}
		c.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Switchover",
			Message: "switching over to db-2", LastTransitionTime: metav1.NewTime(testNow)}}
	})
	for name, role := range map[string]string{"db-1": v1.RolePrimary, "db-2": v1.RoleReplica} {
		var p corev1.Pod
		check.Must(t, w.env.Client.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: name}, &p))
		old := p.DeepCopy()
		p.Labels[v1.RoleLabel] = role
		check.Must(t, w.env.Client.Patch(ctx, &p, client.MergeFrom(old)))
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		check.Must(t, w.env.Client.Status().Update(ctx, &p))
	}
	check.Must(t, w.env.Client.Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "db-primary", Namespace: w.ns},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("db-1"), LeaseDurationSeconds: ptr.To[int32](15),
			RenewTime: &metav1.MicroTime{Time: testNow.Add(-4 * time.Second)}},
	}))

	out := w.mustRun(t, "status", "db")
	lines := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		lines[strings.Join(strings.Fields(l), " ")] = true
	}
	for _, want := range []string{
		"Cluster: " + w.ns + "/db",
		"Primary: db-1",
		"Target primary: db-2 (switchover or failover in progress since 2026-11-22T07:59:00Z)",
		"Primary lease: db-primary held by db-1, renewed 4s ago (TTL 15s, valid)",
		"Object store: s3://backups/prod/db/ (Claimed)",
		"Last backup: nightly-1 completed 2026-11-22T06:00:00Z (2h0m0s ago), 1024 bytes",
		"Last failed backup: nightly-2 at 2026-11-22T07:00:00Z (1h0m0s ago): uploading: 503",
		"In the object store: 3 complete backup(s), 4096 bytes (listed 2026-11-22T07:00:00Z)",
		"Last verification: nightly-1 FAILED (TableCheckFailed) 2026-11-22T07:00:00Z (1h0m0s ago); last passed 2026-11-22T06:00:00Z",
		"Failover safe now: no (PrimaryChangeUnderWay) since 2026-11-22T07:59:00Z: a primary change from db-1 to db-2 is under way",
		"INSTANCE ROLE READY FENCED DIVERGED MISSING ERRANT LAG LAG TRX IO/SQL AGE RESTARTS NODE GTID EXECUTED",
		"db-1 primary true no no - - - - - 0s 0 - 3e11fa47-71ca-11e1-9e33-c80aa9429562:1-9",
		"db-2 replica true no no 1 1 12s 3 Connecting/Yes 0s 0 - 3e11fa47-71ca-11e1-9e33-c80aa9429562:1-8,4e11fa47-71ca-11...",
		"db-3 - false yes no - - - - - 0s 0 - -",
		"db-4 - false requested yes - - - - - 0s 0 - -",
		"db-2 IO error: error connecting to source 'repl@db-1:3306'",
		"Ready False Switchover switching over to db-2",
	} {
		if !lines[want] {
			t.Errorf("no line %q in:\n%s", want, out)
		}
	}

	// The same report as JSON: the missing and errant transactions of each instance.
	var r plugin.StatusReport
	check.Must(t, json.Unmarshal([]byte(w.mustRun(t, "status", "db", "-o", "json")), &r))
	if len(r.Instances) != 4 || r.Instances[1].Missing != "3e11fa47-71ca-11e1-9e33-c80aa9429562:9" ||
		r.Instances[1].Errant != "4e11fa47-71ca-11e1-9e33-c80aa9429562:1" || !r.SwitchoverInProgress || r.Lease.Holder != "db-1" {
		t.Errorf("JSON report %+v", r)
	}
	if y := w.mustRun(t, "status", "db", "-o", "yaml"); !strings.Contains(y, "errantCount: 1") {
		t.Errorf("YAML report:\n%s", y)
	}
	if _, err := w.run("status", "db", "-o", "xml"); err == nil || !strings.Contains(err.Error(), "json or yaml") {
		t.Errorf("-o xml: %v", err)
	}
}

// TestStatusDescribesTheLease: the Lease line says whether the primary Lease is held and whether
// it is still valid, so a user can tell why a failover waits.
func TestStatusDescribesTheLease(t *testing.T) {
	lease := func(renewedAgo time.Duration) *coordinationv1.Lease {
		return &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("db-2"),
			LeaseDurationSeconds: ptr.To[int32](15), RenewTime: &metav1.MicroTime{Time: testNow.Add(-renewedAgo)}}}
	}
	cases := []struct {
		rule string
		view plugin.ClusterView
		want string
	}{
		{"no Lease: nobody holds it", plugin.ClusterView{}, "db-primary not held"},
		{"renewed within its TTL: valid", plugin.ClusterView{Lease: lease(15 * time.Second)},
			"db-primary held by db-2, renewed 15s ago (TTL 15s, valid)"},
		{"not renewed within its TTL: expired", plugin.ClusterView{Lease: lease(16 * time.Second)},
			"db-primary held by db-2, renewed 16s ago (TTL 15s, expired)"},
		{"a Lease the user may not read", plugin.ClusterView{LeaseErr: errors.New("forbidden")}, "db-primary unknown: forbidden"},
	}
	for _, c := range cases {
		c.view.Cluster = &v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns"}}
		out := &bytes.Buffer{}
		check.Must(t, plugin.WriteStatus(out, &c.view, testNow, plugin.StatusOptions{}))
		if !strings.Contains(out.String(), "Primary lease:") || !strings.Contains(out.String(), c.want) {
			t.Errorf("%s: want %q in:\n%s", c.rule, c.want, out)
		}
	}
}

// TestStatusShowsTheNewestEvents: the Events of the Cluster and of the objects named after it
// are listed newest first, ten of them unless --verbose; others are left out.
func TestStatusShowsTheNewestEvents(t *testing.T) {
	w := newWorld(t)
	w.newCluster(t, 1, nil)
	ctx := context.Background()
	for i := range 12 {
		at := metav1.NewTime(testNow.Add(-time.Duration(i+1) * time.Minute))
		check.Must(t, w.env.Client.Create(ctx, &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("e%d", i), Namespace: w.ns},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "db-1", Namespace: w.ns},
			Type:           corev1.EventTypeWarning, Reason: fmt.Sprintf("Reason%d", i), Message: "m", LastTimestamp: at}))
	}
	check.Must(t, w.env.Client.Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: w.ns},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "unrelated", Namespace: w.ns}, Type: corev1.EventTypeNormal, Reason: "Unrelated",
		LastTimestamp: metav1.NewTime(testNow)}))
	out := strings.Join(strings.Fields(w.mustRun(t, "status", "db")), " ")
	if !strings.Contains(out, "1m0s ago Warning Reason0 Pod/db-1 m") || !strings.Contains(out, "Reason9") ||
		strings.Contains(out, "Reason10") || strings.Contains(out, "Unrelated") {
		t.Errorf("events:\n%s", out)
	}
	if out := w.mustRun(t, "status", "db", "--verbose"); !strings.Contains(out, "Reason11") {
		t.Errorf("--verbose lacks the oldest Event:\n%s", out)
	}
}

// TestColoursKeepTheTableAligned: with colours on, the output is the plain output with colour
// codes around some cells: removing the codes gives the plain output back byte for byte.
func TestColoursKeepTheTableAligned(t *testing.T) {
	c := &v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns"}}
	c.Status.CurrentPrimary, c.Status.TargetPrimary = "db-1", "db-1"
	c.Status.DivergedInstances = []string{"db-2"}
	c.Status.GTIDExecutedByInstance = map[string]string{"db-1": uuidA + ":1-9", "db-2": uuidA + ":1-8," + uuidB + ":1"}
	c.Status.InstanceReplication = map[string]v1.InstanceReplicationStatus{"db-2": {IOState: "Connecting", LagSeconds: ptr.To[int64](30),
		LagTransactions: ptr.To[int64](4), LastSQLError: "Duplicate entry"}}
	c.Status.SemiSync = &v1.SemiSyncStatus{FallenBack: true, WaitingCommits: 2}
	c.Status.FailoverReadiness = &v1.FailoverReadiness{Reason: "NoCandidate", Message: "a failover would be blocked"}
	c.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "X"},
		{Type: "Degraded", Status: metav1.ConditionTrue, Reason: "DivergedInstances"}}
	pod := func(name, role string) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.InstanceLabel: name, v1.RoleLabel: role}}}
	}
	v := &plugin.ClusterView{Cluster: c, Pods: []corev1.Pod{pod("db-1", "primary"), pod("db-2", "replica")},
		Events: []corev1.Event{{Type: corev1.EventTypeWarning, Reason: "Diverged", InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "db-2"},
			LastTimestamp: metav1.NewTime(testNow.Add(-time.Minute))}}}
	var plainOut, colored bytes.Buffer
	check.Must(t, plugin.WriteStatus(&plainOut, v, testNow, plugin.StatusOptions{}))
	check.Must(t, plugin.WriteStatus(&colored, v, testNow, plugin.StatusOptions{Color: true}))
	if !strings.Contains(colored.String(), "\x1b[31m") {
		t.Fatal("no colour in the coloured output")
	}
	stripped := regexp.MustCompile("\x1b\\[[0-9]+m").ReplaceAllString(colored.String(), "")
	if stripped != plainOut.String() {
		t.Errorf("coloured output, codes removed:\n%s\nplain:\n%s", stripped, plainOut.String())
	}
}

package retention_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/retention"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3proxy"
)

const day = 24 * time.Hour

// TestPassExpiresThenWaitsAnHour: the first pass of a 7d policy deletes the backups
// completed more than 7 days ago and an interrupted upload, keeps the newest, the one a Cluster
// recovers from and the directory of a running Backup; it emits BackupRetention with counts and
// bytes, stamps lastRetentionRunTime and marks the expired Backups. No pass runs again within the
// hour; one runs after it.
func TestPassExpiresThenWaitsAnHour(t *testing.T) {
	w := newRetWorld(t)
	w.createCluster("db", "7d", true)
	w.uploadBackup("db", "old", 20*day)
	w.uploadBackup("db", "pinned", 15*day)
	w.uploadBackup("db", "mid", 10*day)
	w.uploadBackup("db", "new", day)
	w.createRecoveryCluster("restored", "pinned")
	inflight := objectstore.BackupRef{Cluster: "db", Name: "inflight", ID: backupID(w.Clock.Now())}
	w.putIncomplete(inflight)
	w.createBackupObject("inflight", "db", inflight, v1.BackupPhaseRunning)
	w.putIncomplete(objectstore.BackupRef{Cluster: "db", Name: "crashed", ID: backupID(w.Clock.Now())})
	first := w.Clock.Now()

	if res := w.reconcileOK("db"); res.RequeueAfter != time.Hour {
		t.Errorf("after a pass: requeue %v, want 1h", res.RequeueAfter)
	}
	w.wantDirs("db", "pinned", "new", "inflight (incomplete)")
	w.wantStamp("db", first)
	ev := w.events()
	for _, want := range []string{"Normal BackupRetention", "window 7d", "2 expired base backup(s) (", "1 incomplete backup director(ies)"} {
		if !strings.Contains(ev, want) {
			t.Errorf("events %q, want %q", ev, want)
		}
	}
	for name, want := range map[string]string{"old": v1.ReasonArtifactsExpired, "mid": v1.ReasonArtifactsExpired,
		"pinned": "", "new": "", "inflight": ""} {
		if got := w.artifacts(name); got != want {
			t.Errorf("Backup %s: ArtifactsAvailable reason %q, want %q", name, got, want)
		}
	}

	w.uploadBackup("db", "later", 9*day)
	w.Clock.Step(30 * time.Minute)
	if res := w.reconcileOK("db"); res.RequeueAfter != 30*time.Minute {
		t.Errorf("30 minutes after a pass: requeue %v, want 30m", res.RequeueAfter)
	}
	w.wantDirs("db", "pinned", "new", "later", "inflight (incomplete)")
	w.wantStamp("db", first)
	if ev := w.events(); ev != "" {
		t.Errorf("no pass, yet events %q", ev)
	}

	w.Clock.Step(31 * time.Minute)
	w.reconcileOK("db")
	w.wantDirs("db", "pinned", "new", "inflight (incomplete)")
	w.wantStamp("db", w.Clock.Now())
	if ev := w.events(); !strings.Contains(ev, "1 expired base backup(s)") || w.artifacts("later") != v1.ReasonArtifactsExpired {
		t.Errorf("the pass after the hour: events %q, later %q", ev, w.artifacts("later"))
	}
}

// TestSkipsWithoutPrimaryOrPolicy: a Cluster without an established primary, or
// without a policy, gets no pass: its store, stamp and Events are untouched.
func TestSkipsWithoutPrimaryOrPolicy(t *testing.T) {
	w := newRetWorld(t)
	w.createCluster("noprimary", "7d", false)
	w.createCluster("nopolicy", "", true)
	w.events()            // the claims of their locations
	w.store.Proxy.Reset() // and their requests: what follows is the retention reconciler's
	for _, c := range []string{"noprimary", "nopolicy"} {
		w.uploadBackup(c, c+"-old", 20*day)
		w.uploadBackup(c, c+"-new", day)
		if res := w.reconcileOK(c); res != (ctrl.Result{}) {
			t.Errorf("%s: result %+v, want none (it waits for the Cluster to change)", c, res)
		}
		w.wantDirs(c, c+"-old", c+"-new")
		w.wantStamp(c, time.Time{})
	}
	if ev := w.events(); ev != "" {
		t.Errorf("events %q", ev)
	}
	if w.store.Proxy.Total() != 0 {
		t.Errorf("%d requests reached the object store", w.store.Proxy.Total())
	}
}

// TestStoreDownWarnsAndRetries: with the object store answering 503 the pass fails with
// a Warning, is not stamped and is retried with a growing backoff, the store intact; a failure in
// the middle of the deletions leaves no directory half-readable, and the next pass finishes.
func TestStoreDownWarnsAndRetries(t *testing.T) {
	w := newRetWorld(t)
	w.createCluster("db", "7d", true)
	w.uploadBackup("db", "old", 20*day)
	w.uploadBackup("db", "older", 30*day)
	w.uploadBackup("db", "new", day)

	w.store.Proxy.Inject(s3proxy.Fault{Match: s3proxy.All(), Action: s3proxy.Status(http.StatusServiceUnavailable)})
	for i, want := range []time.Duration{time.Minute, 2 * time.Minute} {
		res, err := w.reconcile("db")
		if err != nil || res.RequeueAfter != want {
			t.Errorf("failure %d: result %+v, error %v; want a retry in %v", i+1, res, err, want)
		}
	}
	if ev := w.events(); strings.Count(ev, "Warning RetentionFailed") != 2 || strings.Contains(ev, "BackupRetention") {
		t.Errorf("events %q, want two RetentionFailed Warnings", ev)
	}
	w.wantStamp("db", time.Time{})
	w.wantDirs("db", "old", "older", "new")

	// The store is back but fails the deletion of the archives, after the metadata.json.
	w.store.Proxy.ClearFaults()
	deletes := 0
	w.store.Proxy.Inject(s3proxy.Fault{Match: func(r s3proxy.Request) bool {
		if r.Kind == s3proxy.DeleteObjects || r.Kind == s3proxy.DeleteObject {
			deletes++
			return deletes > 1 // the metadata.json go, the archives stay
		}
		return false
	}, Action: s3proxy.Status(http.StatusInternalServerError)})
	if res, err := w.reconcile("db"); err != nil || res.RequeueAfter == 0 {
		t.Fatalf("a pass failing in its deletions: %+v, %v", res, err)
	}
	w.wantStamp("db", time.Time{})
	w.wantDirs("db", "old (incomplete)", "older (incomplete)", "new")
	if md, err := w.direct().ReadMetadata(w.Ctx, objectstore.BackupRef{Cluster: "db", Name: "new",
		ID: w.backup("new").Status.BackupID}); err != nil || md.BackupName != "new" {
		t.Errorf("the kept backup: %v, %v", md, err)
	}
	w.events()

	w.store.Proxy.ClearFaults()
	if res := w.reconcileOK("db"); res.RequeueAfter != time.Hour {
		t.Errorf("after the store is back: requeue %v", res.RequeueAfter)
	}
	w.wantDirs("db", "new")
	w.wantStamp("db", w.Clock.Now())
	if ev := w.events(); !strings.Contains(ev, "Normal BackupRetention") {
		t.Errorf("events %q", ev)
	}
	for _, name := range []string{"old", "older"} {
		if got := w.artifacts(name); got != v1.ReasonArtifactsExpired {
			t.Errorf("Backup %s: %q, want Expired", name, got)
		}
	}
}

// TestBackupCompletionWakesWhenDue runs the reconciler in a manager. The Cluster was
// stamped just now, so its next timed look is an hour of real time away. A Backup completing
// before the pass is due runs nothing; once the fake clock is past the hour, a Backup completing
// runs the pass within seconds: only the Backup watch can have woken it.
func TestBackupCompletionWakesWhenDue(t *testing.T) {
	w := newRetWorld(t)
	w.createCluster("db", "7d", true)
	c := w.cluster("db")
	c.Status.LastRetentionRunTime = ptr.To(metav1.NewTime(w.Clock.Now()))
	w.UpdateStatus(c)
	w.uploadBackup("db", "old", 20*day)
	w.uploadBackup("db", "new", day)
	for _, name := range []string{"b1", "b2"} {
		w.createBackupObject(name, "db", objectstore.BackupRef{Cluster: "db", Name: name, ID: backupID(w.Clock.Now())},
			v1.BackupPhaseRunning)
	}
	w.startManager()

	w.setPhase("b1", v1.BackupPhaseCompleted)
	time.Sleep(3 * time.Second)
	w.wantDirs("db", "old", "new")

	w.Clock.Step(61 * time.Minute)
	w.setPhase("b2", v1.BackupPhaseCompleted)
	start := time.Now()
	// The pass is over once it stamped: it deletes before it marks and stamps.
	w.Eventually("the completed Backup wakes the due pass", check.True(func() bool {
		last := w.cluster("db").Status.LastRetentionRunTime
		return len(w.dirs("db")) == 1 && last != nil && last.Time.Equal(w.Clock.Now())
	}))
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the pass ran %v after the Backup completed", took)
	}
	w.wantDirs("db", "new")
	w.wantStamp("db", w.Clock.Now())
}

func (w *retWorld) startManager() {
	w.T.Helper()
	w.StartManager(func(mgr ctrl.Manager) error {
		r := retention.NewReconciler(mgr, w.Clock)
		r.OpenStore = w.rec.OpenStore
		return r.SetupWithManager(mgr)
	})
}

func (w *retWorld) setPhase(name string, phase v1.BackupPhase) {
	w.T.Helper()
	b := w.backup(name)
	b.Status.Phase = phase
	w.UpdateStatus(b)
}

// TestPassDeletesNothingBesideAClusterItCannotDecode: a Cluster of the namespace stored under an
// older, looser schema cannot be decoded; it may recover from any of the backups, so the pass
// deletes nothing while it exists (a RetentionFailed Warning naming it, retried), and runs again
// once it is gone.
func TestPassDeletesNothingBesideAClusterItCannotDecode(t *testing.T) {
	w := newRetWorld(t)
	w.createCluster("db", "7d", true)
	w.uploadBackup("db", "pinned", 15*day)
	w.uploadBackup("db", "new", day)
	bad := kubetest.UndecodableCluster(w.NS, "restored", "pinned")
	kubetest.StoreUndecodable(t, w.Client, "clusters", bad, kubetest.UndecodableClusterPath...)

	res, err := w.reconcile("db")
	if err != nil || res.RequeueAfter == 0 {
		t.Errorf("beside the undecodable Cluster: result %+v, error %v; want a retry", res, err)
	}
	w.wantDirs("db", "pinned", "new")
	if ev := w.events(); !strings.Contains(ev, "Warning RetentionFailed") || !strings.Contains(ev, "restored") {
		t.Errorf("events %q, want a RetentionFailed Warning naming the Cluster that does not decode", ev)
	}

	check.Must(t, w.Client.Delete(w.Ctx, bad))
	w.Eventually("the undecodable Cluster to be gone", w.Gone(bad))
	w.Clock.Step(time.Hour)
	w.reconcileOK("db")
	w.wantDirs("db", "new")
}

// TestEachCompletedBackupEnforcesTheCount: with retentionCount 2, a pass that ran minutes ago
// does not hold the next one back an hour: a Backup that completes triggers a pass at once, which
// leaves the two newest, so the next backup starts with at most N and runs with N+1.
func TestEachCompletedBackupEnforcesTheCount(t *testing.T) {
	w := newRetWorld(t)
	w.createCluster("db", "", true)
	c := w.cluster("db")
	old := c.DeepCopy()
	c.Spec.Backup.RetentionCount = ptr.To[int32](2)
	check.Must(t, w.Client.Patch(w.Ctx, c, client.MergeFrom(old)))
	c = w.cluster("db")
	c.Status.LastRetentionRunTime = ptr.To(metav1.NewTime(w.Clock.Now().Add(-10 * time.Minute)))
	w.UpdateStatus(c)
	w.uploadBackup("db", "b1", 2*day)
	w.uploadBackup("db", "b2", day)
	w.startManager()
	time.Sleep(2 * time.Second)
	w.wantDirs("db", "b1", "b2")

	w.uploadBackup("db", "b3", 0) // completes now, ten minutes after the last pass
	w.Eventually("the completed Backup runs the pass at once", check.True(func() bool { return len(w.dirs("db")) == 2 }))
	w.wantDirs("db", "b2", "b3")
	if got := w.artifacts("b1"); got != v1.ReasonArtifactsExpired {
		t.Errorf("Backup b1: %q, want Expired", got)
	}
}

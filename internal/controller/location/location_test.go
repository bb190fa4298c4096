package location_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/location"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/ctrlworld"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3proxy"
)

const (
	oldServer = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
	newServer = "5f0c1c0e-7a55-4a52-9f3f-1b2c3d4e5f60"
)

// TestRecreatedClusterFindsItsLocationInUse: a Cluster claims its empty location, backs up and
// archives there, and is deleted; a Cluster of the same name created next is another
// incarnation. It finds the old marker: ObjectStoreInUse naming the old incarnation and the
// choices, a Warning Event, no archive window shown; the old marker stays. Given a serverName it
// claims a fresh location of its own.
func TestRecreatedClusterFindsItsLocationInUse(t *testing.T) {
	w := newLocWorld(t)
	first := w.cluster("db")
	w.create(first)
	st := w.reconcile("db")
	if st == nil || st.Phase != v1.LocationClaimed || st.HolderUID != string(first.UID) || st.Location != first.ObjectStoreLocation() {
		t.Fatalf("first incarnation: claim %+v, want Claimed by %s", st, first.UID)
	}
	if m := w.marker("db"); m == nil || m.UID != string(first.UID) || m.Namespace != w.NS {
		t.Fatalf("marker %+v, want the first incarnation's", m)
	}
	w.archive("db", string(first.UID), oldServer+":1-100", oldServer+":1-50")
	check.Must(t, w.Client.Delete(w.Ctx, first))
	w.Eventually("the first incarnation is gone", w.Gone(first))
	w.Events()

	second := w.cluster("db")
	w.create(second)
	second.Status.BinlogArchive = &v1.BinlogArchiveStatus{Instance: "db-1", LastSegment: "seg-000001"}
	w.UpdateStatus(second)
	st = w.reconcile("db")
	wantInUse(t, st, "belongs to Cluster "+w.NS+"/db (uid "+string(first.UID))
	if got := ctrlworld.Get[v1.Cluster](w.World, "db"); got.Status.BinlogArchive != nil || got.HoldsObjectStoreLocation() {
		t.Errorf("the second incarnation shows an archive %+v or holds the location", got.Status.BinlogArchive)
	}
	if ev := strings.Join(w.Events(), "\n"); !strings.Contains(ev, "Warning ObjectStoreInUse") {
		t.Errorf("events %q, want a Warning ObjectStoreInUse", ev)
	}
	if m := w.marker("db"); m == nil || m.UID != string(first.UID) {
		t.Errorf("the old marker was replaced: %+v", m)
	}
	w.reconcile("db")
	if ev := w.Events(); len(ev) != 0 {
		t.Errorf("a second look at the same refusal emitted %v", ev)
	}

	var c v1.Cluster
	w.Get("db", &c)
	old := c.DeepCopy()
	c.Spec.Backup.ServerName = "db-v2"
	check.Must(t, w.Client.Patch(w.Ctx, &c, client.MergeFrom(old)))
	st = w.reconcile("db")
	if st.Phase != v1.LocationClaimed || st.HolderUID != string(second.UID) || !strings.Contains(st.Location, "/prod/db-v2/") {
		t.Errorf("with serverName db-v2: claim %+v, want the new location claimed", st)
	}
	if m := w.marker("db-v2"); m == nil || m.UID != string(second.UID) {
		t.Errorf("marker of db-v2 %+v, want the second incarnation's", m)
	}
}

// TestSameNameInTwoNamespacesSharesNoLocation: Clusters named db in two namespaces with the same
// bucket and path name the same directory; the first to claim it holds it, the other is told.
func TestSameNameInTwoNamespacesSharesNoLocation(t *testing.T) {
	a := newLocWorld(t)
	b := a.elsewhere()
	a.create(a.cluster("db"))
	if st := a.reconcile("db"); st.Phase != v1.LocationClaimed {
		t.Fatalf("first namespace: %+v", st)
	}
	b.create(b.cluster("db"))
	wantInUse(t, b.reconcile("db"), "belongs to Cluster "+a.NS+"/db")
	if st := a.reconcile("db"); st.Phase != v1.LocationClaimed {
		t.Errorf("the first namespace lost its claim: %+v", st)
	}
}

// TestDataWithoutMarkerOfAnEarlierIncarnationIsNotAdopted: data an operator without markers left
// (written before this Cluster was created) is not taken for this Cluster's.
func TestDataWithoutMarkerOfAnEarlierIncarnationIsNotAdopted(t *testing.T) {
	w := newLocWorld(t)
	w.archive("db", "", oldServer+":1-100", oldServer+":1-50")
	w.create(w.cluster("db"))
	wantInUse(t, w.reconcile("db"), "of no known holder (no marker)")
	if m := w.marker("db"); m != nil {
		t.Errorf("a marker was written over data of no known holder: %+v", m)
	}
}

// TestDataWithoutMarkerOfThisClusterIsAdopted: a Cluster that backed up and archived under an
// operator without markers keeps its location after the upgrade.
func TestDataWithoutMarkerOfThisClusterIsAdopted(t *testing.T) {
	w := newLocWorld(t)
	c := w.cluster("db")
	w.create(c)
	time.Sleep(1100 * time.Millisecond) // an instance bootstraps for longer than that before it writes
	w.archive("db", "", oldServer+":1-100", oldServer+":1-50")
	st := w.reconcile("db")
	if st.Phase != v1.LocationClaimed || st.Reason != location.ReasonAdopted {
		t.Fatalf("claim %+v, want Claimed (Adopted)", st)
	}
	if m := w.marker("db"); m == nil || m.UID != string(c.UID) {
		t.Errorf("marker %+v", m)
	}
}

// TestRecoveryIntoItsSourceLocationIsRefused: a Cluster recovering from a location and writing
// to that same location is refused at admission unless it continues the history; one restored
// from a Backup object into its source Cluster's location finds the marker.
func TestRecoveryIntoItsSourceLocationIsRefused(t *testing.T) {
	w := newLocWorld(t)
	src := w.cluster("db")
	w.create(src)
	w.reconcile("db")
	fromSource := func(name string, mutate ...func(*v1.Cluster)) *v1.Cluster {
		return w.cluster(name, append([]func(*v1.Cluster){func(c *v1.Cluster) {
			c.Spec.Bootstrap = &v1.BootstrapConfiguration{Recovery: &v1.BootstrapRecovery{
				Source: &v1.RecoverySource{ClusterName: "db", ObjectStore: *w.store.Config("s3", "prod", false)}}}
			c.Spec.Backup.ServerName = "db"
		}}, mutate...)...)
	}
	err := w.Client.Create(w.Ctx, fromSource("restored"))
	if err == nil || !strings.Contains(err.Error(), "is the location bootstrap.recovery.source restores from") {
		t.Fatalf("creating a Cluster that writes where it recovers from: %v, want refused at admission", err)
	}
	check.Must(t, w.Client.Create(w.Ctx, fromSource("restored", func(c *v1.Cluster) { c.Spec.Backup.ServerName = "restored" })))
	check.Must(t, w.Client.Create(w.Ctx, fromSource("continuing", func(c *v1.Cluster) { c.Spec.Backup.ContinueHistory = true })))

	viaBackup := w.cluster("restored-from-backup", func(c *v1.Cluster) {
		c.Spec.Bootstrap = &v1.BootstrapConfiguration{Recovery: &v1.BootstrapRecovery{Backup: &v1.LocalObjectReference{Name: "nightly"}}}
		c.Spec.Backup.ServerName = "db"
	})
	w.create(viaBackup)
	wantInUse(t, w.reconcile("restored-from-backup"), "belongs to Cluster "+w.NS+"/db (uid "+string(src.UID))
}

// TestContinueHistory: a Cluster recovered from a deleted Cluster's location asks to continue
// its history. While its primary lacks transactions the location holds (it recovered to an
// earlier point: a fork) it is refused, naming them; once its primary has executed everything
// the location holds, it takes the marker over and records the old incarnation it continues.
func TestContinueHistory(t *testing.T) {
	w := newLocWorld(t)
	old := w.cluster("db")
	w.create(old)
	w.reconcile("db")
	w.archive("db", string(old.UID), oldServer+":1-100", oldServer+":1-50")
	check.Must(t, w.Client.Delete(w.Ctx, old))
	w.Eventually("the old Cluster is gone", w.Gone(old))

	c := w.cluster("db", func(c *v1.Cluster) {
		c.Spec.Bootstrap = &v1.BootstrapConfiguration{Recovery: &v1.BootstrapRecovery{
			Source: &v1.RecoverySource{ClusterName: "db", ObjectStore: *w.store.Config("s3", "prod", false)}}}
		c.Spec.Backup.ContinueHistory = true
	})
	w.create(c)
	if st := w.reconcile("db"); st.Phase != v1.LocationInUse {
		t.Fatalf("before its restore is verified: %+v, want InUse (not recovered from the location yet)", st)
	}
	// What the instance records once the restore is verified, and the primary's report.
	c = ctrlworld.Get[v1.Cluster](w.World, "db")
	c.Status.Recovery = &v1.RecoveryStatus{Backup: "nightly", Path: "prod/db/nightly/20261129T000000Z/"}
	c.Status.CurrentPrimary, c.Status.TargetPrimary = "db-1", "db-1"
	c.Status.GTIDExecutedByInstance = map[string]string{"db-1": oldServer + ":1-80"}
	w.UpdateStatus(c)
	wantInUse(t, w.reconcile("db"), "never executed ("+oldServer+":81-100)")
	if m := w.marker("db"); m == nil || m.UID != string(old.UID) {
		t.Fatalf("a fork took the marker: %+v", m)
	}

	c = ctrlworld.Get[v1.Cluster](w.World, "db")
	c.Status.GTIDExecutedByInstance = map[string]string{"db-1": oldServer + ":1-100," + newServer + ":1-3"}
	w.UpdateStatus(c)
	st := w.reconcile("db")
	if st.Phase != v1.LocationClaimed || st.Reason != location.ReasonContinued || len(st.Continues) != 1 || st.Continues[0] != string(old.UID) {
		t.Fatalf("claim %+v, want Claimed (Continued) continuing %s", st, old.UID)
	}
	m := w.marker("db")
	if m == nil || m.UID != string(c.UID) || len(m.Continues) != 1 || m.Continues[0].UID != string(old.UID) ||
		m.RecoveredFrom != "prod/db/nightly/20261129T000000Z/" {
		t.Errorf("marker %+v, want this Cluster's, continuing the old one", m)
	}
	if got := ctrlworld.Get[v1.Cluster](w.World, "db").OwnIncarnations(); len(got) != 2 {
		t.Errorf("own incarnations %v, want this and the old one", got)
	}
}

// TestStoreDownLeavesTheClaimPending: a location that cannot be read is not claimed: Pending with
// the error, a Warning, a retry in 30 s; once the store answers, it is claimed. A claim made
// before the store went down stays.
func TestStoreDownLeavesTheClaimPending(t *testing.T) {
	w := newLocWorld(t)
	w.create(w.cluster("db", func(c *v1.Cluster) { c.Spec.Backup.ObjectStore = w.store.Config("s3", "prod", true) }))
	w.store.Proxy.Inject(s3proxy.Fault{Match: s3proxy.All(), Action: s3proxy.Status(http.StatusServiceUnavailable)})
	r := &location.Reconciler{Client: w.Client, APIReader: w.Client, Recorder: w.Recorder, Clock: w.Clock,
		OpenStore: func(cfg objectstore.Config) (*objectstore.Client, error) {
			cfg.MaxRetries = 1 // a store that is down fails at once
			return objectstore.New(cfg)
		}}
	look := func() (ctrl.Result, *v1.ObjectStoreLocationStatus) {
		res, err := r.Reconcile(w.Ctx, ctrl.Request{NamespacedName: w.Key("db")})
		check.Must(t, err)
		return res, ctrlworld.Get[v1.Cluster](w.World, "db").Status.ObjectStoreLocation
	}
	res, st := look()
	if st == nil || st.Phase != v1.LocationPending || !strings.Contains(st.Message, "could not be checked") || res.RequeueAfter != 30*time.Second {
		t.Fatalf("store down: claim %+v, requeue %s; want Pending, retried in 30s", st, res.RequeueAfter)
	}
	if ev := strings.Join(w.Events(), "\n"); !strings.Contains(ev, "Warning ObjectStoreClaimFailed") {
		t.Errorf("events %q", ev)
	}
	w.store.Proxy.ClearFaults()
	if _, st = look(); st.Phase != v1.LocationClaimed {
		t.Fatalf("store back: %+v", st)
	}
	w.store.Proxy.Inject(s3proxy.Fault{Match: s3proxy.All(), Action: s3proxy.Status(http.StatusServiceUnavailable)})
	if _, st = look(); st.Phase != v1.LocationClaimed {
		t.Errorf("a held location lost its claim while the store was down: %+v", st)
	}
}

// TestWaitsForTheClusterControllersFirstStatus: until the Cluster controller recorded its first
// instance, the location reconciler writes nothing, neither marker nor status: a status write
// then would conflict with the one that records the first instance and its target primary.
func TestWaitsForTheClusterControllersFirstStatus(t *testing.T) {
	w := newLocWorld(t)
	c := w.cluster("db")
	w.Create(c)
	r := &location.Reconciler{Client: w.Client, APIReader: w.Client, Recorder: w.Recorder, Clock: w.Clock}
	res, err := r.Reconcile(w.Ctx, ctrl.Request{NamespacedName: w.Key("db")})
	check.Must(t, err)
	if got := ctrlworld.Get[v1.Cluster](w.World, "db"); got.ResourceVersion != c.ResourceVersion || res.RequeueAfter != 2*time.Second {
		t.Fatalf("before the first status: the Cluster was written (%s, was %s) or requeue %s", got.ResourceVersion, c.ResourceVersion, res.RequeueAfter)
	}
	if m := w.marker("db"); m != nil {
		t.Fatalf("a marker was written before the first status: %+v", m)
	}
	c.Status.LatestGeneratedNode = 1
	w.UpdateStatus(c)
	if st := w.reconcile("db"); st.Phase != v1.LocationClaimed {
		t.Fatalf("after the first status: %+v", st)
	}
}

// TestRecoveryLocationRuleAppliesAtCreationOnly: the admission rule against recovering into the
// source's location is checked when a Cluster is created; a Cluster that exists (created before
// the rule) keeps taking status writes and spec edits, the location controller reporting it.
func TestRecoveryLocationRuleAppliesAtCreationOnly(t *testing.T) {
	w := newLocWorld(t)
	c := w.cluster("restored", func(c *v1.Cluster) {
		c.Spec.Bootstrap = &v1.BootstrapConfiguration{Recovery: &v1.BootstrapRecovery{
			Source: &v1.RecoverySource{ClusterName: "db", ObjectStore: *w.store.Config("s3", "prod", false)}}}
		c.Spec.Backup.ServerName = "restored-v1"
	})
	w.create(c)
	var got v1.Cluster
	w.Get("restored", &got)
	old := got.DeepCopy()
	got.Spec.Backup.ServerName = "db" // now names the source's location
	if err := w.Client.Patch(w.Ctx, &got, client.MergeFrom(old)); err != nil {
		t.Fatalf("an update of an existing Cluster was refused by the creation rule: %v", err)
	}
	got.Status.LatestGeneratedNode = 2
	check.Must(t, w.Client.Status().Update(w.Ctx, &got))
}

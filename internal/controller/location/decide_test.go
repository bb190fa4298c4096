package location

import (
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

var (
	created = time.Date(2026, 11, 29, 4, 40, 0, 0, time.UTC)
	now     = created.Add(10 * time.Minute)
)

const (
	oldServer = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
	newServer = "5f0c1c0e-7a55-4a52-9f3f-1b2c3d4e5f60"
)

// cluster is the Cluster demo of namespace default, uid uid-new, created at created, with an
// object store, changed by mutate.
func cluster(mutate ...func(*v1.Cluster)) *v1.Cluster {
	c := &v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "default", UID: "uid-new",
		CreationTimestamp: metav1.NewTime(created)},
		Spec: v1.ClusterSpec{Backup: &v1.BackupConfiguration{ObjectStore: &v1.ObjectStoreConfiguration{Bucket: "backups", Path: "demo"}}}}
	for _, m := range mutate {
		m(c)
	}
	return c
}

func continuing(c *v1.Cluster) { c.Spec.Backup.ContinueHistory = true }

// primaryAt gives the Cluster the primary demo-1 that executed set.
func primaryAt(set string) func(*v1.Cluster) {
	return func(c *v1.Cluster) {
		c.Status.CurrentPrimary, c.Status.TargetPrimary = "demo-1", "demo-1"
		c.Status.GTIDExecutedByInstance = map[string]string{"demo-1": set}
	}
}

func claimOf(uid string, continues ...string) *objectstore.Claim {
	c := &objectstore.Claim{Cluster: "demo", Namespace: "default", UID: uid, CreatedAt: created.Add(-time.Hour),
		ClaimedAt: created.Add(-time.Hour)}
	for _, p := range continues {
		c.Continues = append(c.Continues, objectstore.ClaimPredecessor{UID: p})
	}
	return c
}

// written is a location holding n objects written from..to, backups of namespaces and uids.
func written(from, to time.Time, namespaces, uids []string) objectstore.Contents {
	return objectstore.Contents{Objects: 4, Oldest: from, Newest: to, Namespaces: namespaces, UIDs: uids}
}

func mustSet(t *testing.T, s string) gtid.Set {
	t.Helper()
	set, err := gtid.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func TestDecide(t *testing.T) {
	loc := cluster().ObjectStoreLocation()
	before := written(created.Add(-time.Hour), created.Add(-10*time.Minute), []string{"default"}, nil)
	after := written(created.Add(time.Minute), created.Add(5*time.Minute), []string{"default"}, []string{"uid-new"})
	for _, tc := range []struct {
		rule    string
		o       Observation
		action  Action
		phase   v1.LocationPhase
		reason  string
		message string   // a part of the status message
		event   string   // the Event's reason, "" for none
		cont    []string // the predecessors the claim records
	}{
		{rule: "a marker of this Cluster: held, nothing written",
			o:      Observation{Claim: claimOf("uid-new")},
			action: ActNone, phase: v1.LocationClaimed, reason: ReasonClaimed},
		{rule: "an empty location without a marker: claimed",
			o:      Observation{},
			action: ActCreate, phase: v1.LocationClaimed, reason: ReasonClaimed, event: "ObjectStoreClaimed"},
		{rule: "data without a marker, all written after this Cluster was created by it: adopted (an earlier operator wrote no marker)",
			o:      Observation{Contents: after},
			action: ActCreate, phase: v1.LocationClaimed, reason: ReasonAdopted, event: "ObjectStoreClaimed"},
		{rule: "data without a marker written before this Cluster was created: in use, with the choices",
			o:      Observation{Contents: before},
			action: ActNone, phase: v1.LocationInUse, reason: ReasonInUse, event: ReasonInUse,
			message: "of no known holder (no marker), the oldest written 2026-11-29T03:40:00Z"},
		{rule: "data without a marker written after the creation with an unreadable metadata.json: in use, saying so",
			o: Observation{Contents: func() objectstore.Contents {
				c := written(created.Add(time.Minute), created.Add(2*time.Minute), []string{"default"}, nil)
				c.Unreadable = 1
				return c
			}()},
			action: ActNone, phase: v1.LocationInUse, reason: ReasonInUse, event: ReasonInUse, message: "1 backup(s) whose metadata.json cannot be read"},
		{rule: "data without a marker written after the creation, its backups recording no namespace or uid (older builds): adopted",
			o:      Observation{Contents: written(created.Add(time.Minute), created.Add(5*time.Minute), []string{""}, nil)},
			action: ActCreate, phase: v1.LocationClaimed, reason: ReasonAdopted, event: "ObjectStoreClaimed"},
		{rule: "data without a marker written within a second of the creation (an earlier incarnation's last writes): in use",
			o:      Observation{Contents: written(created.Add(500*time.Millisecond), created.Add(time.Minute), []string{"default"}, nil)},
			action: ActNone, phase: v1.LocationInUse, reason: ReasonInUse, event: ReasonInUse},
		{rule: "data without a marker written after the creation by a Cluster of another namespace: in use",
			o:      Observation{Contents: written(created.Add(time.Minute), created.Add(2*time.Minute), []string{"team-b"}, nil)},
			action: ActNone, phase: v1.LocationInUse, reason: ReasonInUse, event: ReasonInUse},
		{rule: "data without a marker written after the creation by another incarnation's backup: in use",
			o:      Observation{Contents: written(created.Add(time.Minute), created.Add(2*time.Minute), []string{"default"}, []string{"uid-old"})},
			action: ActNone, phase: v1.LocationInUse, reason: ReasonInUse, event: ReasonInUse},
		{rule: "a marker of another incarnation: in use, naming it and the choices",
			o:      Observation{Claim: claimOf("uid-old"), Contents: before},
			action: ActNone, phase: v1.LocationInUse, reason: ReasonInUse, event: ReasonInUse,
			message: "belongs to Cluster default/demo (uid uid-old"},
		{rule: "continueHistory on a Cluster not recovered from the location: in use",
			o:      Observation{Cluster: cluster(continuing, primaryAt(oldServer+":1-100")), Claim: claimOf("uid-old"), Holder: HolderGone},
			action: ActNone, phase: v1.LocationInUse, reason: ReasonInUse, event: ReasonInUse,
			message: "applies only to a Cluster recovered from this location"},
		{rule: "continueHistory while the holder still exists: in use (one writer per location)",
			o: Observation{Cluster: cluster(continuing, primaryAt(oldServer+":1-100")), Claim: claimOf("uid-old"), Holder: HolderExists,
				RecoveredFrom: loc},
			action: ActNone, phase: v1.LocationInUse, reason: ReasonInUse, event: ReasonInUse, message: "which still exists"},
		{rule: "continueHistory when the operator cannot tell whether the holder exists: in use",
			o: Observation{Cluster: cluster(continuing, primaryAt(oldServer+":1-100")), Claim: claimOf("uid-old"), Holder: HolderUnknown,
				RecoveredFrom: loc},
			action: ActNone, phase: v1.LocationInUse, reason: ReasonInUse, event: ReasonInUse, message: "cannot tell"},
		{rule: "continueHistory before the primary reported its GTID set: pending",
			o:      Observation{Cluster: cluster(continuing), Claim: claimOf("uid-old"), Holder: HolderGone, RecoveredFrom: loc},
			action: ActNone, phase: v1.LocationPending, reason: ReasonClaimPending},
		{rule: "continueHistory of a fork (the location holds transactions the primary never executed): in use, naming them",
			o: Observation{Cluster: cluster(continuing, primaryAt(oldServer+":1-80")), Claim: claimOf("uid-old"), Holder: HolderGone,
				RecoveredFrom: loc},
			action: ActNone, phase: v1.LocationInUse, reason: ReasonInUse, event: ReasonInUse,
			message: oldServer + ":81-100"},
		{rule: "continueHistory of a Cluster that executed everything the location holds: taken over, the old holder recorded",
			o: Observation{Cluster: cluster(continuing, primaryAt(oldServer+":1-100,"+newServer+":1-3")), Claim: claimOf("uid-old", "uid-older"),
				ClaimETag: `"e1"`, Holder: HolderGone, RecoveredFrom: loc},
			action: ActTakeover, phase: v1.LocationClaimed, reason: ReasonContinued, event: "ObjectStoreClaimed",
			cont: []string{"uid-older", "uid-old"}},
		{rule: "continueHistory over data without a marker: claimed, its backups' incarnations recorded",
			o: Observation{Cluster: cluster(continuing, primaryAt(oldServer+":1-100")), Contents: written(created.Add(-time.Hour), created, nil, []string{"uid-old"}),
				RecoveredFrom: loc},
			action: ActCreate, phase: v1.LocationClaimed, reason: ReasonContinued, event: "ObjectStoreClaimed", cont: []string{"uid-old"}},
		{rule: "a location still in use with the same message: no second Event",
			o: Observation{Claim: claimOf("uid-old"), Cluster: cluster(func(c *v1.Cluster) {
				d := Decide(Observation{Now: now, Cluster: cluster(), Location: loc, Claim: claimOf("uid-old")})
				c.Status.ObjectStoreLocation = &d.Status
			})},
			action: ActNone, phase: v1.LocationInUse, reason: ReasonInUse},
		{rule: "a held location keeps the reason it was claimed with",
			o: Observation{Claim: claimOf("uid-new"), Cluster: cluster(func(c *v1.Cluster) {
				c.Status.ObjectStoreLocation = &v1.ObjectStoreLocationStatus{Location: loc, Phase: v1.LocationClaimed, Reason: ReasonAdopted, HolderUID: "uid-new"}
			})},
			action: ActNone, phase: v1.LocationClaimed, reason: ReasonAdopted},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			o := tc.o
			o.Now, o.Location = now, loc
			if o.Cluster == nil {
				o.Cluster = cluster()
			}
			o.LocationGTIDs = mustSet(t, oldServer+":1-100") // what the old incarnation wrote
			d := Decide(o)
			st := d.Status
			if d.Action != tc.action || st.Phase != tc.phase || st.Reason != tc.reason || st.Location != loc {
				t.Fatalf("action %v, status %+v; want action %v, phase %s, reason %s", d.Action, st, tc.action, tc.phase, tc.reason)
			}
			if !strings.Contains(st.Message, tc.message) {
				t.Errorf("message %q, want it to contain %q", st.Message, tc.message)
			}
			if st.Phase == v1.LocationInUse && !strings.Contains(st.Message, "spec.backup") {
				t.Errorf("an in-use message names no choice: %q", st.Message)
			}
			var events []string
			for _, e := range d.Events {
				events = append(events, e.Kind.Reason)
			}
			if want := []string{tc.event}; (tc.event == "" && len(events) != 0) || (tc.event != "" && !slices.Equal(events, want)) {
				t.Errorf("events %v, want %q", events, tc.event)
			}
			if (d.Action != ActNone) != (d.Claim != nil) {
				t.Fatalf("action %v with claim %+v", d.Action, d.Claim)
			}
			if d.Claim != nil {
				if d.Claim.UID != "uid-new" || d.Claim.Namespace != "default" || d.Claim.Cluster != "demo" ||
					!d.Claim.CreatedAt.Equal(created) || !d.Claim.ClaimedAt.Equal(now) {
					t.Errorf("claim %+v does not name this Cluster", d.Claim)
				}
				if got := d.Claim.PredecessorUIDs(); !slices.Equal(got, tc.cont) && !(len(got) == 0 && len(tc.cont) == 0) {
					t.Errorf("predecessors %v, want %v", got, tc.cont)
				}
				if !slices.Equal(st.Continues, d.Claim.PredecessorUIDs()) || st.HolderUID != "uid-new" {
					t.Errorf("status %+v does not mirror the claim %+v", st, d.Claim)
				}
			}
		})
	}
}

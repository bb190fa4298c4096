package location

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

const (
	// Recheck is how often a held location's marker is read again: a takeover by another
	// incarnation (continueHistory) is seen within it.
	Recheck = 5 * time.Minute
	// retryPending is how soon a claim that waits (for the primary's GTID set, after a lost race)
	// is tried again.
	retryPending = 15 * time.Second
	// retryInUse is how soon a location in use is looked at again: the other holder may be gone
	// and its data removed.
	retryInUse = time.Minute
	// retryFailed is how soon a location that could not be read or written is tried again.
	retryFailed = 30 * time.Second
)

// Reasons recorded in status.objectStoreLocation.
const (
	ReasonClaimed      = "Claimed"
	ReasonAdopted      = "Adopted"
	ReasonContinued    = "Continued"
	ReasonInUse        = "ObjectStoreInUse"
	ReasonClaimPending = "ClaimPending"
)

// HolderState is whether the Cluster incarnation a marker names still exists.
type HolderState int

const (
	HolderUnknown HolderState = iota // the operator cannot tell (no permission, an error)
	HolderExists
	HolderGone
)

// Observation is what Decide reads.
type Observation struct {
	Now     time.Time
	Cluster *v1.Cluster
	// Location is the Cluster's location as status.objectStoreLocation names it.
	Location string
	// Claim is the location's marker, nil when it has none; ClaimETag its version.
	Claim     *objectstore.Claim
	ClaimETag string
	// Contents is what the location holds besides the marker; read only without a marker of
	// this Cluster.
	Contents objectstore.Contents
	// Holder is whether the marker's incarnation exists; read only for a takeover.
	Holder HolderState
	// LocationGTIDs is every transaction the location holds (archived segments and backups);
	// read only for a takeover.
	LocationGTIDs gtid.Set
	// RecoveredFrom is the location the Cluster was restored from, "" when it was not.
	RecoveredFrom string
}

// Action is the object store write a Decision asks for.
type Action int

const (
	ActNone Action = iota
	// ActCreate writes Claim where there is no marker (If-None-Match).
	ActCreate
	// ActTakeover replaces the marker at Observation.ClaimETag (If-Match).
	ActTakeover
)

// Decision is the claim to write, if any, the status to record and the Events.
type Decision struct {
	Action       Action
	Claim        *objectstore.Claim
	Status       v1.ObjectStoreLocationStatus
	RequeueAfter time.Duration
	Events       []kit.Event
}

// Decide decides what the Cluster's claim on its location is, one rule after the other.
func Decide(o Observation) Decision {
	c := o.Cluster
	switch {
	case o.Claim != nil && o.Claim.UID == string(c.UID):
		return held(o, o.Claim, reasonOfHeld(o))
	case o.Claim == nil && o.Contents.Empty():
		return create(o, ReasonClaimed, nil)
	case o.Claim == nil && writtenByThisIncarnation(o):
		return create(o, ReasonAdopted, nil)
	case !continueHistory(c):
		return inUse(o, describeOther(o)+"; "+choices)
	}
	// continueHistory: take the location over when it is safe.
	if o.RecoveredFrom != o.Location {
		return inUse(o, describeOther(o)+"; spec.backup.continueHistory applies only to a Cluster recovered from this location (bootstrap.recovery), and this one was "+describeRecovered(o.RecoveredFrom))
	}
	if o.Claim != nil {
		switch o.Holder {
		case HolderExists:
			return inUse(o, describeOther(o)+", which still exists: a location has one writer; "+choices)
		case HolderUnknown:
			return inUse(o, describeOther(o)+", and the operator cannot tell whether that Cluster still exists (no permission to read it, or the read failed): "+choices)
		}
	}
	if o.Contents.Unreadable > 0 {
		return inUse(o, fmt.Sprintf("%s; continueHistory refused: %d backup(s) there have a metadata.json that cannot be read, so what the location holds is not known", describeOther(o), o.Contents.Unreadable))
	}
	executed, known := primaryExecuted(c)
	if !known {
		return pending(o, "waiting for the primary's GTID set to check that this Cluster continues the location's history")
	}
	if missing := o.LocationGTIDs.Subtract(executed); !missing.IsEmpty() {
		return inUse(o, fmt.Sprintf("%s; continueHistory refused: the location holds transactions this Cluster never executed (%s), so its history forked from the location's (a recovery to an earlier point); %s",
			describeOther(o), missing, choices))
	}
	return create(o, ReasonContinued, o.Claim)
}

// choices is what a user can do about a location in use.
const choices = "write elsewhere (another spec.backup.objectStore.path, or spec.backup.serverName), or, for a Cluster recovered from this location that continues its history, set spec.backup.continueHistory"

func continueHistory(c *v1.Cluster) bool {
	return c.Spec.Backup != nil && c.Spec.Backup.ContinueHistory
}

// adoptionMargin is how long after a Cluster's creation (kept to the second) the oldest object
// of data without a marker must have been written for the data to be taken for the Cluster's
// own: an instance takes far longer than that to bootstrap and archive, while an earlier
// incarnation's last writes can fall in the second the new one was created.
const adoptionMargin = time.Second

// writtenByThisIncarnation reports whether data without a marker can only be this Cluster's: an
// earlier operator wrote no marker, and every object was written after this Cluster was created
// by a Cluster of its namespace and, where recorded, of its UID. Objects of an earlier
// incarnation of the same name predate this one's creation. The object store dates the objects
// and the API server the Cluster: a store whose clock runs behind makes the Cluster's own data
// look older, which refuses it (the safe way) rather than adopting another incarnation's.
func writtenByThisIncarnation(o Observation) bool {
	c := o.Cluster
	if o.Contents.Unreadable > 0 || o.Contents.Oldest.Before(c.CreationTimestamp.Add(adoptionMargin)) {
		return false
	}
	for _, ns := range o.Contents.Namespaces {
		if ns != "" && ns != c.Namespace { // "": a backup written before namespaces were recorded
			return false
		}
	}
	for _, uid := range o.Contents.UIDs {
		if uid != string(c.UID) {
			return false
		}
	}
	return true
}

// primaryExecuted is the current primary's GTID set as last reported.
func primaryExecuted(c *v1.Cluster) (gtid.Set, bool) {
	p := c.Status.CurrentPrimary
	if p == "" || c.Status.TargetPrimary != p {
		return gtid.Set{}, false
	}
	raw, ok := c.Status.GTIDExecutedByInstance[p]
	if !ok {
		return gtid.Set{}, false
	}
	set, err := gtid.Parse(raw)
	return set, err == nil
}

func reasonOfHeld(o Observation) string {
	if st := o.Cluster.Status.ObjectStoreLocation; st != nil && st.Location == o.Location && st.HolderUID == o.Claim.UID && st.Reason != "" && st.Phase == v1.LocationClaimed {
		return st.Reason
	}
	if len(o.Claim.Continues) > 0 {
		return ReasonContinued
	}
	return ReasonClaimed
}

// create writes a marker naming the Cluster; over, when set, is the marker it replaces.
func create(o Observation, reason string, over *objectstore.Claim) Decision {
	c := o.Cluster
	claim := &objectstore.Claim{Cluster: c.Name, Namespace: c.Namespace, UID: string(c.UID),
		CreatedAt: c.CreationTimestamp.UTC(), ClaimedAt: o.Now.UTC()}
	if st := c.Status.Recovery; st != nil {
		claim.RecoveredFrom = st.Path
	}
	action := ActCreate
	if over != nil {
		action = ActTakeover
		claim.Continues = append(append([]objectstore.ClaimPredecessor(nil), over.Continues...), objectstore.ClaimPredecessor{
			UID: over.UID, Cluster: over.Cluster, Namespace: over.Namespace, ClaimedAt: over.ClaimedAt})
	} else if reason == ReasonContinued {
		// Data without a marker: its backups' recorded UIDs are the predecessors.
		for _, uid := range o.Contents.UIDs {
			claim.Continues = append(claim.Continues, objectstore.ClaimPredecessor{UID: uid})
		}
	}
	d := held(o, claim, reason)
	d.Action, d.Claim = action, claim
	d.Events = []kit.Event{evClaimed.With(o.Location, describeClaim(reason, claim))}
	return d
}

// held records a marker naming the Cluster.
func held(o Observation, claim *objectstore.Claim, reason string) Decision {
	at := metav1.NewTime(claim.ClaimedAt.UTC().Truncate(time.Second)) // as the API server keeps it
	st := v1.ObjectStoreLocationStatus{Location: o.Location, Phase: v1.LocationClaimed, Reason: reason,
		Message: describeClaim(reason, claim), HolderUID: claim.UID, Holder: claim.Holder(),
		Continues: claim.PredecessorUIDs(), ClaimedAt: &at}
	return Decision{Status: st, RequeueAfter: Recheck}
}

func inUse(o Observation, msg string) Decision {
	st := v1.ObjectStoreLocationStatus{Location: o.Location, Phase: v1.LocationInUse, Reason: ReasonInUse, Message: msg}
	if o.Claim != nil {
		at := metav1.NewTime(o.Claim.ClaimedAt.UTC().Truncate(time.Second))
		st.HolderUID, st.Holder, st.ClaimedAt = o.Claim.UID, o.Claim.Holder(), &at
	}
	d := Decision{Status: st, RequeueAfter: retryInUse}
	if old := o.Cluster.Status.ObjectStoreLocation; old == nil || old.Phase != st.Phase || old.Location != st.Location || old.Message != st.Message {
		d.Events = []kit.Event{evInUse.With(o.Location, msg)}
	}
	return d
}

func pending(o Observation, msg string) Decision {
	return Decision{Status: v1.ObjectStoreLocationStatus{Location: o.Location, Phase: v1.LocationPending,
		Reason: ReasonClaimPending, Message: msg}, RequeueAfter: retryPending}
}

// describeOther says what occupies the location.
func describeOther(o Observation) string {
	if o.Claim != nil {
		return fmt.Sprintf("the location belongs to Cluster %s (uid %s, created %s, claimed %s)", o.Claim.Holder(), o.Claim.UID,
			o.Claim.CreatedAt.UTC().Format(time.RFC3339), o.Claim.ClaimedAt.UTC().Format(time.RFC3339))
	}
	n := o.Contents
	msg := fmt.Sprintf("the location holds objects of no known holder (no marker), the oldest written %s, before this Cluster was created or by another Cluster",
		n.Oldest.UTC().Format(time.RFC3339))
	if n.Unreadable > 0 {
		msg += fmt.Sprintf(", and %d backup(s) whose metadata.json cannot be read", n.Unreadable)
	}
	return msg
}

func describeRecovered(from string) string {
	if from == "" {
		return "not recovered"
	}
	return "recovered from " + from
}

func describeClaim(reason string, claim *objectstore.Claim) string {
	switch reason {
	case ReasonAdopted:
		return "held by this Cluster: its data predates the location markers and was all written by this Cluster"
	case ReasonContinued:
		return fmt.Sprintf("held by this Cluster, which continues the history of %d earlier incarnation(s)", len(claim.Continues))
	}
	return "held by this Cluster"
}

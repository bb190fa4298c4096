package failover

import (
	"slices"
	"time"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
)

// Observation is everything Decide reads: the Cluster's spec and status, the primary Lease, what
// each instance reported, and the time.
type Observation struct {
	Now    time.Time
	Spec   Spec
	Status Status
	Lease  Lease
	// Instances are the Cluster's instances, in the order the caller ranks them (by serial, say):
	// when two failover candidates hold the same history, the earlier one is chosen.
	Instances []Instance
}

// Spec is the part of the Cluster's spec the decision reads.
type Spec struct {
	Instances int32
	// FailoverDelay is how long the primary must keep failing before a failover starts.
	FailoverDelay time.Duration
	// MaxSwitchoverDelay bounds a switchover, counted from status.targetPrimaryTimestamp.
	MaxSwitchoverDelay time.Duration
	// EnablePrimaryLease: the primary holds the Lease <cluster>-primary, and no replica is promoted
	// while another instance holds it unexpired. Off, a failover relies on Pod deletion alone.
	EnablePrimaryLease bool
	// SemiSync is whether semi-synchronous replication is enabled.
	SemiSync bool
	// SemiSyncTimeout is rpl_semi_sync_source_timeout.
	SemiSyncTimeout time.Duration
	// DataDurability is spec.mysql.semiSync.dataDurability.
	DataDurability v1.DataDurability
}

// Status is the part of the Cluster's status the decision reads. Zero times are unset.
type Status struct {
	CurrentPrimary          string
	CurrentPrimaryTimestamp time.Time
	TargetPrimary           string
	TargetPrimaryTimestamp  time.Time
	PrimaryFailingSince     time.Time
	// FailingPrimary is the instance recorded failing with PrimaryFailingSince ("" in a status
	// written before it was recorded).
	FailingPrimary string
	Fenced         []string
	Diverged       []string
	// SemiSyncFallenBack: when the primary last reported, semi-sync was enabled but inactive
	// (Rpl_semi_sync_source_status OFF): acknowledged writes may exist on the primary alone.
	SemiSyncFallenBack bool
	// DataLossAccepted is status.dataLossAccepted, nil when none.
	DataLossAccepted *DataLossAcceptance
	// PrimaryRestart and PrimaryRestartAt are status.primaryRestart: the instance whose Pod a
	// rolling update deleted to restart it in place, and when ("" and zero when none).
	PrimaryRestart   string
	PrimaryRestartAt time.Time
	// PrimaryRestartPodUID is the UID of the Pod the restart deletes.
	PrimaryRestartPodUID string
	// FallbackCaughtUp is status.fallbackCaughtUp, nil when none or when it does not parse.
	FallbackCaughtUp *FallbackCaughtUp
}

// FallbackCaughtUp: the failing FormerPrimary (failing since FailingSince) was seen read-only,
// after its fallback recorded at FellBackAt, having executed GTIDSet.
type FallbackCaughtUp struct {
	FormerPrimary            string
	FailingSince, FellBackAt time.Time
	GTIDSet                  gtid.Set
}

// DataLossAcceptance is a person's acceptance of a failover from FormerPrimary to Instance past
// the commits FormerPrimary may have acknowledged alone.
type DataLossAcceptance struct {
	FormerPrimary, Instance string
	// FailingSince is the primaryFailingSince of the failure it was given for; AcceptedAt when;
	// Promoted: a failover already acted on it.
	FailingSince, AcceptedAt time.Time
	Promoted                 bool
}

// Lease is the primary Lease <cluster>-primary as the operator read it.
type Lease struct {
	Exists bool
	// Holder is the instance that holds it, and HolderPodUID the UID of its Pod that took it
	// (empty in a Lease written by an older instance manager): spec.holderIdentity, parsed by
	// ParseLeaseHolder.
	Holder, HolderPodUID string
	// Fallback is the semi-sync fallback record the Lease carries (FallbackAnnotation), nil when
	// none; a record that does not parse is one at risk for its holder.
	Fallback *FallbackRecord
	// RenewTime is spec.renewTime, written by the holder at its last renewal.
	RenewTime time.Time
	// TTL is spec.leaseDurationSeconds.
	TTL time.Duration
	// ObservedAt is the operator's own clock when it first saw this holder and renewTime. The
	// renewTime is written with the holder's clock, which may be skewed from the operator's:
	// as client-go's leader election does, the expiry is measured from when the operator saw
	// the Lease last change (see LeaseExpiry). Zero: not observed, so never taken as expired.
	ObservedAt time.Time
}

// Instance is what the operator observed of one instance: its Pod, and its answer to GET /status
// of the instance manager's control API. The fields after Reachable mean something only when
// Reachable is true.
type Instance struct {
	Name string
	// PodUID is the UID of its Pod ("" without one).
	PodUID      string
	PodExists   bool
	PodReady    bool
	PodDeleting bool
	// Reachable: the instance answered GET /status in this reconcile.
	Reachable bool
	// Role is v1.RolePrimary or v1.RoleReplica, as mysqld runs it.
	Role          string
	ReadOnly      bool
	SuperReadOnly bool
	// Replication is the replication channel; nil when the server has none.
	Replication *Replication
	// Executed is @@gtid_executed.
	Executed gtid.Set
	// Retrieved is the channel's Retrieved_Gtid_Set: received, perhaps not yet applied.
	Retrieved gtid.Set
	// SemiSync is the primary's semi-sync state; nil on a replica or with semi-sync off.
	SemiSync *SemiSync
	// AckWaiters is the number of sessions whose commit waits for a semi-sync acknowledgement:
	// their transactions are in the binary log (and perhaps on a replica) but not yet in Executed.
	AckWaiters int32
	// LabelRole and LabelRoutable are the role and routable labels the Pod carries now.
	LabelRole     string
	LabelRoutable bool
}

// Replication is a replica's channel.
type Replication struct {
	// Source is the instance the channel replicates from.
	Source string
	// IORunning: the receiver runs (Replica_IO_Running Yes). IOState is Replica_IO_Running as
	// reported: Yes, No or Connecting ("" from instance managers that predate it).
	IORunning    bool
	IOState      string
	IOLastError  string
	SQLRunning   bool
	SQLLastError string
	// LagSeconds is the applier lag; -1 when unknown.
	LagSeconds int64
}

// IOActive reports whether the receiver runs or is trying to (Connecting): either way it may
// still receive from its source, and acknowledge to it.
func (r *Replication) IOActive() bool {
	if r.IOState == "" {
		return r.IORunning
	}
	return r.IOState != "No"
}

// SemiSync is the primary's semi-sync state.
type SemiSync struct {
	// Active mirrors Rpl_semi_sync_source_status: off means commits are no longer acknowledged.
	Active              bool
	WaitForReplicaCount int32
	Clients             int32
	// LongestAckWait is how long the oldest commit still waiting for an acknowledgement has
	// waited (the longest processlist time in state "Waiting for semi-sync ACK from replica").
	LongestAckWait time.Duration
}

// ObserveCluster returns the Spec and Status of c as the decision reads them. An unset
// enablePrimaryLease is true and an unset maxSwitchoverDelay is 3600 s, as the API defaults them.
func ObserveCluster(c *v1.Cluster) (Spec, Status) {
	s := Spec{
		Instances:          c.Spec.Instances,
		FailoverDelay:      time.Duration(c.Spec.FailoverDelay) * time.Second,
		MaxSwitchoverDelay: time.Duration(c.Spec.MaxSwitchoverDelay) * time.Second,
		EnablePrimaryLease: c.Spec.EnablePrimaryLease == nil || *c.Spec.EnablePrimaryLease,
	}
	if s.MaxSwitchoverDelay <= 0 {
		s.MaxSwitchoverDelay = 3600 * time.Second
	}
	if ss := c.Spec.MySQL.SemiSync; ss != nil && ss.Enabled {
		s.SemiSync = true
		s.SemiSyncTimeout = time.Duration(ss.TimeoutMillis) * time.Millisecond
		s.DataDurability = ss.DataDurability
	}
	cs := c.Status
	st := Status{
		CurrentPrimary: cs.CurrentPrimary,
		TargetPrimary:  cs.TargetPrimary,
		Fenced:         slices.Clone(cs.FencedInstances),
		Diverged:       slices.Clone(cs.DivergedInstances),
		FailingPrimary: cs.FailingPrimary,
	}
	if t := cs.CurrentPrimaryTimestamp; t != nil {
		st.CurrentPrimaryTimestamp = t.Time
	}
	if t := cs.TargetPrimaryTimestamp; t != nil {
		st.TargetPrimaryTimestamp = t.Time
	}
	if t := cs.PrimaryFailingSince; t != nil {
		st.PrimaryFailingSince = t.Time
	}
	if r := cs.PrimaryRestart; r != nil {
		st.PrimaryRestart, st.PrimaryRestartAt, st.PrimaryRestartPodUID = r.Instance, r.RequestedAt.Time, r.PodUID
	}
	st.SemiSyncFallenBack = s.SemiSync && cs.SemiSync != nil && !cs.SemiSync.Active
	if f := cs.FallbackCaughtUp; f != nil {
		if set, err := gtid.Parse(f.GTIDSet); err == nil {
			st.FallbackCaughtUp = &FallbackCaughtUp{FormerPrimary: f.FormerPrimary, FailingSince: f.FailingSince.Time,
				FellBackAt: f.FellBackAt.Time, GTIDSet: set}
		}
	}
	if a := cs.DataLossAccepted; a != nil {
		st.DataLossAccepted = &DataLossAcceptance{FormerPrimary: a.FormerPrimary, Instance: a.Instance,
			FailingSince: a.FailingSince.Time, AcceptedAt: a.AcceptedAt.Time, Promoted: a.PromotedAt != nil}
	}
	return s, st
}

// instance returns the observed instance called name; one that was not observed is returned
// with its name only (no Pod, not reachable) and false.
func (o *Observation) instance(name string) (Instance, bool) {
	for _, in := range o.Instances {
		if in.Name == name {
			return in, true
		}
	}
	return Instance{Name: name}, false
}

func (o *Observation) fenced(name string) bool   { return slices.Contains(o.Status.Fenced, name) }
func (o *Observation) diverged(name string) bool { return slices.Contains(o.Status.Diverged, name) }

// SeenReadOnly reports whether the instance answered in this reconcile with super_read_only on:
// it accepts no writes, and its gtid_executed no longer grows from clients.
func (in Instance) SeenReadOnly() bool { return in.Reachable && in.SuperReadOnly }

// SeenWritable reports whether the instance answered in this reconcile and accepts writes.
func (in Instance) SeenWritable() bool { return in.Reachable && !in.ReadOnly && !in.SuperReadOnly }

// History is every transaction the instance holds: executed, or retrieved into its relay log
// (it applies those before it is promoted).
func (in Instance) History() gtid.Set { return union(in.Executed, in.Retrieved) }

// Drained reports whether the instance has applied every transaction it retrieved.
func (in Instance) Drained() bool { return in.Executed.Contains(in.Retrieved) }

// union returns the transactions in a or b. gtid.Set has no union; the canonical forms of two
// sets, joined by a comma, parse to their union (go-mysql merges the intervals).
func union(a, b gtid.Set) gtid.Set {
	switch {
	case a.IsEmpty():
		return b
	case b.IsEmpty():
		return a
	}
	return gtid.MustParse(a.String() + "," + b.String())
}

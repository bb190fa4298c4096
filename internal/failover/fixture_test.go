package failover

import (
	"time"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
)

// The fixture: a healthy three-instance Cluster, c-1 primary, c-2 and c-3 replicas of it, all
// holding the same ten transactions, the Lease held and freshly renewed by c-1. Each table row
// changes what its rule is about.

var t0 = time.Date(2026, 11, 25, 1, 0, 0, 0, time.UTC)

const (
	srcA = "3e11fa47-71ca-11e1-9e33-c80aa9429562" // the cluster's writes
	srcB = "4f22ab58-82db-22f2-af44-d91bb9530673" // writes made somewhere they should not be
)

// a is a set of srcA transactions, b of srcB ones; set joins them.
func a(iv string) gtid.Set { return gtid.MustParse(srcA + ":" + iv) }
func b(iv string) gtid.Set { return gtid.MustParse(srcB + ":" + iv) }
func set(s ...gtid.Set) gtid.Set {
	out := gtid.Set{}
	for _, x := range s {
		out = union(out, x)
	}
	return out
}

func primaryInstance(name string, executed gtid.Set) Instance {
	return Instance{Name: name, PodExists: true, PodReady: true, Reachable: true, Role: v1.RolePrimary,
		Executed: executed, LabelRole: v1.RolePrimary, LabelRoutable: true}
}

func replicaInstance(name, source string, executed gtid.Set) Instance {
	return Instance{Name: name, PodExists: true, PodReady: true, Reachable: true, Role: v1.RoleReplica,
		ReadOnly: true, SuperReadOnly: true, Executed: executed, Retrieved: executed,
		Replication: &Replication{Source: source, IORunning: true, SQLRunning: true},
		LabelRole:   v1.RoleReplica, LabelRoutable: true}
}

func healthy() Observation {
	return Observation{
		Now: t0,
		Spec: Spec{Instances: 3, FailoverDelay: 30 * time.Second, MaxSwitchoverDelay: time.Minute,
			EnablePrimaryLease: true},
		Status: Status{CurrentPrimary: "c-1", TargetPrimary: "c-1", CurrentPrimaryTimestamp: t0.Add(-time.Hour),
			TargetPrimaryTimestamp: t0.Add(-time.Hour)},
		Lease: Lease{Exists: true, Holder: "c-1", RenewTime: t0.Add(-2 * time.Second), ObservedAt: t0.Add(-2 * time.Second), TTL: LeaseTTL},
		Instances: []Instance{
			primaryInstance("c-1", a("1-10")),
			replicaInstance("c-2", "c-1", a("1-10")),
			replicaInstance("c-3", "c-1", a("1-10")),
		},
	}
}

// change is one edit of the fixture.
type change func(o *Observation)

func build(changes ...change) Observation {
	o := healthy()
	for _, c := range changes {
		c(&o)
	}
	return o
}

// on edits the instance called name.
func on(name string, edit func(in *Instance)) change {
	return func(o *Observation) {
		for i := range o.Instances {
			if o.Instances[i].Name == name {
				if r := o.Instances[i].Replication; r != nil {
					copied := *r
					o.Instances[i].Replication = &copied
				}
				edit(&o.Instances[i])
				return
			}
		}
		panic("no instance " + name)
	}
}

func unreachable(in *Instance) {
	in.Reachable, in.PodReady = false, false
	in.Role, in.ReadOnly, in.SuperReadOnly, in.Replication, in.Executed, in.Retrieved = "", false, false, nil, gtid.Set{}, gtid.Set{}
}
func notReady(in *Instance)    { in.PodReady = false }
func podDeleting(in *Instance) { in.PodDeleting = true }
func noPod(in *Instance)       { unreachable(in); in.PodExists = false }
func readOnly(in *Instance)    { in.ReadOnly, in.SuperReadOnly = true, true }
func ioStopped(in *Instance)   { in.Replication.IORunning = false }
func executed(s gtid.Set) func(in *Instance) {
	return func(in *Instance) { in.Executed = s }
}
func retrieved(s gtid.Set) func(in *Instance) {
	return func(in *Instance) { in.Retrieved = s }
}
func history(s gtid.Set) func(in *Instance) {
	return func(in *Instance) { in.Executed, in.Retrieved = s, s }
}
func source(name string) func(in *Instance) {
	return func(in *Instance) { in.Replication.Source = name }
}

// failingSince: the operator recorded the current primary failing at t (primaryFailingSince and
// failingPrimary). A row that then changes the current primary models a failover that replaced it.
func failingSince(t time.Time) change {
	return func(o *Observation) {
		o.Status.PrimaryFailingSince, o.Status.FailingPrimary = t, o.Status.CurrentPrimary
	}
}

// failingPrimary names the instance recorded failing; "" is a status written by an operator that
// predates status.failingPrimary.
func failingPrimary(name string) change {
	return func(o *Observation) { o.Status.FailingPrimary = name }
}

// semiSyncOn: semi-synchronous replication is on with durability d, every replica a participant.
func semiSyncOn(d v1.DataDurability) change {
	return func(o *Observation) {
		o.Spec.SemiSync, o.Spec.SemiSyncTimeout, o.Spec.DataDurability = true, 10*time.Second, d
	}
}

// fallbackRecord: the Lease records that instance fell back to asynchronous replication at
// gtid_executed a:1-10, and whether semi-sync resumed since.
func fallbackRecord(instance string, resumed bool) change {
	return func(o *Observation) {
		o.Lease.Fallback = &FallbackRecord{Instance: instance, FellBackAt: t0.Add(-time.Minute), GTIDExecuted: a("1-10").String(),
			Resumed: resumed}
	}
}

// lossAccepted: a person accepted the loss of what former acknowledged alone, naming instance.
func lossAccepted(former, instance string) change {
	return func(o *Observation) {
		o.Status.DataLossAccepted = &DataLossAcceptance{FormerPrimary: former, Instance: instance, AcceptedAt: t0.Add(-time.Second),
			FailingSince: o.Status.PrimaryFailingSince}
	}
}

func failoverDelay(d time.Duration) change { return func(o *Observation) { o.Spec.FailoverDelay = d } }
func leaseOff(o *Observation)              { o.Spec.EnablePrimaryLease = false }

// leaseRenewed: the holder renewed at t and the operator saw it at once, their clocks agreeing.
func leaseRenewed(t time.Time) change {
	return func(o *Observation) { o.Lease.RenewTime, o.Lease.ObservedAt = t, t }
}

// leaseSeen: the operator first saw the Lease's current renewal at t, on its own clock.
func leaseSeen(t time.Time) change {
	return func(o *Observation) { o.Lease.ObservedAt = t }
}
func leaseHolder(name string) change { return func(o *Observation) { o.Lease.Holder = name } }
func noLease(o *Observation)         { o.Lease = Lease{} }
func fenced(names ...string) change {
	return func(o *Observation) { o.Status.Fenced = names }
}
func diverged(names ...string) change {
	return func(o *Observation) { o.Status.Diverged = names }
}
func target(name string, at time.Time) change {
	return func(o *Observation) { o.Status.TargetPrimary, o.Status.TargetPrimaryTimestamp = name, at }
}
func current(name string, at time.Time) change {
	return func(o *Observation) { o.Status.CurrentPrimary, o.Status.CurrentPrimaryTimestamp = name, at }
}

// primaryLost: c-1 is gone (no Pod, nothing answers) since 1 min, its Lease last renewed then,
// and the replicas' IO threads have already been stopped: the failover is at its last steps.
func primaryLost(o *Observation) {
	failingSince(t0.Add(-time.Minute))(o)
	on("c-1", noPod)(o)
	leaseRenewed(t0.Add(-time.Minute))(o)
	on("c-2", ioStopped)(o)
	on("c-3", ioStopped)(o)
}

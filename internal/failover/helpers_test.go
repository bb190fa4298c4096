package failover

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
)

func TestLeaseTiming(t *testing.T) {
	if !(LeaseRenewInterval*2 <= LeaseSelfFenceAfter && LeaseSelfFenceAfter < LeaseTTL) {
		t.Fatalf("a holder must get a second renewal attempt before it self-fences, and self-fence before the TTL: renew %s, self-fence %s, TTL %s",
			LeaseRenewInterval, LeaseSelfFenceAfter, LeaseTTL)
	}
	if LeaseSelfFenceMargin < 5*time.Second {
		t.Errorf("the self-fence margin %s leaves too little for turning read-only and clock skew", LeaseSelfFenceMargin)
	}
	held := Lease{Exists: true, Holder: "c-1", RenewTime: t0, ObservedAt: t0, TTL: 15 * time.Second}
	// The holder's clock runs 10 s behind the operator's: it renewed at what the operator calls
	// t0, writing t0-10s; the operator saw that renewal at t0.
	behind := Lease{Exists: true, Holder: "c-1", RenewTime: t0.Add(-10 * time.Second), ObservedAt: t0, TTL: LeaseTTL}
	// The holder's clock runs ahead by the allowed skew: it writes t0+skew for a renewal the
	// operator sees at t0.
	ahead := Lease{Exists: true, Holder: "c-1", RenewTime: t0.Add(LeaseMaxClockSkew), ObservedAt: t0, TTL: LeaseTTL}
	// aheadBy is a Lease whose renewTime is d ahead of the operator's sighting at t0.
	aheadBy := func(d time.Duration) Lease {
		return Lease{Exists: true, Holder: "c-1", RenewTime: t0.Add(d), ObservedAt: t0, TTL: LeaseTTL}
	}
	for _, tc := range []struct {
		name    string
		lease   Lease
		now     time.Time
		expired bool
	}{
		{"a Lease renewed within its TTL is live", held, t0.Add(14 * time.Second), false},
		{"a Lease expires exactly TTL after its last renewal", held, t0.Add(15 * time.Second), true},
		{"a Lease past its TTL is expired", held, t0.Add(time.Minute), true},
		{"a missing Lease protects nobody", Lease{}, t0, true},
		{"a Lease without a holder protects nobody", Lease{Exists: true, RenewTime: t0, TTL: time.Minute}, t0, true},
		{"a Lease without a TTL counts LeaseTTL", Lease{Exists: true, Holder: "c-1", RenewTime: t0, ObservedAt: t0}, t0.Add(LeaseTTL - time.Millisecond), false},
		{"clock skew, holder behind: the Lease is live for its TTL from when the operator saw the renewal, not from renewTime", behind, t0.Add(LeaseTTL - time.Millisecond), false},
		{"clock skew, holder behind: it expires TTL after the operator saw the renewal", behind, t0.Add(LeaseTTL), true},
		{"clock skew, holder ahead within the allowed skew: the Lease is live until TTL after its renewTime", ahead, t0.Add(LeaseTTL + LeaseMaxClockSkew - time.Millisecond), false},
		{"clock skew, holder ahead within the allowed skew: it expires TTL after its renewTime", ahead, t0.Add(LeaseTTL + LeaseMaxClockSkew), true},
		{"renewTime in the future beyond the allowed skew counts as observed", aheadBy(LeaseMaxClockSkew + time.Millisecond), t0.Add(LeaseTTL), true},
		{"renewTime in the future beyond the allowed skew still holds for the TTL from the sighting", aheadBy(LeaseMaxClockSkew + time.Millisecond), t0.Add(LeaseTTL - time.Millisecond), false},
		{"renewTime a year ahead (a broken clock, a forged write) does not delay a failover past the TTL from the sighting", aheadBy(365 * 24 * time.Hour), t0.Add(LeaseTTL), true},
		{"an unobserved Lease is never taken as expired", Lease{Exists: true, Holder: "c-1", RenewTime: t0.Add(-time.Hour), TTL: LeaseTTL}, t0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := LeaseExpired(tc.lease, tc.now); got != tc.expired {
				t.Errorf("LeaseExpired = %v, want %v", got, tc.expired)
			}
		})
	}
	t.Run("lease observer: expiry counts from the operator's first sight of each renewal, and again after a restart", func(t *testing.T) {
		var obs LeaseObserver
		l := Lease{Exists: true, Holder: "c-1", RenewTime: t0.Add(-time.Hour), TTL: LeaseTTL}
		if got := obs.Observe("ns/db-primary", l, t0).ObservedAt; !got.Equal(t0) {
			t.Fatalf("first sight: ObservedAt %v, want %v", got, t0)
		}
		if got := obs.Observe("ns/db-primary", l, t0.Add(5*time.Second)).ObservedAt; !got.Equal(t0) {
			t.Errorf("unchanged Lease: ObservedAt %v, want the first sight %v", got, t0)
		}
		if LeaseExpired(obs.Observe("ns/db-primary", l, t0.Add(LeaseTTL-time.Millisecond)), t0.Add(LeaseTTL-time.Millisecond)) {
			t.Error("a renewTime an hour old (holder's clock behind) expired the Lease before the operator saw it unchanged for its TTL")
		}
		if !LeaseExpired(obs.Observe("ns/db-primary", l, t0.Add(LeaseTTL)), t0.Add(LeaseTTL)) {
			t.Error("a Lease seen unchanged for its TTL is not expired")
		}
		renewed := l
		renewed.RenewTime = t0.Add(-time.Hour + 5*time.Second)
		if got := obs.Observe("ns/db-primary", renewed, t0.Add(20*time.Second)).ObservedAt; !got.Equal(t0.Add(20 * time.Second)) {
			t.Errorf("a renewal: ObservedAt %v, want the time it was seen", got)
		}
		moved := renewed
		moved.Holder = "c-2"
		if got := obs.Observe("ns/db-primary", moved, t0.Add(21*time.Second)).ObservedAt; !got.Equal(t0.Add(21 * time.Second)) {
			t.Errorf("a new holder: ObservedAt %v, want the time it was seen", got)
		}
		if last, ok := obs.Last("ns/db-primary"); !ok || last.Holder != "c-2" || !last.ObservedAt.Equal(t0.Add(21*time.Second)) {
			t.Errorf("Last = %+v, %v; want the last observation without reading again", last, ok)
		}
		obs.Observe("ns/db-primary", Lease{}, t0.Add(22*time.Second))
		if _, ok := obs.Last("ns/db-primary"); ok {
			t.Error("Last after a read found no Lease: want none")
		}
		var restarted LeaseObserver
		if got := restarted.Observe("ns/db-primary", moved, t0.Add(30*time.Second)).ObservedAt; !got.Equal(t0.Add(30 * time.Second)) {
			t.Errorf("after an operator restart: ObservedAt %v, want the restarted operator's first sight", got)
		}
	})
	t.Run("a Lease live for its own holder does not hold it back", func(t *testing.T) {
		if LeaseLiveFor(held, "c-1", t0) || !LeaseLiveFor(held, "c-2", t0) {
			t.Error("LeaseLiveFor must hold back everyone but the holder")
		}
	})
}

func TestRoleLabels(t *testing.T) {
	for _, tc := range []struct {
		name    string
		changes []change
		want    map[string]Labels
	}{
		{"role labels: the current primary is primary, the others replicas, all routable",
			nil,
			map[string]Labels{"c-1": {"c-1", v1.RolePrimary, true}, "c-2": {"c-2", v1.RoleReplica, true}, "c-3": {"c-3", v1.RoleReplica, true}}},
		{"role labels: the target of a primary change stays a replica until it records itself",
			[]change{target("c-2", t0)},
			map[string]Labels{"c-1": {"c-1", v1.RolePrimary, true}, "c-2": {"c-2", v1.RoleReplica, true}}},
		{"role labels: only status.currentPrimary is primary, even if another instance reports writable",
			[]change{on("c-3", func(in *Instance) { in.Role, in.ReadOnly, in.SuperReadOnly = v1.RolePrimary, false, false })},
			map[string]Labels{"c-1": {"c-1", v1.RolePrimary, true}, "c-3": {"c-3", v1.RoleReplica, true}}},
		{"role labels: fenced and diverged instances are not routable",
			[]change{fenced("c-2"), diverged("c-3")},
			map[string]Labels{"c-2": {"c-2", v1.RoleReplica, false}, "c-3": {"c-3", v1.RoleReplica, false}}},
		{"role labels: a fenced primary keeps its role and leaves routing",
			[]change{fenced("c-1")},
			map[string]Labels{"c-1": {"c-1", v1.RolePrimary, false}}},
		{"role labels: a replica whose primary is gone stays routable (stale reads)",
			[]change{on("c-1", noPod), on("c-2", ioStopped), on("c-2", func(in *Instance) { in.Replication.IOLastError = "cannot connect" })},
			map[string]Labels{"c-2": {"c-2", v1.RoleReplica, true}}},
		{"role labels: a broken replica (SQL thread failed) leaves routing",
			[]change{on("c-2", func(in *Instance) { in.Replication.SQLLastError = "Error 1062" })},
			map[string]Labels{"c-2": {"c-2", v1.RoleReplica, false}}},
		{"role labels: a replica that did not answer keeps its routable label",
			[]change{on("c-2", unreachable), on("c-3", unreachable), on("c-3", func(in *Instance) { in.LabelRoutable = false })},
			map[string]Labels{"c-2": {"c-2", v1.RoleReplica, true}, "c-3": {"c-3", v1.RoleReplica, false}}},
		{"role labels: a Pod being deleted is not routable",
			[]change{on("c-1", podDeleting)},
			map[string]Labels{"c-1": {"c-1", v1.RolePrimary, false}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string]Labels{}
			primaries := 0
			for _, l := range RoleLabels(build(tc.changes...)) {
				got[l.Instance] = l
				if l.Role == v1.RolePrimary {
					primaries++
				}
			}
			if primaries != 1 {
				t.Errorf("%d instances labelled primary, want 1", primaries)
			}
			for name, w := range tc.want {
				if got[name] != w {
					t.Errorf("%s: got %+v, want %+v", name, got[name], w)
				}
			}
		})
	}
}

func TestCheckRejoin(t *testing.T) {
	for _, tc := range []struct {
		name                        string
		executed, primary, received gtid.Set
		diverged                    bool
		errant                      gtid.Set
	}{
		{"divergence: a former primary contained in the new primary's set rejoins",
			a("1-10"), a("1-12"), gtid.Set{}, false, gtid.Set{}},
		{"divergence: a former primary with the same set rejoins",
			a("1-12"), a("1-12"), gtid.Set{}, false, gtid.Set{}},
		{"divergence: a former primary with transactions the new primary never had is diverged",
			a("1-13"), a("1-12"), gtid.Set{}, true, a("13")},
		{"divergence: writes of another source the new primary lacks are errant",
			set(a("1-10"), b("1-2")), a("1-12"), gtid.Set{}, true, b("1-2")},
		{"divergence: what the channel received from the primary is not errant",
			a("1-13"), a("1-12"), a("1-13"), false, gtid.Set{}},
		{"divergence: an empty former primary rejoins",
			gtid.Set{}, a("1-12"), gtid.Set{}, false, gtid.Set{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := CheckRejoin(tc.executed, tc.primary, tc.received)
			if got.Diverged != tc.diverged || !got.Errant.Equal(tc.errant) {
				t.Errorf("CheckRejoin = %v %s, want %v %s", got.Diverged, got.Errant, tc.diverged, tc.errant)
			}
		})
	}
}

func TestSelectCandidate(t *testing.T) {
	o := build(primaryLost, on("c-2", history(a("1-11"))), on("c-3", func(in *Instance) {
		in.Executed, in.Retrieved = a("1-10"), a("1-13")
	}))
	cand, why, ok := o.SelectCandidate("c-1")
	if !ok || cand.Name != "c-3" {
		t.Fatalf("SelectCandidate = %s %q %v, want c-3: its relay log holds the most", cand.Name, why, ok)
	}
	o.Status.Fenced = []string{"c-3"}
	if _, why, ok := o.SelectCandidate("c-1"); ok || !strings.Contains(why, "c-3 holds transactions the best eligible replica c-2 lacks") {
		t.Errorf("a fenced replica holding more must block, got %q %v", why, ok)
	}
	// A semi-sync participant that did not answer may hold acknowledged writes the candidate
	// lacks: no promotion until it answers, whether its Pod runs or is gone (TestUnseenParticipant).
	o = build(primaryLost, semiSyncOn(v1.DataDurabilityPreferred), on("c-3", noPod))
	if _, why, ok := o.SelectCandidate("c-1"); ok || !strings.Contains(why, "participant c-3 did not answer (it has no Pod)") {
		t.Errorf("a participant whose Pod is gone must block, got %q %v", why, ok)
	}
	o = build(primaryLost, on("c-3", unreachable))
	if cand, why, ok := o.SelectCandidate("c-1"); !ok || cand.Name != "c-2" {
		t.Errorf("without semi-sync a replica that did not answer does not block, got %s %q %v", cand.Name, why, ok)
	}
}

func TestConditions(t *testing.T) {
	semiSync := func(active bool, wait time.Duration) change {
		return func(o *Observation) {
			o.Spec.SemiSync, o.Spec.SemiSyncTimeout = true, time.Second
			on("c-1", func(in *Instance) { in.SemiSync = &SemiSync{Active: active, LongestAckWait: wait} })(o)
		}
	}
	for _, tc := range []struct {
		name    string
		changes []change
		want    map[string]string // condition type -> reason; "" means no opinion
	}{
		{"conditions: a healthy cluster gets no opinion",
			nil, map[string]string{v1.ConditionReady: "", v1.ConditionProgressing: "", v1.ConditionDegraded: ""}},
		{"conditions: a failing primary makes the Cluster not ready and degraded, a failover progressing",
			[]change{on("c-1", unreachable), failingSince(t0.Add(-10 * time.Second))},
			map[string]string{v1.ConditionReady: ReasonPrimaryUnavailable, v1.ConditionProgressing: ReasonFailoverInProgress, v1.ConditionDegraded: ReasonPrimaryFailing}},
		{"conditions: a blocked failover is degraded",
			[]change{primaryLost, on("c-2", notReady), on("c-3", notReady)},
			map[string]string{v1.ConditionProgressing: "", v1.ConditionDegraded: ReasonFailoverBlocked}},
		{"conditions: a failover blocked by a fallback under required is degraded for that reason",
			[]change{primaryLost, semiSyncOn(v1.DataDurabilityRequired), fallbackRecord("c-1", false)},
			map[string]string{v1.ConditionProgressing: "", v1.ConditionDegraded: ReasonAcknowledgedWritesOnPrimaryOnly}},
		{"conditions: several writable instances are degraded",
			[]change{on("c-2", func(in *Instance) { in.ReadOnly, in.SuperReadOnly = false, false })},
			map[string]string{v1.ConditionDegraded: ReasonSplitBrain}},
		{"conditions: a switchover is progressing",
			[]change{target("c-2", t0)},
			map[string]string{v1.ConditionProgressing: ReasonSwitchoverInProgress, v1.ConditionDegraded: ""}},
		{"conditions: an aborted switchover is degraded",
			[]change{target("c-2", t0), fenced("c-2")},
			map[string]string{v1.ConditionDegraded: ReasonSwitchoverBlocked}},
		{"conditions: semi-sync fallen back to async is degraded",
			[]change{semiSync(false, 0)},
			map[string]string{v1.ConditionDegraded: ReasonSemiSyncAsync}},
		{"conditions: commits waiting on acknowledgements longer than the timeout are degraded",
			[]change{semiSync(true, 3*time.Second)},
			map[string]string{v1.ConditionDegraded: ReasonSemiSyncAckWait}},
		{"conditions: commits acknowledged within the timeout are not degraded",
			[]change{semiSync(true, 500*time.Millisecond)},
			map[string]string{v1.ConditionDegraded: ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := build(tc.changes...)
			got := map[string]metav1.Condition{}
			for _, c := range Conditions(o, Decide(o)) {
				got[c.Type] = c
			}
			for typ, reason := range tc.want {
				c, ok := got[typ]
				if reason == "" && ok {
					t.Errorf("%s: unexpected %s (%s)", typ, c.Reason, c.Message)
				}
				if reason != "" && (!ok || c.Reason != reason || c.Message == "") {
					t.Errorf("%s: got %q %q, want reason %s", typ, c.Reason, c.Message, reason)
				}
			}
		})
	}
}

func TestEventFor(t *testing.T) {
	for _, tc := range []struct {
		name    string
		changes []change
		typ     string
		reason  string
	}{
		{"events: the primary failing is a warning", []change{on("c-1", unreachable)}, corev1.EventTypeWarning, EventPrimaryFailing},
		{"events: stopping the IO threads starts the failover", []change{on("c-1", unreachable), failingSince(t0.Add(-time.Minute))}, corev1.EventTypeNormal, EventFailoverStarted},
		{"events: a blocked failover is a warning", []change{primaryLost, on("c-2", notReady), on("c-3", notReady)}, corev1.EventTypeWarning, EventFailoverBlocked},
		{"events: promoting with semi-sync fallen back is a warning", []change{primaryLost, func(o *Observation) { o.Status.SemiSyncFallenBack = true }}, corev1.EventTypeWarning, EventFailoverPromoting},
		{"events: demoting starts the switchover", []change{target("c-2", t0)}, corev1.EventTypeNormal, EventSwitchoverStarted},
		{"events: an aborted switchover is a warning", []change{target("c-9", t0)}, corev1.EventTypeWarning, EventSwitchoverBlocked},
		{"events: a completed failover", []change{failingSince(t0.Add(-time.Minute)), failingPrimary("c-2"), current("c-1", t0)}, corev1.EventTypeNormal, EventFailoverCompleted},
		{"events: a failover seen only at its end, within the second of the failure, is completed, not recovered",
			[]change{primaryLost, current("c-2", t0.Add(-time.Minute)), target("c-2", t0.Add(-time.Minute)),
				on("c-2", func(in *Instance) { *in = primaryInstance("c-2", a("1-10")) }), on("c-3", source("c-2")),
				on("c-3", func(in *Instance) { in.Replication.IORunning = true }), on("c-1", func(in *Instance) { *in = replicaInstance("c-1", "c-2", a("1-10")) })},
			corev1.EventTypeNormal, EventFailoverCompleted},
		{"events: a failover whose new primary's clock runs behind the operator's is completed, not recovered",
			[]change{primaryLost, current("c-2", t0.Add(-2*time.Minute)), target("c-2", t0.Add(-time.Minute)),
				on("c-2", func(in *Instance) { *in = primaryInstance("c-2", a("1-10")) }), on("c-3", source("c-2")),
				on("c-3", func(in *Instance) { in.Replication.IORunning = true })},
			corev1.EventTypeNormal, EventFailoverCompleted},
		{"events: the same primary healthy again", []change{failingSince(t0.Add(-10 * time.Second))}, corev1.EventTypeNormal, EventPrimaryRecovered},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := build(tc.changes...)
			d := Decide(o)
			e, ok := EventFor(o, d)
			if !ok || e.Type != tc.typ || e.Reason != tc.reason || e.Message == "" {
				t.Errorf("EventFor(%s/%s) = %+v %v, want %s %s", d.Kind, d.Step, e, ok, tc.typ, tc.reason)
			}
		})
	}
	if _, ok := EventFor(healthy(), Decide(healthy())); ok {
		t.Error("nothing to do records no Event")
	}
}

func TestObserveCluster(t *testing.T) {
	now := metav1.NewTime(t0)
	c := &v1.Cluster{
		Spec: v1.ClusterSpec{Instances: 3, FailoverDelay: 5, MaxSwitchoverDelay: 0, EnablePrimaryLease: ptr.To(false),
			MySQL: v1.MySQLConfiguration{SemiSync: &v1.SemiSyncConfiguration{Enabled: true, TimeoutMillis: 1500,
				DataDurability: v1.DataDurabilityRequired}}},
		Status: v1.ClusterStatus{CurrentPrimary: "c-1", TargetPrimary: "c-2", TargetPrimaryTimestamp: &now,
			PrimaryFailingSince: &now, FencedInstances: []string{"c-3"}, SemiSync: &v1.SemiSyncStatus{Active: false}},
	}
	spec, st := ObserveCluster(c)
	if spec.FailoverDelay != 5*time.Second || spec.MaxSwitchoverDelay != time.Hour || spec.EnablePrimaryLease ||
		!spec.SemiSync || spec.SemiSyncTimeout != 1500*time.Millisecond || spec.DataDurability != v1.DataDurabilityRequired {
		t.Errorf("spec = %+v", spec)
	}
	if st.CurrentPrimary != "c-1" || st.TargetPrimary != "c-2" || !st.TargetPrimaryTimestamp.Equal(t0) ||
		!st.PrimaryFailingSince.Equal(t0) || !st.CurrentPrimaryTimestamp.IsZero() || len(st.Fenced) != 1 || !st.SemiSyncFallenBack {
		t.Errorf("status = %+v", st)
	}
	c.Spec.EnablePrimaryLease = nil
	if spec, _ := ObserveCluster(c); !spec.EnablePrimaryLease {
		t.Error("an unset enablePrimaryLease is on, as the API defaults it")
	}
}

func TestLeaseHolder(t *testing.T) {
	for _, tc := range []struct {
		rule     string
		identity string
		want     LeaseHolder
	}{
		{"the instance and its Pod's UID", "db-1/6d3c1f0e-8a1b-4c59-9d0e-2f7a4b5c6d7e",
			LeaseHolder{Instance: "db-1", PodUID: "6d3c1f0e-8a1b-4c59-9d0e-2f7a4b5c6d7e"}},
		{"an older instance manager's Lease names the instance alone", "db-1", LeaseHolder{Instance: "db-1"}},
		{"no identity is no holder", "", LeaseHolder{}},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			got := ParseLeaseHolder(tc.identity)
			if got != tc.want {
				t.Errorf("ParseLeaseHolder(%q) = %+v, want %+v", tc.identity, got, tc.want)
			}
			if back := got.Identity(); back != tc.identity {
				t.Errorf("Identity() = %q, want the identity it was parsed from, %q", back, tc.identity)
			}
		})
	}
}

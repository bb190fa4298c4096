package semisync

import (
	"cmp"
	"slices"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/failover"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
)

// defaultTimeout applies when the spec leaves timeoutMillis unset (the CRD defaults it).
const defaultTimeout = 10 * time.Second

// RequiredMinFallback is the shortest FallbackAfter under dataDurability required, whatever
// timeoutMillis says: the primary Lease's TTL. A primary cut off from its replicas and the API
// server still holds a "fresh" Lease for up to failover.LeaseSelfFenceAfter after its last
// renewal; a commit that started waiting at the cut has waited less than the TTL when that
// margin ends and the primary self-fences, so it is never released to be acknowledged by the
// primary alone before a failover may promote a replica that lacks it. A fallback under required
// therefore happens only when the replicas stopped acknowledging while the primary kept
// renewing (replicas down, not the primary cut off).
const RequiredMinFallback = failover.LeaseTTL

// ReplicaHealth is what the plan needs to know of one replica: healthy means it is connected to
// the primary, both replication threads run without error, and it can acknowledge. The other
// fields rank the replicas that are not healthy yet (right after a failover none is: the
// failover stopped their receivers and the old primary's Pod is being recreated), so that the
// participants are the replicas that will acknowledge soonest.
type ReplicaHealth struct {
	Name    string
	Healthy bool
	// Answers: the replica reported its status as a replica that has its data (bootstrap over)
	// and is neither fenced nor diverged. One that does not answer (the old primary being
	// fenced or recreated, a replica cut off) cannot start acknowledging when told.
	Answers bool
	// FollowsPrimary: the replica's replication source is the current primary, its receiver
	// perhaps still connecting.
	FollowsPrimary bool
	// Acknowledging: the replica reports rpl_semi_sync_replica_enabled ON.
	Acknowledging bool
	// Leaving: the replica's Pod is about to be deleted (a rolling update replaces it), so it is
	// chosen only when no replica that answers is left: its acknowledgements are handed over
	// before it goes, and commits do not wait for a replica that is restarting.
	Leaving bool
}

// readiness ranks a replica as a participant, lower first: healthy; healthy but leaving (a
// replica that is not healthy yet cannot take its acknowledgements over: the rolling update waits
// for it instead); answering and already replicating from the current primary; answering and
// acknowledging (it keeps the role it has once its receiver follows the new primary); answering;
// leaving; not answering.
func (r ReplicaHealth) readiness() int {
	switch {
	case r.Healthy && r.Leaving:
		return 1
	case r.Healthy:
		return 0
	case r.Leaving && r.Answers:
		return 5
	case r.Answers && r.FollowsPrimary:
		return 2
	case r.Answers && r.Acknowledging:
		return 3
	case r.Answers:
		return 4
	default:
		return 6
	}
}

// HealthOf derives a replica's health from its server's status: it replicates, both threads run,
// and neither reports an error.
func HealthOf(name string, st *mysql.Status) ReplicaHealth {
	return ReplicaHealth{Name: name, Healthy: st != nil && st.Replication != nil && st.Replication.Healthy()}
}

// Plan is the runtime semi-sync configuration of the whole cluster at one moment.
type Plan struct {
	// Enabled is spec.mysql.semiSync.enabled: the primary waits for acknowledgements.
	Enabled bool
	// WaitForReplicaCount is applied as rpl_semi_sync_source_wait_for_replica_count.
	WaitForReplicaCount int
	// FallbackAfter is timeoutMillis, raised to RequiredMinFallback under required: how long the
	// oldest waiting commit may wait before the primary's instance manager falls back
	// (DecideFallback). mysqld's own timeout is always mysql.SourceTimeoutNever.
	FallbackAfter time.Duration
	// Participants are the replicas that acknowledge (rpl_semi_sync_replica_enabled), at most
	// maxSyncReplicas of them, healthy ones first, then those that will acknowledge soonest
	// (participants).
	Participants []string
	// Lowered is true when preferred durability lowered the count below minSyncReplicas because
	// too few replicas are healthy: acknowledged writes then reach fewer replicas than asked.
	Lowered bool
	// Short is true when fewer healthy participants than WaitForReplicaCount exist: commits will
	// wait FallbackAfter and the primary's instance manager will fall back to asynchronous
	// replication (required durability with replicas down), while it holds a fresh Lease.
	Short bool
}

// PlanFor computes the plan from the spec and the replicas' health. With preferred durability
// the acknowledgement count follows the healthy participants, never below one and never above
// minSyncReplicas, so it rises back as replicas recover; with required it stays at
// minSyncReplicas whatever their health.
func PlanFor(spec *v1alpha1.ClusterSpec, replicas []ReplicaHealth) Plan {
	cfg := spec.MySQL.SemiSync
	plan := Plan{WaitForReplicaCount: 1, FallbackAfter: defaultTimeout}
	if cfg != nil && cfg.TimeoutMillis > 0 {
		plan.FallbackAfter = time.Duration(cfg.TimeoutMillis) * time.Millisecond
	}
	if cfg == nil || !cfg.Enabled {
		return plan
	}
	plan.Enabled = true
	want := max(int(spec.MinSyncReplicas), 1)
	limit := max(int(spec.MaxSyncReplicas), want)
	plan.Participants = participants(replicas, limit)
	healthy := 0
	for _, r := range replicas {
		if r.Healthy && slices.Contains(plan.Participants, r.Name) {
			healthy++
		}
	}
	plan.WaitForReplicaCount = want
	if cfg.DataDurability == v1alpha1.DataDurabilityRequired {
		plan.FallbackAfter = max(plan.FallbackAfter, RequiredMinFallback)
	}
	if cfg.DataDurability != v1alpha1.DataDurabilityRequired && healthy < want {
		plan.WaitForReplicaCount = max(healthy, 1)
		plan.Lowered = true
	}
	plan.Short = healthy < plan.WaitForReplicaCount
	return plan
}

// participants picks up to limit replicas by readiness (healthy ones first, then those that
// will acknowledge soonest; ReplicaHealth.readiness), the replicas already acknowledging first
// within a rank so that a participant is not replaced by an equal one, then in name order, so
// that the choice does not depend on the order of the input.
func participants(replicas []ReplicaHealth, limit int) []string {
	sorted := slices.Clone(replicas)
	slices.SortFunc(sorted, func(a, b ReplicaHealth) int {
		if c := cmp.Compare(a.readiness(), b.readiness()); c != 0 {
			return c
		}
		if a.Acknowledging != b.Acknowledging {
			if a.Acknowledging {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.Name, b.Name)
	})
	var out []string
	for _, r := range sorted {
		if len(out) == limit {
			break
		}
		out = append(out, r.Name)
	}
	slices.Sort(out)
	return out
}

// SettingsFor returns the variables one instance applies: the primary waits for
// acknowledgements, participating replicas send them; mysqld never times a wait out.
func (p Plan) SettingsFor(instance string, primary bool) mysql.SemiSyncSettings {
	return mysql.SemiSyncSettings{
		SourceEnabled:       p.Enabled && primary,
		ReplicaEnabled:      p.Enabled && !primary && slices.Contains(p.Participants, instance),
		WaitForReplicaCount: p.WaitForReplicaCount,
		Timeout:             mysql.SourceTimeoutNever,
	}
}

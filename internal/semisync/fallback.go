package semisync

import (
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// AckWaitResolution is how coarse LongestAckWait is: the processlist counts a wait as the
// difference of two wall-clock seconds, so a wait shown as k seconds lasted more than k-1. A
// commit counts as having waited FallbackAfter only once it shows FallbackAfter plus this.
const AckWaitResolution = time.Second

// ProbeWait is how long a commit may wait after semi-sync was turned back on following a
// fallback and before any commit has been acknowledged since: the re-enable is a probe. A replica
// whose connection died silently (a partition that drops packets) still looks connected and caught
// up on the primary, its dump thread having written into the socket's buffer, so the probe may be
// wrong; the fallback record stays at risk until a commit is acknowledged, so releasing the
// probe's waiting commits early acknowledges nothing a failover could lose unknowingly.
const ProbeWait = time.Second

// ReenableBackoffMin and ReenableBackoffMax bound how long the source side stays off after a
// probe that no replica acknowledged; the wait doubles with each failed probe and starts over once
// a commit is acknowledged.
const (
	ReenableBackoffMin = 5 * time.Second
	ReenableBackoffMax = time.Minute
)

// NextReenableBackoff is the wait after a failed probe, given the wait before it (0 for the first).
func NextReenableBackoff(prev time.Duration) time.Duration {
	return min(max(2*prev, ReenableBackoffMin), ReenableBackoffMax)
}

// FallbackInput is what the primary's instance manager knows when it decides whether to release
// the commits that wait for acknowledgements, or to turn semi-sync back on. mysqld never times a
// wait out itself (mysql.SourceTimeoutNever): this decision is the only way a waiting commit
// completes without its acknowledgements.
type FallbackInput struct {
	// Enabled is spec.mysql.semiSync.enabled; Durability its dataDurability; FallbackAfter its
	// timeoutMillis (Plan.FallbackAfter).
	Enabled       bool
	Durability    v1alpha1.DataDurability
	FallbackAfter time.Duration
	// Primary: this server is the writable primary.
	Primary bool
	// FallenBack: this instance manager switched the source side off (and has not turned it
	// back on since): the source side is off because of a fallback, not because of the spec.
	FallenBack bool
	// LeaseFresh: the primary Lease is held and was renewed within the self-fence margin (it
	// would not make this instance self-fence now), or the Lease is disabled in the spec.
	LeaseFresh bool
	// The source side as read from the server: rpl_semi_sync_source_enabled, its
	// wait_for_replica_count, the connected semi-sync replicas (Rpl_semi_sync_source_clients),
	// the sessions waiting for an acknowledgement and how long the oldest has waited, the dump
	// threads and those that have sent everything.
	SourceEnabled       bool
	SourceActive        bool // Rpl_semi_sync_source_status
	WaitForReplicaCount int
	Clients             int
	AckWaiters          int
	LongestAckWait      time.Duration
	Dumps               int
	CaughtUpDumps       int
	// Probing: this manager turned the source side back on after a fallback and no commit has
	// been acknowledged since (ProbeWait applies). Now and ReenableAfter: after a failed probe,
	// the source side is not turned back on before ReenableAfter.
	Probing            bool
	Now, ReenableAfter time.Time
}

// FallbackAction is what DecideFallback asks for.
type FallbackAction int

const (
	// FallbackNone: nothing to do.
	FallbackNone FallbackAction = iota
	// FallbackRelease: switch the source side off (rpl_semi_sync_source_enabled = OFF): every
	// waiting commit completes without acknowledgement, and later ones do not wait.
	FallbackRelease
	// FallbackLowerCount: set rpl_semi_sync_source_wait_for_replica_count to Count, the
	// semi-sync replicas connected now (preferred durability only).
	FallbackLowerCount
	// FallbackReenable: switch the source side back on; a participating replica is connected
	// and has received everything.
	FallbackReenable
	// FallbackForget: the fallback no longer applies (not the primary any more, or semi-sync
	// turned off in the spec): forget it, without touching the server.
	FallbackForget
)

var fallbackActionNames = [...]string{"none", "release", "lower-count", "reenable", "forget"}

func (a FallbackAction) String() string { return fallbackActionNames[a] }

// FallbackDecision is DecideFallback's answer.
type FallbackDecision struct {
	Action FallbackAction
	// Count is the new acknowledgement count of FallbackLowerCount.
	Count  int
	Reason string
}

// DecideFallback decides whether the primary's instance manager falls back now, lowers the
// acknowledgement count (preferred), turns semi-sync back on, or does nothing. The rules:
//
//   - A waiting commit is released only once the oldest has surely waited at least FallbackAfter
//     (LongestAckWait at least FallbackAfter plus AckWaitResolution), and
//     only while the Lease is fresh: a primary that may be about to self-fence (or that another
//     instance may replace) never acknowledges a commit no replica has. Its commits keep waiting;
//     the self-fence ends their sessions, so none is acknowledged to its client.
//   - Under required the release is the source side switched off. Under preferred, when some
//     semi-sync replicas are connected but fewer than the count, the count is first lowered to
//     those connected; when none is, or the count is already at most those connected, the
//     source side is switched off.
//   - After a fallback the source side is turned back on once enough semi-sync replicas are
//     connected (the count under required, one under preferred) and, counting every dump thread
//     that is not a semi-sync one as caught up, at least as many have sent everything.
//   - That re-enable is a probe until a commit is acknowledged: a commit that waits ProbeWait
//     releases it again (under required too: the fallback record is still at risk), and the next
//     re-enable waits ReenableAfter (NextReenableBackoff), so that a replica cut off without its
//     connection closing costs the writes a second now and then, not timeoutMillis in turn.
func DecideFallback(in FallbackInput) FallbackDecision {
	switch {
	case !in.Enabled && in.FallenBack:
		return FallbackDecision{Action: FallbackForget, Reason: "semi-sync is disabled in the spec"}
	case !in.Enabled:
		return FallbackDecision{Reason: "semi-sync is disabled in the spec"}
	case !in.Primary && in.FallenBack:
		return FallbackDecision{Action: FallbackForget, Reason: "not the primary"}
	case !in.Primary:
		return FallbackDecision{Reason: "not the primary"}
	case in.FallenBack && in.SourceEnabled:
		// Turned on by someone else meanwhile (a new promotion's settings): waits resume.
		return FallbackDecision{Action: FallbackForget, Reason: "the source side is on again"}
	case in.FallenBack:
		return decideReenable(in)
	case !in.SourceEnabled:
		return FallbackDecision{Reason: "the source side is off and this manager did not fall back: the role pass turns it on"}
	case in.Probing && in.AckWaiters > 0 && in.LongestAckWait >= min(ProbeWait, in.FallbackAfter)+AckWaitResolution && in.LeaseFresh:
		if in.Durability != v1alpha1.DataDurabilityRequired && in.Clients >= 1 && in.Clients < in.WaitForReplicaCount {
			// Re-enabled with fewer replicas than the count (one suffices under preferred): the
			// count comes down to them rather than the source side going off again.
			return FallbackDecision{Action: FallbackLowerCount, Count: in.Clients,
				Reason: "preferred: semi-sync was turned back on after a fallback with fewer semi-sync replicas connected than the count"}
		}
		return FallbackDecision{Action: FallbackRelease,
			Reason: "semi-sync was turned back on after a fallback and no replica has acknowledged a commit since: the probe failed"}
	case in.AckWaiters == 0 || in.LongestAckWait < in.FallbackAfter+AckWaitResolution:
		return FallbackDecision{Reason: "no commit has waited timeoutMillis"}
	case !in.LeaseFresh:
		return FallbackDecision{Reason: "a commit has waited timeoutMillis but the primary Lease is not freshly renewed: it keeps waiting"}
	case in.Durability != v1alpha1.DataDurabilityRequired && in.Clients >= 1 && in.Clients < in.WaitForReplicaCount:
		return FallbackDecision{Action: FallbackLowerCount, Count: in.Clients,
			Reason: "preferred: a commit has waited timeoutMillis with fewer semi-sync replicas connected than the count"}
	default:
		return FallbackDecision{Action: FallbackRelease, Reason: "a commit has waited timeoutMillis"}
	}
}

// decideReenable: after a fallback, semi-sync comes back once enough participants are connected
// and caught up.
func decideReenable(in FallbackInput) FallbackDecision {
	need := max(in.WaitForReplicaCount, 1)
	if in.Durability != v1alpha1.DataDurabilityRequired {
		need = 1
	}
	// Dump threads of replicas that do not acknowledge may be the caught-up ones: count them as
	// such, so that only semi-sync replicas that have certainly caught up are counted.
	caughtUp := in.CaughtUpDumps - max(in.Dumps-in.Clients, 0)
	switch {
	case in.Now.Before(in.ReenableAfter):
		return FallbackDecision{Reason: "fallen back: the last re-enable was acknowledged by no replica; the next one waits until " +
			in.ReenableAfter.UTC().Format(time.RFC3339)}
	case in.Clients < need:
		return FallbackDecision{Reason: "fallen back: too few semi-sync replicas connected"}
	case caughtUp < need:
		return FallbackDecision{Reason: "fallen back: the semi-sync replicas have not received everything yet"}
	default:
		return FallbackDecision{Action: FallbackReenable, Reason: "a semi-sync replica is connected and caught up"}
	}
}

// SemiSyncBackOn reports whether semi-sync protects this primary's commits again after a
// fallback recorded earlier (FallenBack is then false: the source side was turned back on, by
// this manager or by an earlier run of it): it is the primary, and the source side is on and
// active. From the next acknowledged commit on, a replica holds everything before it.
func SemiSyncBackOn(in FallbackInput) bool {
	return in.Enabled && in.Primary && !in.FallenBack && in.SourceEnabled && in.SourceActive
}

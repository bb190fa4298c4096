package instance

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/failover"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/semisync"
)

// FallbackCheckInterval is how often the primary's instance manager looks at the commits waiting
// for acknowledgements. The processlist counts a wait in whole seconds of the wall clock
// (semisync.AckWaitResolution), so a commit is released after it has waited at least
// timeoutMillis and at most timeoutMillis plus two seconds plus this interval.
const FallbackCheckInterval = 250 * time.Millisecond

// fallbackReadTimeout bounds the read of the server each check starts with: a server that does
// not answer must not stop the checks (the next one reads afresh), and a decision taken on a read
// that took long is taken on stale figures anyway.
const fallbackReadTimeout = 5 * time.Second

// fallbackStatementTimeout bounds the statement that releases the waits or turns semi-sync back
// on, so that the Lease checked before it cannot have gone stale by much when it runs.
const fallbackStatementTimeout = time.Second

// LeaseFreshness is what the fallback needs of the primary Lease (PrimaryLease).
type LeaseFreshness interface {
	// Enabled is spec.enablePrimaryLease.
	Enabled() bool
	// Held: held and renewed in time, so that the self-fence is not due.
	Held() bool
	// RecordFallback writes the fallback record into the Lease and returns once the API server
	// has it (PrimaryLease.RecordFallback).
	RecordFallback(ctx context.Context, rec failover.FallbackRecord) error
	// FallbackRecord is the record the Lease carries for this instance, nil when none.
	FallbackRecord() *failover.FallbackRecord
}

// SemiSyncFallback is the primary's instance manager's side of semi-sync durability. mysqld
// never releases a waiting commit by itself (mysql.SourceTimeoutNever); this keeper does, when
// the oldest has waited timeoutMillis, and only while the primary Lease is fresh
// (semisync.DecideFallback), and turns semi-sync back on once a replica has caught up. It
// remembers that it fell back, so that the role pass leaves the source side off and the status
// report says "fallen back" rather than "disabled". Safe for concurrent use.
type SemiSyncFallback struct {
	// Instance is this instance, as the fallback record names it.
	Instance string
	Op       mysql.Operator
	// Lease is the primary Lease; nil means no Lease (as disabled in the spec).
	Lease LeaseFreshness
	Clock clock.Clock
	Log   logr.Logger

	// check serialises CheckOnce.
	check sync.Mutex
	mu    sync.Mutex
	// spec is the Cluster's spec as the role pass last read it; nil until then.
	spec *v1alpha1.ClusterSpec
	// fellBack: the source side was switched off here at since, and not turned on again.
	fellBack bool
	since    time.Time
	// resumeArmed: a fallback record at risk was seen with semi-sync back on when
	// Rpl_semi_sync_source_yes_tx was resumeYesTx (CheckOnce's goroutine only, under check).
	resumeArmed bool
	resumeYesTx int64
	// probing: the source side was turned back on after a fallback when
	// Rpl_semi_sync_source_yes_tx was probeYesTx, and no commit has been acknowledged since
	// (semisync.ProbeWait applies). backoff is the wait after the last failed probe, and
	// reenableAfter when the next re-enable may come (CheckOnce's goroutine only, under check).
	probing       bool
	probeYesTx    int64
	backoff       time.Duration
	reenableAfter time.Time
}

// Configure records the Cluster's spec as last read (the role pass calls it on every pass).
func (f *SemiSyncFallback) Configure(spec *v1alpha1.ClusterSpec) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.spec = spec.DeepCopy()
}

// FallenBack reports whether this instance manager switched the semi-sync source side off, and
// since when: the primary then acknowledges commits no replica may hold.
func (f *SemiSyncFallback) FallenBack() (bool, time.Time) {
	if f == nil {
		return false, time.Time{}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fellBack, f.since
}

// Run checks every FallbackCheckInterval until ctx ends, logging failed checks.
func (f *SemiSyncFallback) Run(ctx context.Context) {
	for {
		if _, err := f.CheckOnce(ctx); err != nil && ctx.Err() == nil {
			f.Log.Error(err, "semi-sync fallback check failed")
		}
		select {
		case <-ctx.Done():
			return
		case <-f.Clock.After(FallbackCheckInterval):
		}
	}
}

// CheckOnce reads the server, decides (semisync.DecideFallback) and carries the decision out.
func (f *SemiSyncFallback) CheckOnce(ctx context.Context) (semisync.FallbackDecision, error) {
	f.check.Lock()
	defer f.check.Unlock()
	f.mu.Lock()
	spec, fellBack := f.spec, f.fellBack
	f.mu.Unlock()
	if spec == nil {
		return semisync.FallbackDecision{Reason: "the Cluster has not been read yet"}, nil
	}
	rctx, cancel := context.WithTimeout(ctx, fallbackReadTimeout)
	st, err := f.Op.Status(rctx)
	cancel()
	if err != nil {
		return semisync.FallbackDecision{}, fmt.Errorf("reading the server for the semi-sync fallback: %w", err)
	}
	if f.probing && (st.SemiSync.YesTx > f.probeYesTx || !st.Writable()) {
		// A commit was acknowledged since the re-enable: a replica really receives.
		f.probing, f.backoff, f.reenableAfter = false, 0, time.Time{}
	}
	in := f.input(spec, fellBack, st)
	d := semisync.DecideFallback(in)
	switch d.Action {
	case semisync.FallbackRelease, semisync.FallbackLowerCount:
		var released bool
		if released, err = f.fallBack(ctx, d, st); released && f.probing {
			if d.Action == semisync.FallbackRelease {
				f.failedProbe()
			} else {
				f.probing = false // the count came down to the replicas connected: no longer a probe
			}
		}
	case semisync.FallbackReenable:
		if err = f.reenable(ctx, d); err == nil {
			// Any commit acknowledged from now on resumes the record (recordResumed) and ends
			// the probe.
			f.resumeArmed, f.resumeYesTx = true, st.SemiSync.YesTx
			f.probing, f.probeYesTx = true, st.SemiSync.YesTx
		}
	case semisync.FallbackForget:
		f.probing = false
		f.forget(d)
	case semisync.FallbackNone:
		err = f.recordResumed(ctx, in, st)
	}
	return d, err
}

// failedProbe: the commits of a re-enable no replica acknowledged were released again; the next
// re-enable waits, longer after each failed probe.
func (f *SemiSyncFallback) failedProbe() {
	f.probing = false
	f.backoff = semisync.NextReenableBackoff(f.backoff)
	f.reenableAfter = f.Clock.Now().Add(f.backoff)
	f.Log.Info("semi-sync turned back on after a fallback was acknowledged by no replica (a connection that looks alive may be cut): "+
		"asynchronous again; the next re-enable waits", "wait", f.backoff)
}

// recordResumed marks the Lease's fallback record of this instance resumed once a commit has
// been acknowledged since semi-sync came back on (semisync.SemiSyncBackOn, then
// Rpl_semi_sync_source_yes_tx rising): the replica that acknowledged it has received the binary
// log up to it, so every commit this server acknowledged alone before is on a replica too, and
// every one in gtid_executed since was acknowledged. It covers a record left by an earlier run of
// this manager. Until it is written, a failover under required stays blocked; an idle primary
// resumes its record at its first acknowledged commit.
func (f *SemiSyncFallback) recordResumed(ctx context.Context, in semisync.FallbackInput, st *mysql.Status) error {
	if f.Lease == nil || !f.Lease.Enabled() || !f.Lease.Held() {
		return nil
	}
	rec := f.Lease.FallbackRecord()
	if !rec.AtRisk(f.Instance) || !semisync.SemiSyncBackOn(in) {
		f.resumeArmed = false
		return nil
	}
	if yes := st.SemiSync.YesTx; !f.resumeArmed || yes < f.resumeYesTx {
		// The count from which an acknowledgement is looked for (it restarts with mysqld).
		f.resumeArmed, f.resumeYesTx = true, yes
		return nil
	} else if yes == f.resumeYesTx {
		return nil
	}
	resumed := *rec
	resumed.Resumed, resumed.ResumedAt, resumed.ResumedGTIDSet = true, f.Clock.Now().UTC(), st.GTIDExecuted.String()
	if err := f.Lease.RecordFallback(ctx, resumed); err != nil {
		return fmt.Errorf("marking the fallback record resumed: %w", err)
	}
	f.resumeArmed = false
	f.Log.Info("recorded in the primary Lease: semi-sync resumed, a replica holds every acknowledged commit",
		"fellBackAt", rec.FellBackAt, "resumedGTIDSet", resumed.ResumedGTIDSet)
	return nil
}

// input gathers DecideFallback's input; the Lease is read last, right before the decision.
func (f *SemiSyncFallback) input(spec *v1alpha1.ClusterSpec, fellBack bool, st *mysql.Status) semisync.FallbackInput {
	plan := semisync.PlanFor(spec, nil)
	s := st.SemiSync
	in := semisync.FallbackInput{
		Enabled: plan.Enabled, FallbackAfter: plan.FallbackAfter, Primary: st.Writable(), FallenBack: fellBack,
		SourceEnabled: s.SourceEnabled, WaitForReplicaCount: s.WaitForReplicaCount, Clients: int(s.Clients),
		AckWaiters: s.AckWaiters, LongestAckWait: s.LongestAckWait, Dumps: s.Dumps, CaughtUpDumps: s.CaughtUpDumps,
	}
	if spec.MySQL.SemiSync != nil {
		in.Durability = spec.MySQL.SemiSync.DataDurability
	}
	in.SourceActive = s.SourceActive
	in.Probing, in.Now, in.ReenableAfter = f.probing, f.Clock.Now(), f.reenableAfter
	in.LeaseFresh = f.Lease == nil || !f.Lease.Enabled() || f.Lease.Held()
	return in
}

// fallBack releases the commits waiting for acknowledgements, and says whether it did: FallbackRelease switches the
// source side off (every waiting commit completes, later ones do not wait, the primary now
// acknowledges alone); FallbackLowerCount (preferred) lowers the acknowledgement count to the
// semi-sync replicas connected. This is the one place a waiting commit is released without its
// acknowledgements; a step that must precede that (recording the fallback durably, with the GTID
// set at that moment) goes at the top, and returning its error keeps the commits waiting.
func (f *SemiSyncFallback) fallBack(ctx context.Context, d semisync.FallbackDecision, st *mysql.Status) (released bool, err error) {
	if f.Lease != nil && f.Lease.Enabled() && !f.Lease.Held() {
		// Looked at again right before the statement: the decision was taken on a read of the
		// server, and the Lease may have gone stale since (a manager paused in between). A manager
		// frozen after this check is the operator's fence's case.
		f.Log.Info("not falling back: the primary Lease is no longer freshly renewed", "reason", d.Reason)
		return false, nil
	}
	if d.Action == semisync.FallbackRelease && f.Lease != nil && f.Lease.Enabled() {
		// Recorded first, where the operator reads it even if this server never answers again:
		// a failover under required then waits for it rather than lose what it acknowledged. A
		// record still at risk is kept as it is: it names the earliest commit that may be alone.
		if cur := f.Lease.FallbackRecord(); !cur.AtRisk(f.Instance) {
			rec := failover.FallbackRecord{Instance: f.Instance, FellBackAt: f.Clock.Now().UTC(), GTIDExecuted: st.GTIDExecuted.String()}
			if err := f.Lease.RecordFallback(ctx, rec); err != nil {
				return false, fmt.Errorf("not falling back: the fallback could not be recorded in the primary Lease: %w", err)
			}
			f.Log.Info("recorded in the primary Lease: falling back to asynchronous replication", "gtidExecuted", rec.GTIDExecuted)
		}
		if !f.Lease.Held() {
			f.Log.Info("not falling back: the primary Lease is no longer freshly renewed", "reason", d.Reason)
			return false, nil
		}
	}
	ctx, cancel := context.WithTimeout(ctx, fallbackStatementTimeout)
	defer cancel()
	if d.Action == semisync.FallbackLowerCount {
		if err := f.Op.SetSemiSyncWaitForReplicaCount(ctx, d.Count); err != nil {
			return false, fmt.Errorf("lowering the semi-sync acknowledgement count to %d: %w", d.Count, err)
		}
		f.Log.Info("lowered the semi-sync acknowledgement count to the replicas connected", "count", d.Count,
			"was", st.SemiSync.WaitForReplicaCount, "waiting", st.SemiSync.AckWaiters, "longestWait", st.SemiSync.LongestAckWait,
			"reason", d.Reason)
		return true, nil
	}
	if err := f.Op.SetSemiSyncSourceEnabled(ctx, false); err != nil {
		return false, fmt.Errorf("falling back to asynchronous replication: %w", err)
	}
	f.mu.Lock()
	f.fellBack, f.since = true, f.Clock.Now()
	f.mu.Unlock()
	f.Log.Info("fell back to asynchronous replication: released the commits waiting for acknowledgements",
		"waiting", st.SemiSync.AckWaiters, "longestWait", st.SemiSync.LongestAckWait, "clients", st.SemiSync.Clients,
		"gtidExecuted", st.GTIDExecuted.String(), "reason", d.Reason)
	return true, nil
}

// reenable switches the source side back on after a fallback. The count, the timeout, the wait
// point and wait_no_replica were applied when the source side was last turned on and are left
// as they are.
func (f *SemiSyncFallback) reenable(ctx context.Context, d semisync.FallbackDecision) error {
	ctx, cancel := context.WithTimeout(ctx, fallbackStatementTimeout)
	defer cancel()
	if err := f.Op.SetSemiSyncSourceEnabled(ctx, true); err != nil {
		return fmt.Errorf("turning semi-sync back on: %w", err)
	}
	f.forget(d)
	return nil
}

// forget clears the fallback: the source side is on again, or the fallback no longer applies.
func (f *SemiSyncFallback) forget(d semisync.FallbackDecision) {
	f.mu.Lock()
	since := f.since
	f.fellBack, f.since = false, time.Time{}
	f.mu.Unlock()
	f.Log.Info("semi-sync fallback over", "fellBackAt", since, "reason", d.Reason)
}

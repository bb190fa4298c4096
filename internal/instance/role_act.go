package instance

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
)

// RoleActor performs a RoleDecision on the local mysqld.
type RoleActor struct {
	Op mysql.Operator
	// SourceFor returns how to replicate from an instance (address, account, TLS files).
	SourceFor func(instance string) (mysql.Source, error)
	// DrainTimeout bounds the wait for the applier before a promotion.
	DrainTimeout time.Duration
	// Lease, if set, is the primary Lease: acquired before the server clears read-only,
	// released once it is read-only again.
	Lease WriteGuard
	// StillTarget, if set, reads the Cluster afresh and reports whether it still names this
	// instance as the target primary. A promotion calls it once the Lease is held, right before
	// the server clears read-only: a promotion decided on an older read of the Cluster then does
	// not make the server writable after the operator aborted the switchover, which would leave
	// its first writes on it alone.
	StillTarget func(ctx context.Context) (bool, error)
	// Sweep, if set, ends the client sessions of a server turned read-only while a write Service
	// may still route to it (SessionSweep).
	Sweep *SessionSweep
	Log   logr.Logger
}

// WriteGuard lets the server accept writes only while this instance holds the primary Lease
// (PrimaryLease).
type WriteGuard interface {
	// Enabled is spec.enablePrimaryLease.
	Enabled() bool
	// Held reports whether the Lease is held and renewed in time.
	Held() bool
	// AllowWrites acquires or renews the Lease, then runs clearReadOnly while it is valid.
	AllowWrites(ctx context.Context, clearReadOnly func(context.Context) error) error
	// Release gives the Lease up; the server must be read-only.
	Release(ctx context.Context) error
}

// RoleOutcome is what the caller reports after Apply.
type RoleOutcome struct {
	// Primary: the server is now writable as the primary; the caller records currentPrimary.
	Primary bool
	// Diverged: the caller reports the instance in status.divergedInstances.
	Diverged bool
}

// ErrNoLongerTarget is returned when a promotion is abandoned because the Cluster no longer names
// this instance as the target primary; the server stays read-only.
var ErrNoLongerTarget = errors.New("no longer the target primary")

// ErrNotDrained is returned when a promotion is abandoned because the applier did not execute
// what was received within DrainTimeout; the server stays read-only.
var ErrNotDrained = errors.New("replication not drained")

// Apply performs d given the server's current status st. Every path that does not promote
// first makes sure the server is read-only.
func (a *RoleActor) Apply(ctx context.Context, d RoleDecision, st *mysql.Status) (RoleOutcome, error) {
	if d.Action != ActPrimary {
		if st.Writable() {
			a.Log.Info("turning read-only", "reason", d.Reason)
			if err := a.Op.SetReadOnly(ctx, true); err != nil {
				return RoleOutcome{}, err
			}
			// Its client sessions end, and go on ending while a write Service routes here.
			a.Sweep.Trigger()
		}
		// Demoted, fenced or never primary: a Lease naming this instance goes. A failure is
		// not fatal (the Lease expires anyway) and must not keep a replica from following.
		if a.Lease != nil {
			if err := a.Lease.Release(ctx); err != nil {
				a.Log.Info("releasing the primary Lease failed; it will expire", "error", err.Error())
			}
		}
	}
	switch d.Action {
	case ActPrimary:
		if err := a.promote(ctx, d, st); err != nil {
			return RoleOutcome{}, err
		}
		return RoleOutcome{Primary: true}, nil
	case ActFollow:
		return RoleOutcome{}, a.follow(ctx, d.Source, d.KeepReceiverStopped, st)
	case ActDiverged:
		a.Log.Info("instance diverged; holding read-only", "errant", d.Errant.String(), "reason", d.Reason)
		if st.Replication != nil && (st.Replication.IORunning != "No" || st.Replication.SQLRunning != "No") {
			if err := a.Op.StopReplication(ctx); err != nil {
				return RoleOutcome{}, err
			}
		}
		return RoleOutcome{Diverged: true}, nil
	}
	return RoleOutcome{}, nil
}

// promote catches up with the old primary (during a switchover), drains and drops replication,
// then applies d's semi-sync settings and clears read-only, in that order.
func (a *RoleActor) promote(ctx context.Context, d RoleDecision, st *mysql.Status) error {
	catchUp := d.CatchUp
	if !st.GTIDExecuted.Contains(catchUp) {
		missing := catchUp.Subtract(st.GTIDExecuted)
		a.Log.Info("catching up with the old primary", "missing", missing.Count())
		if r := st.Replication; r != nil && (r.IORunning == "No" || r.SQLRunning == "No") {
			if err := a.Op.StartReplication(ctx); err != nil {
				return err
			}
		}
		if err := a.Op.WaitForGTIDSet(ctx, catchUp, a.DrainTimeout); err != nil {
			return fmt.Errorf("%w: %d transactions of the old primary missing: %w", ErrNotDrained, missing.Count(), err)
		}
	}
	if st.Replication != nil {
		if err := a.drain(ctx); err != nil {
			return err
		}
		if err := a.Op.ResetReplication(ctx); err != nil {
			return err
		}
	}
	if st.Writable() {
		if a.Lease == nil || !a.Lease.Enabled() || a.Lease.Held() {
			return nil
		}
		// Writable without the Lease (it was just enabled): read-only until it is held.
		a.Log.Info("writable without the primary Lease; turning read-only until it is held")
		if err := a.Op.SetReadOnly(ctx, true); err != nil {
			return err
		}
	}
	a.Log.Info("promoting to primary")
	clearReadOnly := func(ctx context.Context) error {
		if a.StillTarget != nil {
			still, err := a.StillTarget(ctx)
			if err != nil {
				return fmt.Errorf("confirming the target primary before turning writable: %w", err)
			}
			if !still {
				// Given back at once, so the old primary resuming does not wait for the next pass.
				if a.Lease != nil {
					if err := a.Lease.Release(ctx); err != nil {
						a.Log.Info("releasing the primary Lease after an abandoned promotion failed; it will expire", "error", err.Error())
					}
				}
				return ErrNoLongerTarget
			}
		}
		// Every path that clears read-only comes here (a promotion, and a primary whose mysqld
		// restarted in place, which starts read-only): the semi-sync source side is set up first.
		if err := a.semiSyncBeforeWrites(ctx, d.SemiSync); err != nil {
			return err
		}
		// A sweep of a former primary's sessions (an aborted switchover resumes it) ends before
		// the server takes writes, so that it ends no session of the writable server.
		a.Sweep.Stop()
		return a.Op.SetReadOnly(ctx, false)
	}
	if a.Lease == nil {
		return clearReadOnly(ctx)
	}
	return a.Lease.AllowWrites(ctx, clearReadOnly)
}

// semiSyncBeforeWrites applies the settings a primary takes before it accepts writes (nil:
// nothing to apply); an error keeps the server read-only.
func (a *RoleActor) semiSyncBeforeWrites(ctx context.Context, s *mysql.SemiSyncSettings) error {
	if s == nil {
		return nil
	}
	if s.SourceEnabled {
		if err := a.Op.InstallSemiSyncPlugins(ctx); err != nil {
			return fmt.Errorf("semi-sync before clearing read-only: %w", err)
		}
	}
	if err := a.Op.ApplySemiSync(ctx, *s); err != nil {
		return fmt.Errorf("semi-sync before clearing read-only: %w", err)
	}
	a.Log.Info("semi-sync settings applied before clearing read-only", "source", s.SourceEnabled, "count", s.WaitForReplicaCount)
	return nil
}

// drain stops the receiver, then waits until the applier has executed all it received.
func (a *RoleActor) drain(ctx context.Context) error {
	if err := a.Op.StopReceiver(ctx); err != nil {
		return err
	}
	st, err := a.Op.Status(ctx)
	if err != nil {
		return err
	}
	if st.Replication == nil || Drained(st.Replication.RetrievedGTIDSet, st.GTIDExecuted) {
		return nil
	}
	if st.Replication.SQLRunning != "Yes" {
		// A stopped applier would never drain; it is restarted (an error in it stays an error).
		if err := a.Op.StartApplier(ctx); err != nil {
			return err
		}
	}
	err = a.Op.WaitForGTIDSet(ctx, st.Replication.RetrievedGTIDSet, a.DrainTimeout)
	if errors.Is(err, mysql.ErrTimeout) {
		missing := gtid.Errant(st.Replication.RetrievedGTIDSet, st.GTIDExecuted)
		return fmt.Errorf("%w: %d received transactions not applied: %w", ErrNotDrained, missing.Count(), err)
	}
	return err
}

// follow points replication at source if it points elsewhere, and starts stopped threads; with
// keepReceiverStopped, a stopped receiver stays stopped and only the applier is started.
func (a *RoleActor) follow(ctx context.Context, source string, keepReceiverStopped bool, st *mysql.Status) error {
	src, err := a.SourceFor(source)
	if err != nil {
		return fmt.Errorf("resolving replication source %s: %w", source, err)
	}
	r := st.Replication
	if r == nil || r.SourceHost != src.Host || r.SourcePort != src.Port || !r.AutoPosition {
		a.Log.Info("replicating from a new source", "source", source)
		return a.repairing(ctx, func() error {
			if err := a.Op.ConfigureReplication(ctx, src); err != nil {
				return err
			}
			return a.Op.StartReplication(ctx)
		})
	}
	if keepReceiverStopped && r.IORunning == "No" {
		if r.SQLRunning == "No" {
			a.Log.Info("starting the applier; the receiver stays stopped during a failover", "source", source)
			return a.Op.StartApplier(ctx)
		}
		return nil
	}
	if r.IORunning == "No" || r.SQLRunning == "No" {
		a.Log.Info("starting stopped replication threads", "source", source, "io", r.IORunning, "sql", r.SQLRunning)
		return a.repairing(ctx, func() error { return a.Op.StartReplication(ctx) })
	}
	return nil
}

// repairing runs follow, which points replication at a source and starts it. When the channel's
// metadata cannot be initialized (mysql.ErrReplicaMetadata: an old primary whose channel a
// promotion removed moments before was left so, 1 switchover in 10 on the local node, and
// refused every CHANGE REPLICATION SOURCE and START REPLICA after), the relay logs are discarded
// with RepairReplicaMetadata and follow runs once more. Only when this server has executed all
// it received: a received transaction not yet applied may be one this replica alone
// acknowledged, and is never discarded here (the error stays, for a human). That is read afresh
// once follow failed (its threads stopped), and only from a channel the server reports: without
// one, what the relay logs hold is unknown, and they are kept (the measured case then fails the
// CHANGE REPLICATION SOURCE once, and the next pass, with the channel configured, repairs it).
func (a *RoleActor) repairing(ctx context.Context, follow func() error) error {
	err := follow()
	if !errors.Is(err, mysql.ErrReplicaMetadata) {
		return err
	}
	st, serr := a.Op.Status(ctx)
	switch {
	case serr != nil:
		return errors.Join(err, serr)
	case st.Replication == nil:
		return fmt.Errorf("%w; the relay logs are kept: the server reports no channel, so what they hold is unknown", err)
	case !Drained(st.Replication.RetrievedGTIDSet, st.GTIDExecuted):
		return fmt.Errorf("%w; the relay logs are kept: %d received transactions are not applied",
			err, gtid.Errant(st.Replication.RetrievedGTIDSet, st.GTIDExecuted).Count())
	}
	a.Log.Info("repairing the replication channel: discarding the relay logs (RESET REPLICA)", "error", err.Error())
	if rerr := a.Op.RepairReplicaMetadata(ctx); rerr != nil {
		return errors.Join(err, rerr)
	}
	return follow()
}

package instance

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
)

// fenceStatementTimeout bounds SET GLOBAL super_read_only, which waits for commits in progress
// (one waiting for a semi-sync acknowledgement, a session holding LOCK TABLES): past it, the
// server goes offline, the client sessions are ended, the commits still waiting for an
// acknowledgement are released, and the statement is tried again.
const fenceStatementTimeout = time.Second

// StopWrites turns the server read-only (super_read_only) and then ends every client session
// still open, so that no transaction begun before can commit: a read-only server refuses the
// commit of a transaction that wrote, and the session is gone anyway. It is what a primary does
// when it may no longer be the primary (its Lease not renewed in time) or is demoted.
//
// A commit that waits for a semi-sync acknowledgement holds SET super_read_only back, and ending
// its session does not end the wait (MySQL completes the commit when an acknowledgement or the
// semi-sync timeout comes). When the statement does not complete within fenceStatementTimeout,
// the server therefore goes offline (offline_mode: the sessions of ordinary accounts end and no
// new one is accepted), the other client sessions are ended, and if commits still wait for an
// acknowledgement, the semi-sync source is switched off so that they complete: their clients are
// gone, so none of them is acknowledged to anyone. Then read-only is set, the semi-sync source is
// switched back on and the server comes back online, read-only. Without this, a primary cut off
// from its replicas could not stop writes before its commits fell back to asynchronous
// replication, and sessions connected at that moment would be acknowledged commits no replica has.
func StopWrites(ctx context.Context, op mysql.Operator, log logr.Logger) error {
	var errs []error
	offline, released := false, false
	defer func() {
		// Undone whatever happened: a server left offline serves nobody, and one left with the
		// semi-sync source off would acknowledge commits alone once writable again. The source
		// side comes back first; if it does not, the server stays offline (no ordinary client can
		// write on it, should read-only have failed too) until the next attempt.
		restoreCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fenceStatementTimeout)
		defer cancel()
		if released {
			if err := op.SetSemiSyncSourceEnabled(restoreCtx, true); err != nil {
				log.Error(err, "switching the semi-sync source back on after stopping writes; the server stays offline")
				return
			}
		}
		if offline {
			if err := op.SetOfflineMode(restoreCtx, false); err != nil {
				log.Error(err, "bringing the server back online after stopping writes")
			}
		}
	}()
	for attempt := 1; attempt <= 3; attempt++ {
		setCtx, cancel := context.WithTimeout(ctx, fenceStatementTimeout)
		err := op.SetReadOnly(setCtx, true)
		cancel()
		if err == nil {
			n, err := op.KillClientSessions(ctx)
			if err != nil {
				return fmt.Errorf("ending the client sessions of a read-only server: %w", err)
			}
			log.Info("writes stopped: super_read_only on, client sessions ended", "sessions", n, "offline", offline,
				"releasedAckWaits", released)
			return nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
		// Something holds the statement back: no new client, end the sessions, release the
		// commits waiting for an acknowledgement, then try again.
		if !offline {
			if err := op.SetOfflineMode(ctx, true); err != nil {
				errs = append(errs, err)
			} else {
				offline = true
			}
		}
		if n, err := op.KillClientSessions(ctx); err != nil {
			errs = append(errs, err)
		} else {
			log.Info("turning read-only waited; ended the client sessions first", "sessions", n)
		}
		if !released {
			st, err := op.Status(ctx)
			switch {
			case err != nil:
				errs = append(errs, err)
			case st.SemiSync.AckWaiters > 0 && st.SemiSync.SourceEnabled:
				if err := op.SetSemiSyncSourceEnabled(ctx, false); err != nil {
					errs = append(errs, err)
				} else {
					released = true
					log.Info("released the commits waiting for semi-sync acknowledgements; their sessions are ended, none is acknowledged",
						"waiting", st.SemiSync.AckWaiters)
				}
			}
		}
	}
	return fmt.Errorf("stopping writes: %w", errors.Join(errs...))
}

// demoteAckWaitTimeout bounds how long a demotion waits for the commits that wait for a
// semi-sync acknowledgement to end once the server is read-only: StopWrites has released them by
// then, so this is a bound for the unexpected, and with StopWrites it keeps POST /demote within
// the operator's request timeout (5 s).
const demoteAckWaitTimeout = 2 * time.Second

// ackWaitPoll is how often a demotion looks again at the commits waiting for acknowledgements.
const ackWaitPoll = 50 * time.Millisecond

// DemoteServer stops writes (StopWrites), then waits until no session's commit still waits for
// a semi-sync acknowledgement, ending the client sessions again while some do. With the
// AFTER_SYNC wait point such a commit is in the binary log, and perhaps already on a replica,
// but not yet in gtid_executed: a demoted primary reported read-only before they end would show
// a GTID set short of what it wrote, and a switchover target checked against it could be
// promoted without them, leaving the replica that has them looking diverged. A commit whose
// session ends stops waiting and completes without being acknowledged to its client. Past
// timeout it fails, naming how many still wait; the server stays read-only.
func DemoteServer(ctx context.Context, op mysql.Operator, log logr.Logger, timeout time.Duration) error {
	if err := StopWrites(ctx, op, log); err != nil {
		return err
	}
	waitCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		st, err := op.Status(waitCtx)
		if err == nil && st.SemiSync.AckWaiters == 0 {
			return nil
		}
		waiters := -1
		if err == nil {
			waiters = st.SemiSync.AckWaiters
			if _, kerr := op.KillClientSessions(waitCtx); kerr != nil && waitCtx.Err() == nil {
				log.Info("ending client sessions while commits wait for acknowledgements failed", "error", kerr.Error())
			}
		}
		select {
		case <-waitCtx.Done():
			if waiters < 0 {
				return fmt.Errorf("demoting: reading whether commits still wait for semi-sync acknowledgements: %w", err)
			}
			return fmt.Errorf("demoting: %d commits still wait for a semi-sync acknowledgement %s after the server turned read-only; its final GTID set is not known", waiters, timeout)
		case <-time.After(ackWaitPoll):
		}
	}
}

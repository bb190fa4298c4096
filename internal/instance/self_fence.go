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
// client sessions are ended first and the statement tried again.
const fenceStatementTimeout = time.Second

// StopWrites turns the server read-only (super_read_only) and then ends every client session
// still open, so that no transaction begun before can commit: a read-only server refuses the
// commit of a transaction that wrote, and the session is gone anyway. It is what a primary does
// when it may no longer be the primary (its Lease not renewed in time).
func StopWrites(ctx context.Context, op mysql.Operator, log logr.Logger) error {
	var errs []error
	for attempt := 1; attempt <= 3; attempt++ {
		setCtx, cancel := context.WithTimeout(ctx, fenceStatementTimeout)
		err := op.SetReadOnly(setCtx, true)
		cancel()
		if err == nil {
			n, err := op.KillClientSessions(ctx)
			if err != nil {
				return fmt.Errorf("ending the client sessions of a read-only server: %w", err)
			}
			log.Info("writes stopped: super_read_only on, client sessions ended", "sessions", n)
			return nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
		// Something holds the statement back: end the sessions, then try again.
		if n, err := op.KillClientSessions(ctx); err != nil {
			errs = append(errs, err)
		} else {
			log.Info("turning read-only waited; ended the client sessions first", "sessions", n)
		}
	}
	return fmt.Errorf("stopping writes: %w", errors.Join(errs...))
}

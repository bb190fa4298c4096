package instance

import (
	"context"
	"fmt"
	"sync"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/semisync"
)

// SemiSyncParticipation is what the operator last told this instance manager about sending
// acknowledgements (POST /semisync/replica), kept in memory only: a restarted instance manager
// acknowledges until told again (semisync.NotTold). The control API and the role pass apply it
// under one lock, so that neither writes back a value the other has just replaced. Safe for
// concurrent use; a nil one is never told anything.
type SemiSyncParticipation struct {
	mu   sync.Mutex
	told semisync.Participation
}

// Tell records whether this replica participates and switches rpl_semi_sync_replica_enabled to
// match, installing the plugins first when it turns on. The record stays even when the switch
// fails: the role pass applies it then.
func (p *SemiSyncParticipation) Tell(ctx context.Context, op mysql.Operator, participant bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.told = semisync.ParticipationOf(participant)
	if participant {
		if err := op.InstallSemiSyncPlugins(ctx); err != nil {
			return fmt.Errorf("installing the semi-sync plugins to acknowledge: %w", err)
		}
	}
	if err := op.SetSemiSyncReplicaEnabled(ctx, participant); err != nil {
		return fmt.Errorf("switching the semi-sync replica side to participant=%v: %w", participant, err)
	}
	return nil
}

// Converge runs apply with what the operator last told, holding the lock so that no Tell runs
// meanwhile.
func (p *SemiSyncParticipation) Converge(apply func(told semisync.Participation) error) error {
	if p == nil {
		return apply(semisync.NotTold)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return apply(p.told)
}

// Forget goes back to semisync.NotTold: the instance became the primary, and what it was told as
// a replica no longer holds when it is demoted.
func (p *SemiSyncParticipation) Forget() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.told = semisync.NotTold
}

// Told is what the operator last told (semisync.NotTold for a nil one).
func (p *SemiSyncParticipation) Told() semisync.Participation {
	if p == nil {
		return semisync.NotTold
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.told
}

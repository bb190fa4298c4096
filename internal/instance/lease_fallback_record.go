package instance

import (
	"context"
	"errors"
	"fmt"

	coordinationv1 "k8s.io/api/coordination/v1"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/failover"
)

// errNotHeld: the record is written only in a renewal by the holder.
var errNotHeld = errors.New("this instance does not hold the primary Lease")

// FallbackRecord is the semi-sync fallback record the Lease carried when this instance last read
// or wrote it, if it names this instance; nil otherwise. A record that does not parse counts as
// one at risk: it is never taken for "nothing to fear".
func (l *PrimaryLease) FallbackRecord() *failover.FallbackRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fallback != nil {
		r := *l.fallback
		return &r
	}
	if l.held && l.last == nil {
		// Held without having read the Lease (handed over by the previous program): whatever it
		// carries counts as at risk until it is read.
		return &failover.FallbackRecord{Instance: l.Holder.Instance}
	}
	return l.recordInLocked(l.last)
}

// recordInLocked is the record lease carries for this instance.
func (l *PrimaryLease) recordInLocked(lease *coordinationv1.Lease) *failover.FallbackRecord {
	if lease == nil {
		return nil
	}
	r, err := failover.ParseFallbackRecord(lease.Annotations[failover.FallbackAnnotation])
	switch {
	case err != nil:
		return &failover.FallbackRecord{Instance: l.Holder.Instance}
	case r == nil || r.Instance != l.Holder.Instance:
		return nil
	}
	return r
}

// RecordFallback writes rec into the Lease, in a renewal, and returns once the API server has
// it: the fallback releases a commit without its acknowledgements only after that. It fails when
// this instance does not hold the Lease, or on any error of the write (a conflict with a renewal
// under way included): the commits then keep waiting, and the next check tries again. Later
// renewals carry the record on, until the next RecordFallback.
func (l *PrimaryLease) RecordFallback(ctx context.Context, rec failover.FallbackRecord) error {
	// Read first, so that the write carries the latest resourceVersion: a renewal since the last
	// read would otherwise make every attempt conflict until the next one.
	current, err := l.Observe(ctx)
	if err != nil {
		return fmt.Errorf("recording the semi-sync fallback: %w", err)
	}
	sent := l.Clock.Now()
	l.mu.Lock()
	if !l.held || l.last == nil || !current.HeldBy(l.Holder) {
		l.mu.Unlock()
		return fmt.Errorf("recording the semi-sync fallback: %w", errNotHeld)
	}
	previous := l.fallback
	l.fallback = &rec
	lease, epoch := l.desiredLocked(LeaseRecord{Exists: true}, sent), l.epoch
	l.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, LeaseRequestTimeout)
	defer cancel()
	err = l.Client.Update(ctx, lease)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil || epoch != l.epoch {
		if l.fallback == &rec {
			l.fallback = previous
		}
		if err == nil {
			return fmt.Errorf("recording the semi-sync fallback: %w (given up while the request was under way)", errNotHeld)
		}
		return fmt.Errorf("recording the semi-sync fallback in Lease %s: %w", l.Key, err)
	}
	l.last, l.lastSent = lease.DeepCopy(), sent
	return nil
}

// applyFallbackLocked puts the record into lease, as desiredLocked builds it: this instance's
// own record when it wrote one, else the one the Lease carries if it names this instance; a
// record naming another instance (a Lease taken over) is dropped.
func (l *PrimaryLease) applyFallbackLocked(lease *coordinationv1.Lease) {
	switch {
	case l.fallback != nil:
		if lease.Annotations == nil {
			lease.Annotations = map[string]string{}
		}
		lease.Annotations[failover.FallbackAnnotation] = l.fallback.Encode()
	case lease.Annotations[failover.FallbackAnnotation] != "" && l.recordInLocked(lease) == nil:
		delete(lease.Annotations, failover.FallbackAnnotation)
	}
}

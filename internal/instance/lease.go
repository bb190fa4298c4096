package instance

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/failover"
)

// ErrLeaseHeld is returned when another instance holds the primary Lease and it has not expired.
var ErrLeaseHeld = errors.New("the primary Lease is held by another instance")

// PrimaryLease is the coordination.k8s.io/v1 Lease <cluster>-primary as the instance manager of
// the primary holds it: acquired before the server clears read-only, renewed every
// LeaseRenewInterval, deleted when the instance demotes, is fenced or shuts down. When a renewal
// has not succeeded by SelfFenceDeadline, the server stops writes itself (StopWrites), before
// the Lease can expire and another instance take it. Safe for concurrent use.
type PrimaryLease struct {
	Client client.Client
	// Key names the Lease.
	Key types.NamespacedName
	// Holder is this instance and its Pod, as the Lease names its holder.
	Holder failover.LeaseHolder
	// Clock is the instance's clock (monotonic in production): the self-fencing deadline and
	// the local observation of others' Leases are measured on it.
	Clock clock.Clock
	// StopWrites turns the server read-only and ends its client sessions.
	StopWrites func(ctx context.Context) error
	Log        logr.Logger

	// gate serialises everything that changes whether the server accepts writes: clearing
	// read-only (AllowWrites), the self-fence and a demotion (Demote). A server cleared past its
	// deadline, or after a demotion, is never left writable.
	gate sync.Mutex
	// renewals are the renewals under way; Run waits for them before it returns.
	renewals sync.WaitGroup
	mu       sync.Mutex
	// enabled is spec.enablePrimaryLease; owner the Cluster the Lease belongs to.
	enabled bool
	owner   *metav1.OwnerReference
	// held: the last creation or renewal succeeded (sent at lastSent) and nothing since gave
	// the Lease up. maybeHeld: a Lease of an earlier run may name this instance.
	held, maybeHeld, inFlight bool
	lastSent                  time.Time
	// epoch counts the times the Lease was given up, so that a renewal answered after that
	// changes nothing.
	epoch int
	// last is the Lease as last read or written; seen when this instance first saw its
	// holder and renewTime.
	last *coordinationv1.Lease
	seen LeaseSighting
	// demoted: a demotion latched the server read-only; AllowWrites refuses until EndDemotion.
	// demotions counts the demotions, so that EndDemotion ends only those it has seen.
	demoted   bool
	demotions int
	// fallback is the semi-sync fallback record this instance last wrote (RecordFallback);
	// every later renewal carries it.
	fallback *failover.FallbackRecord
}

// HeldSince reports whether this instance holds the Lease, and when the renewal that holds it was
// sent (the self-fencing deadline counts from it).
func (l *PrimaryLease) HeldSince() (bool, time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	held := l.held && l.Clock.Now().Before(SelfFenceDeadline(l.lastSent))
	return held, l.lastSent
}

// AdoptHeld starts this keeper as the holder of a Lease renewed at sent by the previous program
// of this process (an in-place update): the server stays writable, the next renewal is due as it
// was, and the self-fence deadline counts from sent. The next renewal reads the Lease: one that
// no longer names this instance and Pod stops writes at once.
func (l *PrimaryLease) AdoptHeld(sent time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.held, l.maybeHeld, l.lastSent = true, false, sent
}

// WhileGated runs fn while nothing else may change whether the server accepts writes (no
// self-fence, demotion or AllowWrites runs meanwhile).
func (l *PrimaryLease) WhileGated(fn func()) {
	l.gate.Lock()
	defer l.gate.Unlock()
	fn()
}

// ErrDemoted is returned by AllowWrites while a demotion holds the server read-only.
var ErrDemoted = errors.New("demoted: the server stays read-only until the Cluster names another target primary")

// NewPrimaryLease returns the Lease keeper of holder (an instance and its Pod); the Lease is
// disabled until Configure.
func NewPrimaryLease(c client.Client, key types.NamespacedName, holder failover.LeaseHolder, clk clock.Clock,
	stopWrites func(context.Context) error, log logr.Logger) *PrimaryLease {
	return &PrimaryLease{Client: c, Key: key, Holder: holder, Clock: clk, StopWrites: stopWrites,
		Log: log, maybeHeld: true}
}

// Configure applies spec.enablePrimaryLease and the Cluster that owns the Lease.
func (l *PrimaryLease) Configure(enabled bool, owner metav1.OwnerReference) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.enabled, l.owner = enabled, &owner
}

// Enabled reports spec.enablePrimaryLease as last configured.
func (l *PrimaryLease) Enabled() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.enabled
}

// Held reports whether this instance holds the Lease (a renewal succeeded in time).
func (l *PrimaryLease) Held() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held && l.Clock.Now().Before(SelfFenceDeadline(l.lastSent))
}

// MayHold reports whether the Lease may name this instance: held, or not yet checked since a
// start or a self-fence.
func (l *PrimaryLease) MayHold() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held || l.maybeHeld
}

// Observe reads the Lease and returns it with when this instance first saw its current holder
// and renewTime.
func (l *PrimaryLease) Observe(ctx context.Context) (LeaseRecord, error) {
	ctx, cancel := context.WithTimeout(ctx, LeaseRequestTimeout)
	defer cancel()
	var lease coordinationv1.Lease
	err := l.Client.Get(ctx, l.Key, &lease)
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case apierrors.IsNotFound(err):
		l.last, l.seen = nil, NoteSighting(l.seen, LeaseRecord{}, l.Clock.Now())
		return LeaseRecord{}, nil
	case err != nil:
		return LeaseRecord{}, fmt.Errorf("reading Lease %s: %w", l.Key, err)
	}
	l.last = lease.DeepCopy()
	return l.recordLocked(&lease), nil
}

// recordLocked converts lease, noting when its holder or renewTime was first seen.
func (l *PrimaryLease) recordLocked(lease *coordinationv1.Lease) LeaseRecord {
	h := failover.ParseLeaseHolder(ptr.Deref(lease.Spec.HolderIdentity, ""))
	r := LeaseRecord{Exists: true, Holder: h.Instance, HolderPodUID: h.PodUID}
	if lease.Spec.RenewTime != nil {
		r.RenewTime = lease.Spec.RenewTime.Time
	}
	if lease.Spec.LeaseDurationSeconds != nil {
		r.Duration = time.Duration(*lease.Spec.LeaseDurationSeconds) * time.Second
	}
	l.seen = NoteSighting(l.seen, r, l.Clock.Now())
	r.ObservedAt = l.seen.At
	return r
}

// Acquire creates the Lease, takes it over or renews it, as MayTakeLease allows; it returns
// ErrLeaseHeld when another instance holds it.
func (l *PrimaryLease) Acquire(ctx context.Context) error {
	rec, err := l.Observe(ctx)
	if err != nil {
		return err
	}
	take := MayTakeLease(rec, l.Holder, l.Clock.Now())
	if !take.Allowed {
		return fmt.Errorf("%w: %s", ErrLeaseHeld, take.Reason)
	}
	// renewTime is the moment the request is sent: the self-fencing deadline counts from it.
	sent := l.Clock.Now()
	l.mu.Lock()
	lease, epoch := l.desiredLocked(rec, sent), l.epoch
	l.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, LeaseRequestTimeout)
	defer cancel()
	if rec.Exists {
		err = l.Client.Update(ctx, lease)
	} else {
		err = l.Client.Create(ctx, lease)
	}
	if err != nil {
		return fmt.Errorf("acquiring Lease %s: %w", l.Key, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if epoch != l.epoch {
		// Given up (released, self-fenced) meanwhile: the Lease may name this instance again,
		// for the next Release to delete.
		l.maybeHeld = true
		return fmt.Errorf("acquiring Lease %s: given up while the request was under way", l.Key)
	}
	l.last, l.held, l.maybeHeld, l.lastSent = lease.DeepCopy(), true, false, sent
	if !rec.HeldBy(l.Holder) {
		l.Log.Info("primary Lease taken", "previous", rec.HolderIdentity(), "reason", take.Reason)
	}
	return nil
}

// desiredLocked is the Lease naming this instance, renewed at sent, built on the last one read.
func (l *PrimaryLease) desiredLocked(rec LeaseRecord, sent time.Time) *coordinationv1.Lease {
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: l.Key.Name, Namespace: l.Key.Namespace}}
	if rec.Exists && l.last != nil {
		lease = l.last.DeepCopy()
	}
	if l.owner != nil && len(lease.OwnerReferences) == 0 {
		lease.OwnerReferences = []metav1.OwnerReference{*l.owner}
	}
	now := metav1.NewMicroTime(sent)
	s := &lease.Spec
	if me := l.Holder.Identity(); ptr.Deref(s.HolderIdentity, "") != me {
		if rec.Exists && rec.Holder != "" {
			s.LeaseTransitions = ptr.To(ptr.Deref(s.LeaseTransitions, 0) + 1)
		}
		s.HolderIdentity, s.AcquireTime = ptr.To(me), &now
	}
	s.RenewTime, s.LeaseDurationSeconds = &now, ptr.To(int32(LeaseTTL/time.Second))
	l.applyFallbackLocked(lease)
	return lease
}

// AllowWrites acquires or renews the Lease, then runs clearReadOnly while the Lease is still
// valid, bounded by the self-fencing deadline. With the Lease disabled it runs clearReadOnly.
// It refuses (ErrDemoted) while a demotion holds the server read-only, whichever of the two
// started first: both run under one gate.
func (l *PrimaryLease) AllowWrites(ctx context.Context, clearReadOnly func(context.Context) error) error {
	if !l.Enabled() {
		l.gate.Lock()
		defer l.gate.Unlock()
		if l.Demoted() {
			return ErrDemoted
		}
		return clearReadOnly(ctx)
	}
	if l.Demoted() {
		return ErrDemoted
	}
	if err := l.Acquire(ctx); err != nil {
		return err
	}
	l.gate.Lock()
	defer l.gate.Unlock()
	l.mu.Lock()
	held, deadline, demoted := l.held, SelfFenceDeadline(l.lastSent), l.demoted
	l.mu.Unlock()
	if demoted {
		// Demoted while the Lease was being acquired: give it back, the server stays read-only.
		if err := l.Release(ctx); err != nil {
			l.Log.Info("releasing the primary Lease after a demotion failed; it will expire", "error", err.Error())
		}
		return ErrDemoted
	}
	remaining := deadline.Sub(l.Clock.Now())
	if !held || remaining <= 0 {
		return fmt.Errorf("the primary Lease was not renewed in time; staying read-only")
	}
	ctx, cancel := context.WithTimeout(ctx, remaining)
	defer cancel()
	return clearReadOnly(ctx)
}

// Demote turns the server read-only with stop and releases the Lease, under the gate that
// AllowWrites and the self-fence hold, and latches the server read-only: AllowWrites refuses
// until EndDemotion, so that a promotion decided before the demotion (a role reconciler pass
// that read an older Cluster) cannot make the server writable again after it. The Lease is
// released only once stop succeeded.
func (l *PrimaryLease) Demote(ctx context.Context, stop func(context.Context) error) error {
	l.gate.Lock()
	l.mu.Lock()
	l.demoted = true
	l.demotions++
	l.mu.Unlock()
	err := stop(ctx)
	l.gate.Unlock()
	if err != nil {
		return err
	}
	if err := l.Release(ctx); err != nil {
		// The server is read-only already: the Lease expires on its own.
		l.Log.Info("releasing the primary Lease after a demotion failed; it will expire", "error", err.Error())
	}
	return nil
}

// Demoted reports whether a demotion holds the server read-only.
func (l *PrimaryLease) Demoted() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.demoted
}

// DemotionMark returns the number of demotions so far; a role reconciler pass takes it before it
// reads the Cluster, and passes it to EndDemotion.
func (l *PrimaryLease) DemotionMark() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.demotions
}

// EndDemotion lifts the demotion latch, unless a demotion happened after mark was taken: the
// Cluster read since mark no longer names this instance as the target primary, so a later
// promotion is a new decision of the operator's.
func (l *PrimaryLease) EndDemotion(mark int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.demoted && l.demotions == mark {
		l.demoted = false
		l.Log.Info("demotion latch lifted: this instance is no longer the target primary")
	}
}

// Release deletes the Lease if it names this instance and Pod. Call it only once the server is
// read-only: another instance may take the Lease at once.
func (l *PrimaryLease) Release(ctx context.Context) error {
	l.mu.Lock()
	if !l.held && !l.maybeHeld {
		l.mu.Unlock()
		return nil
	}
	l.held = false
	l.epoch++
	l.fallback = nil // what the Lease carries is read from it from now on
	l.mu.Unlock()
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		// A renewal that was under way may have changed the Lease: read it again on a conflict.
		if err = l.deleteIfMine(ctx); err == nil || !apierrors.IsConflict(err) {
			break
		}
	}
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.maybeHeld = false
	l.mu.Unlock()
	return nil
}

// deleteIfMine deletes the Lease, as read now, if it names this instance and Pod: a Lease of an
// earlier Pod of this instance is left to expire, as that Pod may still run on a cut-off node,
// and so is one that records a semi-sync fallback this instance has not caught up from.
func (l *PrimaryLease) deleteIfMine(ctx context.Context) error {
	rec, err := l.Observe(ctx)
	if err != nil || !rec.Exists || !rec.HeldBy(l.Holder) {
		return err
	}
	l.mu.Lock()
	last := l.last
	// With the Lease disabled nothing reads the record any more (the operator then goes by the
	// primary's reports): the Lease is deleted as any other.
	atRisk := l.enabled && l.recordInLocked(last).AtRisk(l.Holder.Instance)
	l.mu.Unlock()
	if last == nil {
		// A concurrent read (a renewal, another release) found the Lease gone since this one.
		return nil
	}
	if atRisk {
		// Deleted, the record that this server acknowledged commits no replica may have would go
		// with it, and a failover would no longer know to wait for it: it expires instead.
		l.Log.Info("primary Lease left to expire, not released: it records a semi-sync fallback not yet caught up")
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, LeaseRequestTimeout)
	defer cancel()
	err = l.Client.Delete(ctx, last, client.Preconditions{UID: &last.UID, ResourceVersion: &last.ResourceVersion})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("releasing Lease %s: %w", l.Key, err)
	}
	l.Log.Info("primary Lease released")
	return nil
}

// Run keeps the Lease until ctx ends: it renews it when due and stops writes when the
// self-fencing deadline passes without a successful renewal (DecideLeaseStep). Beside it, while
// this instance does not hold the Lease, it reads the Lease every LeaseObserveInterval
// (observe), so that this instance knows when it first saw the holder's last renewal before it
// ever becomes a failover's target. It returns once no renewal or read is under way any more.
func (l *PrimaryLease) Run(ctx context.Context) {
	defer l.renewals.Wait()
	l.renewals.Go(func() { l.observe(ctx) })
	for {
		l.step(ctx)
		select {
		case <-ctx.Done():
			return
		case <-l.Clock.After(LeaseCheckInterval):
		}
	}
}

// observe reads the Lease every LeaseObserveInterval while it is enabled and this instance does
// not hold it (the holder's renewals read it anyway), until ctx ends. It runs apart from the
// lease loop, so that a read hanging in a cut network never delays a self-fence.
func (l *PrimaryLease) observe(ctx context.Context) {
	failing := false
	for {
		l.mu.Lock()
		read := l.enabled && !l.held
		l.mu.Unlock()
		if read {
			_, err := l.Observe(ctx)
			switch {
			case err != nil && !failing && ctx.Err() == nil:
				l.Log.Info("reading the primary Lease failed; its sightings wait for the next read", "error", err.Error())
			case err == nil && failing:
				l.Log.Info("reading the primary Lease again")
			}
			failing = err != nil
		}
		select {
		case <-ctx.Done():
			return
		case <-l.Clock.After(LeaseObserveInterval):
		}
	}
}

// step performs one decision of the lease loop.
func (l *PrimaryLease) step(ctx context.Context) {
	l.mu.Lock()
	c := LeaseClock{Now: l.Clock.Now(), Held: l.held, LastRenewSent: l.lastSent, RenewInFlight: l.inFlight}
	enabled := l.enabled
	l.mu.Unlock()
	if !enabled && c.Held {
		// spec.enablePrimaryLease turned off: nothing consults the Lease any more.
		if err := l.Release(ctx); err != nil {
			l.Log.Error(err, "releasing the primary Lease after it was disabled")
		}
		return
	}
	switch DecideLeaseStep(c) {
	case LeaseRenew:
		l.mu.Lock()
		l.inFlight = true
		l.mu.Unlock()
		l.renewals.Go(func() { l.renew(ctx) })
	case LeaseSelfFence:
		l.selfFence(ctx, "the primary Lease was not renewed in time")
	}
}

// renew renews the Lease; a Lease found taken by another instance stops writes at once.
func (l *PrimaryLease) renew(ctx context.Context) {
	defer func() {
		l.mu.Lock()
		l.inFlight = false
		l.mu.Unlock()
	}()
	err := l.Acquire(ctx)
	switch {
	case err == nil:
	case errors.Is(err, ErrLeaseHeld):
		l.Log.Info("primary Lease lost to another instance", "reason", err.Error())
		l.selfFence(ctx, "the primary Lease is held by another instance")
	case ctx.Err() == nil:
		l.Log.Info("renewing the primary Lease failed", "error", err.Error())
	}
}

// selfFence stops writes and gives the Lease up; on failure it is tried again next check.
func (l *PrimaryLease) selfFence(ctx context.Context, why string) {
	l.gate.Lock()
	defer l.gate.Unlock()
	l.mu.Lock()
	held := l.held
	l.mu.Unlock()
	if !held {
		return
	}
	l.Log.Info("stopping writes before the primary Lease can expire", "reason", why)
	if err := l.StopWrites(ctx); err != nil {
		l.Log.Error(err, "stopping writes failed; trying again")
		return
	}
	l.mu.Lock()
	l.held = false
	l.maybeHeld = true // the Lease may still name this instance: released on demotion
	l.epoch++
	l.fallback = nil // what the Lease carries is read from it from now on
	l.mu.Unlock()
}

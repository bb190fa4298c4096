package instance

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/failover"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
)

// TestPrimaryLease drives two instances' Lease keepers against the real API server on a fake
// clock: the rules of MayTakeLease and DecideLeaseStep as the Lease object shows them.
func TestPrimaryLease(t *testing.T) {
	env := kubetest.StartT(t, kubetest.Options{})
	ns := env.NewNamespace(t)
	key := types.NamespacedName{Namespace: ns, Name: "db-primary"}
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	var fenced1, fenced2 atomic.Int32
	// Each instance's Pod has the UID pod-<instance>, unless given another (a recreated Pod).
	keeperOf := func(name, uid string, fenced *atomic.Int32) *PrimaryLease {
		l := NewPrimaryLease(env.Client, key, failover.LeaseHolder{Instance: name, PodUID: uid}, clk,
			func(context.Context) error { fenced.Add(1); return nil }, testr.New(t).WithValues("instance", name))
		l.Configure(true, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: "u-1"})
		return l
	}
	keeper := func(name string, fenced *atomic.Int32) *PrimaryLease { return keeperOf(name, "pod-"+name, fenced) }
	c1, c2 := keeper("db-1", &fenced1), keeper("db-2", &fenced2)
	read := func() *coordinationv1.Lease {
		var l coordinationv1.Lease
		if err := env.Client.Get(t.Context(), key, &l); apierrors.IsNotFound(err) {
			return nil
		} else if err != nil {
			t.Fatal(err)
		}
		return &l
	}
	step := func(l *PrimaryLease) { l.step(t.Context()); l.renewals.Wait() }
	cleared := 0
	clear := func(context.Context) error { cleared++; return nil }

	// No Lease: created, then read-only is cleared.
	must(t, c1.AllowWrites(t.Context(), clear))
	l := read()
	if cleared != 1 || l == nil || ptr.Deref(l.Spec.HolderIdentity, "") != "db-1/pod-db-1" || ptr.Deref(l.Spec.LeaseDurationSeconds, 0) != 15 ||
		!c1.Held() {
		t.Fatalf("after the first AllowWrites: cleared %d, Lease %+v", cleared, l)
	}
	// Held by another and fresh: refused, read-only stays.
	if err := c2.AllowWrites(t.Context(), clear); !errors.Is(err, ErrLeaseHeld) || cleared != 1 {
		t.Fatalf("db-2 took a live Lease: %v (cleared %d)", err, cleared)
	}
	// Not yet due: no renewal. Due after the renew interval: renewed.
	clk.Step(LeaseRenewInterval - time.Second)
	step(c1)
	if !read().Spec.RenewTime.Time.Equal(l.Spec.RenewTime.Time) {
		t.Error("renewed before the renew interval")
	}
	clk.Step(time.Second)
	step(c1)
	if got := read().Spec.RenewTime.Time; !got.Equal(clk.Now()) {
		t.Errorf("renewTime %v after the renew interval, want %v", got, clk.Now())
	}
	// Not renewed until the deadline: the self-fence runs once, and the Lease is no longer held.
	clk.Step(LeaseTTL - LeaseSafetyMargin - time.Millisecond)
	c1.mu.Lock()
	c1.inFlight = true // a renewal hanging in the cut network
	c1.mu.Unlock()
	step(c1)
	if fenced1.Load() != 0 {
		t.Fatal("fenced before the deadline")
	}
	clk.Step(time.Millisecond)
	step(c1)
	step(c1)
	if fenced1.Load() != 1 || c1.Held() {
		t.Fatalf("at the deadline: fenced %d times, held %v; want fenced once, not held", fenced1.Load(), c1.Held())
	}
	c1.mu.Lock()
	c1.inFlight = false
	c1.mu.Unlock()
	// The Lease still names db-1 and has not expired for db-2 (seen unchanged for too short).
	if err := c2.Acquire(t.Context()); !errors.Is(err, ErrLeaseHeld) {
		t.Fatalf("db-2 took the Lease before it expired: %v", err)
	}
	clk.Step(LeaseTTL)
	must(t, c2.Acquire(t.Context()))
	l = read()
	if ptr.Deref(l.Spec.HolderIdentity, "") != "db-2/pod-db-2" || ptr.Deref(l.Spec.LeaseTransitions, 0) != 1 {
		t.Fatalf("after the takeover: %+v", l.Spec)
	}
	// db-1 cannot get it back while db-2 renews; it has nothing to release.
	if err := c1.AllowWrites(t.Context(), clear); !errors.Is(err, ErrLeaseHeld) {
		t.Fatalf("db-1 took back a live Lease: %v", err)
	}
	must(t, c1.Release(t.Context()))
	if ptr.Deref(read().Spec.HolderIdentity, "") != "db-2/pod-db-2" {
		t.Fatal("db-1 released db-2's Lease")
	}
	// A holder that finds its Lease taken stops writes at once, whatever its deadline.
	c1.mu.Lock()
	c1.held, c1.lastSent = true, clk.Now().Add(-LeaseRenewInterval)
	c1.mu.Unlock()
	step(c1)
	if fenced1.Load() != 2 || c1.Held() {
		t.Errorf("a holder whose Lease was taken: fenced %d times, held %v", fenced1.Load(), c1.Held())
	}
	// Release deletes the holder's own Lease; disabling the Lease releases it too.
	must(t, c2.Release(t.Context()))
	if read() != nil {
		t.Fatal("the Lease survived its holder's release")
	}
	must(t, c2.Acquire(t.Context()))
	c2.Configure(false, metav1.OwnerReference{})
	step(c2)
	if read() != nil || fenced2.Load() != 0 {
		t.Errorf("after enablePrimaryLease false: Lease %v, fenced %d", read(), fenced2.Load())
	}
	// Disabled: writes are allowed without a Lease.
	before := cleared
	must(t, c2.AllowWrites(t.Context(), clear))
	if cleared != before+1 || read() != nil {
		t.Error("with the Lease disabled, AllowWrites did not just clear read-only")
	}
	// A Pod recreated under db-1's name (the old one may still run on a cut-off node) does not
	// hold the old Pod's Lease: it neither renews nor releases it, and takes it over only once
	// it has expired.
	must(t, c1.AllowWrites(t.Context(), clear))
	var fenced3 atomic.Int32
	recreated := keeperOf("db-1", "pod-db-1-recreated", &fenced3)
	if err := recreated.AllowWrites(t.Context(), clear); !errors.Is(err, ErrLeaseHeld) {
		t.Fatalf("a recreated Pod of db-1 took the live Lease of the earlier Pod: %v", err)
	}
	must(t, recreated.Release(t.Context()))
	if ptr.Deref(read().Spec.HolderIdentity, "") != "db-1/pod-db-1" {
		t.Fatal("a recreated Pod of db-1 released the earlier Pod's Lease")
	}
	clk.Step(LeaseTTL)
	must(t, recreated.Acquire(t.Context()))
	if got := ptr.Deref(read().Spec.HolderIdentity, ""); got != "db-1/pod-db-1-recreated" {
		t.Errorf("after the expiry the recreated Pod holds the Lease as %q, want db-1/pod-db-1-recreated", got)
	}
}

// TestLeaseObservedBeforeTheTarget: an instance that does not hold the Lease reads it every
// LeaseObserveInterval (PrimaryLease.Run), so when it later tries to take the Lease over, the
// TTL on its own clock counts from when it first saw the holder's last renewal, not from its
// first attempt. Real API server, fake clock.
func TestLeaseObservedBeforeTheTarget(t *testing.T) {
	env := kubetest.StartT(t, kubetest.Options{})
	ns := env.NewNamespace(t)
	key := types.NamespacedName{Namespace: ns, Name: "db-primary"}
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(t0)
	keeper := func(name string) *PrimaryLease {
		l := NewPrimaryLease(env.Client, key, failover.LeaseHolder{Instance: name}, clk, func(context.Context) error { return nil },
			testr.New(t).WithValues("instance", name))
		l.Configure(true, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: "u-1"})
		return l
	}
	holder, observer := keeper("db-1"), keeper("db-2")
	must(t, holder.AllowWrites(t.Context(), func(context.Context) error { return nil }))
	sighting := func() LeaseSighting {
		observer.mu.Lock()
		defer observer.mu.Unlock()
		return observer.seen
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); observer.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	// Read at once, without any attempt to take the Lease.
	eventually(t, 10*time.Second, func() bool { s := sighting(); return s.Holder == "db-1" && s.RenewTime.Equal(t0) })
	if at := sighting().At; !at.Equal(t0) {
		t.Fatalf("first sighting at %s, want %s", at, t0)
	}
	// The holder renews; the observer's next read notes the new version when it sees it.
	clk.Step(LeaseRenewInterval)
	holder.step(t.Context())
	holder.renewals.Wait()
	renewed := t0.Add(LeaseRenewInterval)
	for i := 0; !sighting().RenewTime.Equal(renewed); i++ {
		if i == 10 {
			t.Fatalf("the observer never saw the renewal at %s: %+v", renewed, sighting())
		}
		// A read woken by the previous step may have come before the renewal: wake it again.
		clk.Step(LeaseObserveInterval)
		for wait := time.Now().Add(time.Second); time.Now().Before(wait) && !sighting().RenewTime.Equal(renewed); {
			time.Sleep(10 * time.Millisecond)
		}
	}
	first := sighting().At
	if first.Before(renewed) || first.After(renewed.Add(2*LeaseObserveInterval)) {
		t.Fatalf("the renewal at %s first seen at %s, want within %s of it", renewed, first, 2*LeaseObserveInterval)
	}
	// The holder stops renewing. One TTL after the observer first saw its last renewal, and not
	// before, the observer may take the Lease over: its first attempt comes only then.
	clk.SetTime(first.Add(LeaseTTL - time.Millisecond))
	if err := observer.Acquire(t.Context()); !errors.Is(err, ErrLeaseHeld) {
		t.Fatalf("taken over before the TTL had passed since the first sighting: %v", err)
	}
	clk.SetTime(first.Add(LeaseTTL))
	must(t, observer.Acquire(t.Context()))
	var l coordinationv1.Lease
	must(t, env.Client.Get(t.Context(), key, &l))
	if got := ptr.Deref(l.Spec.HolderIdentity, ""); got != "db-2" {
		t.Errorf("Lease held by %q after the takeover, want db-2", got)
	}
}

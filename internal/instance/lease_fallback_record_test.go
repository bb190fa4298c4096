package instance

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/failover"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
)

// TestLeaseFallbackRecord: the semi-sync fallback record as the API server stores it. Only the
// holder writes it; renewals carry it on; a holder whose record is at risk leaves its Lease to
// expire instead of deleting it; a new holder drops a record naming another instance.
func TestLeaseFallbackRecord(t *testing.T) {
	env := kubetest.StartT(t, kubetest.Options{})
	key := types.NamespacedName{Namespace: env.NewNamespace(t), Name: "db-primary"}
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	keeper := func(name string) *PrimaryLease {
		l := NewPrimaryLease(env.Client, key, failover.LeaseHolder{Instance: name, PodUID: "pod-" + name}, clk,
			func(context.Context) error { return nil }, testr.New(t).WithValues("instance", name))
		l.Configure(true, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: "u-1"})
		return l
	}
	stored := func() *failover.FallbackRecord {
		var l coordinationv1.Lease
		if err := env.Client.Get(t.Context(), key, &l); apierrors.IsNotFound(err) {
			return nil
		} else if err != nil {
			t.Fatal(err)
		}
		r, err := failover.ParseFallbackRecord(l.Annotations[failover.FallbackAnnotation])
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	exists := func() bool {
		err := env.Client.Get(t.Context(), key, &coordinationv1.Lease{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		return err == nil
	}
	c1, c2 := keeper("db-1"), keeper("db-2")
	rec := failover.FallbackRecord{Instance: "db-1", FellBackAt: clk.Now(), GTIDExecuted: "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-10"}

	if err := c1.RecordFallback(t.Context(), rec); !errors.Is(err, errNotHeld) {
		t.Fatalf("RecordFallback without the Lease = %v, want errNotHeld", err)
	}
	must(t, c1.Acquire(t.Context()))
	must(t, c1.RecordFallback(t.Context(), rec))
	if got := stored(); !got.AtRisk("db-1") || got.GTIDExecuted != rec.GTIDExecuted {
		t.Fatalf("stored record %+v, want %+v", got, rec)
	}
	clk.Step(LeaseRenewInterval)
	must(t, c1.Acquire(t.Context())) // a renewal
	if got := stored(); !got.AtRisk("db-1") {
		t.Fatalf("a renewal dropped the record: %+v", got)
	}
	// A manager restarted (a new keeper of the same Pod) reads its own record from the Lease.
	again := keeper("db-1")
	must(t, again.Acquire(t.Context()))
	if got := again.FallbackRecord(); !got.AtRisk("db-1") {
		t.Fatalf("the restarted keeper reads %+v", got)
	}
	// At risk, the Lease is not deleted on release: it expires, and keeps the record.
	must(t, again.Release(t.Context()))
	must(t, c1.Release(t.Context()))
	if !exists() || !stored().AtRisk("db-1") {
		t.Fatal("released with a record at risk: the Lease and its record are gone")
	}
	// Taken over after it expired (a failover the operator let go on): the record of db-1 is dropped.
	if _, err := c2.Observe(t.Context()); err != nil {
		t.Fatal(err)
	}
	clk.Step(LeaseTTL + time.Second)
	must(t, c2.Acquire(t.Context()))
	if got := stored(); got != nil {
		t.Fatalf("the new holder kept db-1's record: %+v", got)
	}
	// Once resumed, a release deletes the Lease again.
	resumed := failover.FallbackRecord{Instance: "db-2", FellBackAt: clk.Now(), GTIDExecuted: rec.GTIDExecuted, Resumed: true,
		ResumedAt: clk.Now(), ResumedGTIDSet: rec.GTIDExecuted}
	must(t, c2.RecordFallback(t.Context(), resumed))
	must(t, c2.Release(t.Context()))
	if exists() {
		t.Fatal("a Lease whose record is resumed was not released")
	}
}

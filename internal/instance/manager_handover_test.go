package instance

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/failover"
)

// TestInheritedLease: the renewal time handed over on CLOCK_MONOTONIC comes back on the new
// program's clock as long ago as it was sent, and the variable leaves the environment.
func TestInheritedLease(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC))
	t.Setenv(leaseRenewedEnv, strconv.FormatInt(monotonicNow()-int64(3*time.Second), 10))
	sent, ok := inheritedLease(clk)
	if !ok {
		t.Fatal("no Lease read")
	}
	if age := clk.Now().Sub(sent); age < 3*time.Second || age > 4*time.Second {
		t.Fatalf("the renewal is %s old on the new clock, want 3 s", age)
	}
	if _, set := os.LookupEnv(leaseRenewedEnv); set {
		t.Fatal("the handed-over Lease stays in the environment")
	}
	t.Setenv(leaseRenewedEnv, strconv.FormatInt(monotonicNow()+int64(time.Hour), 10))
	if _, ok := inheritedLease(clk); ok {
		t.Fatal("a renewal in the future was taken")
	}
	if _, ok := inheritedLease(clk); ok {
		t.Fatal("a Lease was read from an empty environment")
	}
}

// TestAdoptedLeaseIsHeldAndItsRecordAtRisk: a Lease handed over is held (the primary stays
// writable) until its deadline, and until it is read its fallback record counts as at risk.
func TestAdoptedLeaseIsHeldAndItsRecordAtRisk(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC))
	l := NewPrimaryLease(nil, types.NamespacedName{Namespace: "ns", Name: "db-primary"}, failover.LeaseHolder{Instance: "db-1", PodUID: "uid"},
		clk, nil, logr.Discard())
	l.AdoptHeld(clk.Now().Add(-2 * time.Second))
	if held, sent := l.HeldSince(); !held || !sent.Equal(clk.Now().Add(-2*time.Second)) {
		t.Fatalf("HeldSince = %v, %s after AdoptHeld", held, sent)
	}
	if !l.Held() || !l.MayHold() {
		t.Fatal("an adopted Lease is not held")
	}
	if rec := l.FallbackRecord(); rec == nil || rec.Instance != "db-1" {
		t.Fatalf("FallbackRecord = %+v before the Lease was read, want one at risk", rec)
	}
	clk.Step(LeaseTTL)
	if l.Held() {
		t.Fatal("an adopted Lease is held past its self-fence deadline")
	}
}

func TestWithoutHandover(t *testing.T) {
	env := []string{"A=1", MysqldPIDEnv + "=7", leaseRenewedEnv + "=9", runningParametersEnv + "={}", "B=2", listenFDsEnv + "=x",
		managerSHA256Env + "=y"}
	if got := strings.Join(withoutHandover(env), " "); got != "A=1 B=2" {
		t.Fatalf("withoutHandover = %s", got)
	}
}

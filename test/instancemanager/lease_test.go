package instancemanager

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/failover"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instance"
)

// lease reads the primary Lease, nil when there is none.
func (w *world) lease(t *testing.T) *coordinationv1.Lease {
	t.Helper()
	var l coordinationv1.Lease
	err := w.env.Client.Get(t.Context(), types.NamespacedName{Namespace: w.key.Namespace, Name: "db-primary"}, &l)
	if apierrors.IsNotFound(err) {
		return nil
	}
	must(t, err)
	return &l
}

// fallbackRecord is the semi-sync fallback record the primary Lease carries: nil when there is no
// Lease, no record or one that does not parse (err says which).
func (w *world) fallbackRecord(t *testing.T) (*failover.FallbackRecord, error) {
	l := w.lease(t)
	if l == nil {
		return nil, nil
	}
	return failover.ParseFallbackRecord(l.Annotations[failover.FallbackAnnotation])
}

// holder is the instance the Lease names ("" for none).
func holder(l *coordinationv1.Lease) string {
	if l == nil {
		return ""
	}
	return failover.ParseLeaseHolder(ptr.Deref(l.Spec.HolderIdentity, "")).Instance
}

func renewTime(l *coordinationv1.Lease) time.Time {
	if l == nil || l.Spec.RenewTime == nil {
		return time.Time{}
	}
	return l.Spec.RenewTime.Time
}

// waitLeaseHeld waits until holder holds the Lease and has renewed it once more.
func (w *world) waitLeaseHeld(t *testing.T, who string) *coordinationv1.Lease {
	t.Helper()
	var first *coordinationv1.Lease
	eventually(t, 10*time.Second, "the Lease held by "+who, func() bool {
		first = w.lease(t)
		return holder(first) == who
	})
	if d := ptr.Deref(first.Spec.LeaseDurationSeconds, 0); time.Duration(d)*time.Second != instance.LeaseTTL {
		t.Errorf("leaseDurationSeconds = %d, want %s", d, instance.LeaseTTL)
	}
	if len(first.OwnerReferences) != 1 || first.OwnerReferences[0].Name != "db" || first.OwnerReferences[0].Kind != "Cluster" {
		t.Errorf("the Lease is owned by %+v, want the Cluster", first.OwnerReferences)
	}
	begin := time.Now()
	eventually(t, instance.LeaseRenewInterval+3*time.Second, "the Lease renewed by "+who, func() bool {
		l := w.lease(t)
		return holder(l) == who && renewTime(l).After(renewTime(first))
	})
	t.Logf("Lease held by %s, renewed %s after it was first read", who, time.Since(begin).Round(time.Millisecond))
	return w.lease(t)
}

// testShutdownReleasesLease: SIGTERM makes the primary's manager turn read-only, delete its
// Lease, and only then stop mysqld.
func testShutdownReleasesLease(t *testing.T, w *world) {
	p := w.nodes[holder(w.lease(t))]
	if p == nil {
		t.Fatal("no instance holds the Lease")
	}
	p.stop(t)
	if l := w.lease(t); l != nil {
		t.Fatalf("after %s shut down the Lease is still there, held by %q", p.name, holder(l))
	}
	log, err := os.ReadFile(filepath.Join(p.dir, "manager.log"))
	must(t, err)
	released := strings.LastIndex(string(log), "primary Lease released")
	stopped := strings.LastIndex(string(log), "mysqld stopped")
	readOnly := strings.LastIndex(string(log), "writes stopped")
	if released < 0 || stopped < 0 || readOnly < 0 || readOnly > released || released > stopped {
		t.Errorf("%s at shutdown: read-only at %d, Lease released at %d, mysqld stopped at %d (log offsets); want in this order",
			p.name, readOnly, released, stopped)
	}
}

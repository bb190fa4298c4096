package cluster_test

import (
	"context"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/cluster"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// TestLeaseEventsOnTransitionsOnly runs the Cluster controller in a manager against the real API
// server, stops it and starts another, as an operator restart or a leader change does: the
// Lease each one finds when it starts is no transition and records no PrimaryLeaseTaken Event;
// a new holder seen by the running one records exactly one, and so does the release.
func TestLeaseEventsOnTransitionsOnly(t *testing.T) {
	w := newClusterWorld(t, nil)
	var c v1.Cluster
	w.Get("db", &c)
	now := metav1.NewMicroTime(time.Now())
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: specs.PrimaryLeaseName("db"), Namespace: w.NS,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: v1.GroupVersion.String(), Kind: "Cluster", Name: "db", UID: c.UID}}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("db-1"), LeaseDurationSeconds: ptr.To[int32](15),
			AcquireTime: &now, RenewTime: &now},
	}
	w.Create(lease)
	w.Events() // the world's own

	// leaseEvents drains the recorder and keeps the primary Lease Events.
	leaseEvents := func() []string {
		var out []string
		for _, e := range w.Events() {
			if strings.Contains(e, "PrimaryLease") {
				out = append(out, e)
			}
		}
		return out
	}
	operator := func(t *testing.T) {
		ow := *w.World
		ow.T = t
		ow.StartManager(func(mgr ctrl.Manager) error {
			r := &cluster.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: w.Recorder,
				Clock: w.Clock, OperatorImage: "operator:test",
				Instances: &fakeInstances{reports: map[string]*instanceclient.Status{}}}
			return r.SetupWithManager(mgr)
		})
	}
	renew := func(holder string) {
		t.Helper()
		w.Eventually("the Lease renewed by "+holder, func(ctx context.Context) (bool, error) {
			var l coordinationv1.Lease
			w.Get(lease.Name, &l)
			at := metav1.NewMicroTime(time.Now())
			l.Spec.HolderIdentity, l.Spec.RenewTime = ptr.To(holder), &at
			return w.Client.Update(ctx, &l) == nil, nil
		})
	}
	// quiet waits long enough for the watch to have delivered what it would, and returns the
	// Lease Events recorded meanwhile.
	quiet := func() []string {
		time.Sleep(2 * time.Second)
		return leaseEvents()
	}

	t.Run("the first operator finds the Lease held: no Event; a renewal: none; a new holder: one", func(t *testing.T) {
		operator(t)
		if got := quiet(); len(got) != 0 {
			t.Fatalf("an operator starting with a held Lease recorded %q; want none", got)
		}
		renew("db-1")
		if got := quiet(); len(got) != 0 {
			t.Errorf("a renewal by the same holder recorded %q; want none", got)
		}
		renew("db-2")
		w.Eventually("a PrimaryLeaseTaken Event for db-2", func(context.Context) (bool, error) {
			got := leaseEvents()
			if len(got) > 1 || (len(got) == 1 && !strings.Contains(got[0], "PrimaryLeaseTaken")) {
				t.Fatalf("a new holder recorded %q; want one PrimaryLeaseTaken", got)
			}
			return len(got) == 1, nil
		})
	})
	t.Run("a restarted operator finds the Lease held: no Event; its release: one", func(t *testing.T) {
		operator(t)
		if got := quiet(); len(got) != 0 {
			t.Fatalf("a restarted operator recorded %q for the Lease it found; want none", got)
		}
		var l coordinationv1.Lease
		w.Get(lease.Name, &l)
		if err := w.Client.Delete(w.Ctx, &l); err != nil {
			t.Fatal(err)
		}
		w.Eventually("a PrimaryLeaseReleased Event", func(context.Context) (bool, error) {
			got := leaseEvents()
			if len(got) > 1 || (len(got) == 1 && !strings.Contains(got[0], "PrimaryLeaseReleased")) {
				t.Fatalf("the release recorded %q; want one PrimaryLeaseReleased", got)
			}
			return len(got) == 1, nil
		})
	})
}

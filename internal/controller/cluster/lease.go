package cluster

import (
	"context"
	"fmt"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/failover"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// readLease reads the primary Lease <cluster>-primary from the API server (the operator does not
// cache Leases): a stale copy could show a Lease expired that its holder has renewed since. The
// Lease comes back with when this operator first saw its holder and renewTime, on its own clock
// (failover.LeaseExpiry measures the expiry from it, not from the holder's renewTime alone).
func (r *Reconciler) readLease(ctx context.Context, c *v1.Cluster) (failover.Lease, error) {
	var l coordinationv1.Lease
	key := client.ObjectKey{Namespace: c.Namespace, Name: specs.PrimaryLeaseName(c.Name)}
	err := r.APIReader.Get(ctx, key, &l)
	now := r.Clock.Now()
	if err != nil {
		if client.IgnoreNotFound(err) == nil {
			return r.leases.observe(key.String(), failover.Lease{}, now), nil
		}
		return failover.Lease{}, fmt.Errorf("reading the primary Lease of Cluster %s: %w", c.Name, err)
	}
	return r.leases.observe(key.String(), observeLease(&l), now), nil
}

// leaseObservations is a failover.LeaseObserver safe for concurrent reconciles.
type leaseObservations struct {
	mu sync.Mutex
	o  failover.LeaseObserver
}

func (s *leaseObservations) observe(key string, l failover.Lease, now time.Time) failover.Lease {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.o.Observe(key, l, now)
}

// last is the Lease last observed under key, without reading it again.
func (s *leaseObservations) last(key string) (failover.Lease, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.o.Last(key)
}

// observeLease is the Lease as the failover engine reads it: the holder's instance and Pod
// parsed out of holderIdentity (failover.ParseLeaseHolder, as the instances do), and the
// semi-sync fallback record the holder wrote into it.
func observeLease(l *coordinationv1.Lease) failover.Lease {
	h := failover.ParseLeaseHolder(ptr.Deref(l.Spec.HolderIdentity, ""))
	out := failover.Lease{Exists: true, Holder: h.Instance, HolderPodUID: h.PodUID,
		TTL: time.Duration(ptr.Deref(l.Spec.LeaseDurationSeconds, 0)) * time.Second}
	if t := l.Spec.RenewTime; t != nil {
		out.RenewTime = t.Time
	}
	if v := l.Annotations[failover.FallbackAnnotation]; v != "" {
		rec, err := failover.ParseFallbackRecord(v)
		if err != nil {
			// Unreadable, it counts as at risk for the holder: never as "no fallback".
			rec = &failover.FallbackRecord{Instance: h.Instance}
		}
		out.Fallback = rec
	}
	return out
}

// planLeaseEvents warns while the Lease names a holder that stopped renewing it: that instance
// turned itself read-only, and a failover may promote another. The message names the expiry, so
// the recorder folds the repeats of one expiry into one Event with a count.
func (d *Decision) planLeaseEvents(o Observation) {
	l := o.Lease
	if l.Holder == "" || !failover.LeaseExpired(l, o.Now) {
		return
	}
	d.event(stepStatus, evLeaseExpired.With(l.Holder, failover.LeaseExpiry(l).UTC().Format(time.RFC3339)))
}

// leaseTransitions enqueues the Cluster that owns a primary Lease whenever the Lease is taken,
// changes holder or is released, and records that on the Cluster as an Event: the transitions
// happen between two reconciles, which see only the Lease of the moment. Only a transition the
// watch saw happen is an Event: the Leases an operator finds when it starts (its informer's
// initial list, after a restart or a leader change) were taken before, and already reported; a
// renewal (same holder) is none either.
func leaseTransitions(rec record.EventRecorder) handler.TypedEventHandler[client.Object, reconcile.Request] {
	type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]
	emit := func(l client.Object, q queue, kind string, args ...any) {
		c := owningCluster(l)
		if c == nil {
			return
		}
		q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(c)})
		if kind == "" {
			return
		}
		ev := evLeaseTaken
		if kind == "released" {
			ev = evLeaseReleased
		}
		e := ev.With(args...)
		rec.Event(c, e.Kind.Type, e.Kind.Reason, e.Message)
	}
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q queue) {
			kind := "taken"
			if e.IsInInitialList || holderOf(e.Object) == "" {
				kind = ""
			}
			emit(e.Object, q, kind, holderOf(e.Object))
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q queue) {
			kind := ""
			if h := holderOf(e.ObjectNew); h != holderOf(e.ObjectOld) && h != "" {
				kind = "taken"
			}
			emit(e.ObjectNew, q, kind, holderOf(e.ObjectNew))
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q queue) {
			emit(e.Object, q, "released", holderOf(e.Object))
		},
	}
}

// owningCluster is the Cluster named in a primary Lease's owner references, as a reference an
// Event can be recorded on; nil for any other Lease.
func owningCluster(o client.Object) *v1.Cluster {
	for _, ref := range o.GetOwnerReferences() {
		if ref.Kind == "Cluster" && ref.APIVersion == v1.GroupVersion.String() && o.GetName() == specs.PrimaryLeaseName(ref.Name) {
			return &v1.Cluster{
				TypeMeta:   metav1.TypeMeta{APIVersion: ref.APIVersion, Kind: ref.Kind},
				ObjectMeta: metav1.ObjectMeta{Name: ref.Name, Namespace: o.GetNamespace(), UID: ref.UID},
			}
		}
	}
	return nil
}

// holderOf is the instance a Lease names as its holder ("" for none).
func holderOf(o client.Object) string {
	if l, ok := o.(*coordinationv1.Lease); ok {
		return failover.ParseLeaseHolder(ptr.Deref(l.Spec.HolderIdentity, "")).Instance
	}
	return ""
}

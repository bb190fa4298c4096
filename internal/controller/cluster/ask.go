package cluster

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
)

// SuspectTimeout bounds the report of a suspect instance (splitSuspects), instead of the status
// source's own timeout (instanceclient.DefaultTimeout, 5 s): the same 2 s the instances give each
// other. A primary cut off from the network answers nothing until the call times out, and every
// step of its failover (record it failing, stop the replicas' IO threads, delete its Pod) is a
// reconcile of its own that asks it again: at 5 s each, those asks alone took longer than its
// Lease takes to expire.
const SuspectTimeout = 2 * time.Second

// splitSuspects divides the Pods into those asked with the status source's own timeout and the
// suspect ones, asked with SuspectTimeout: the primary while the renewal of its Lease is overdue
// (failover.LeaseRenewalOverdue: its manager is not in touch with the API server either), and
// any other instance whose Pod's last ask went unanswered (unanswered, by Pod UID; a new Pod
// starts afresh; one answer in time makes it trusted again). A primary that still renews its
// Lease keeps the full timeout, whatever it answered before: slow is not cut off, and a failover
// is not started by a short timeout. A suspect that answers slower than SuspectTimeout is taken
// as not answering, which only ever delays a promotion or lets a failover step that promotes
// nobody proceed (unreachable is never taken as stopped).
func splitSuspects(pods []corev1.Pod, unanswered map[types.UID]bool, primary string, primaryOverdue bool) (trusted, suspect []corev1.Pod) {
	for _, p := range pods {
		if (p.Name == primary && primaryOverdue) || (p.Name != primary && unanswered[p.UID]) {
			suspect = append(suspect, p)
		} else {
			trusted = append(trusted, p)
		}
	}
	return trusted, suspect
}

// unansweredAsks remembers the Pods whose last ask went unanswered, safe for concurrent reconciles.
type unansweredAsks struct {
	mu    sync.Mutex
	since map[types.UID]time.Time
}

// unansweredForget is how long an unanswered Pod that is not asked again (gone) is remembered.
const unansweredForget = 10 * time.Minute

// snapshot returns the Pods whose last ask went unanswered.
func (u *unansweredAsks) snapshot() map[types.UID]bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := make(map[types.UID]bool, len(u.since))
	for uid := range u.since {
		out[uid] = true
	}
	return out
}

// note records the outcome of asking pods at now: those that answered are trusted again, those
// that did not are remembered.
func (u *unansweredAsks) note(pods []corev1.Pod, reports map[string]*instanceclient.Status, errs map[string]error, now time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.since == nil {
		u.since = map[types.UID]time.Time{}
	}
	for uid, t := range u.since {
		if now.Sub(t) > unansweredForget {
			delete(u.since, uid)
		}
	}
	for _, p := range pods {
		switch {
		case reports[p.Name] != nil:
			delete(u.since, p.UID)
		case errs[p.Name] != nil:
			if _, ok := u.since[p.UID]; !ok {
				u.since[p.UID] = now
			}
		}
	}
}

// askInstances asks the trusted Pods with the status source's own timeout and the suspect ones
// with SuspectTimeout, at the same time.
func (r *Reconciler) askInstances(ctx context.Context, o *Observation, trusted, suspect []corev1.Pod) (map[string]*instanceclient.Status, map[string]error) {
	if len(suspect) == 0 {
		return r.Instances.InstanceStatuses(ctx, o.Cluster, trusted)
	}
	reports, errs := map[string]*instanceclient.Status{}, map[string]error{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	ask := func(ctx context.Context, pods []corev1.Pod) {
		if len(pods) == 0 {
			return
		}
		rep, e := r.Instances.InstanceStatuses(ctx, o.Cluster, pods)
		mu.Lock()
		defer mu.Unlock()
		for k, v := range rep {
			reports[k] = v
		}
		for k, v := range e {
			errs[k] = v
		}
	}
	wg.Go(func() { ask(ctx, trusted) })
	wg.Go(func() {
		sctx, cancel := context.WithTimeout(ctx, SuspectTimeout)
		defer cancel()
		ask(sctx, suspect)
	})
	wg.Wait()
	return reports, errs
}

package cluster

import (
	"context"
	"errors"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/instances"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
)

// updateManager sends the instance manager of instance the operator's binary (stepManagerUpdate).
// A failure is a Warning and the update is tried again at a later reconcile: it never fails act,
// so that it holds back nothing else.
func (r *Reconciler) updateManager(ctx context.Context, o *Observation, instance string) []kit.Event {
	up, ok := r.Instances.(instances.ManagerUpdater)
	if instance == "" || !ok || o.ManagerBinary == nil {
		return nil
	}
	var pod *corev1.Pod
	for i := range o.Pods {
		if o.Pods[i].Name == instance {
			pod = &o.Pods[i]
		}
	}
	if pod == nil {
		return nil
	}
	if try, ok := o.ManagerUpdatesSent[instance]; ok && !try.Failed {
		// It took the binary managerUpdateSettle ago and still runs its old one: its replacement
		// failed (its log says why). Counted as a refusal, so that the next sending backs off and
		// the third replaces its Pod.
		r.managerUpdates.fail(pod.UID, o.ManagerBinary.SHA256, r.Clock.Now(), true)
		return []kit.Event{evManagerUpdateFailed.With(instance, "it took the binary but still runs its previous one")}
	}
	res, err := up.UpdateManager(ctx, o.Cluster, *pod, o.ManagerBinary)
	if err != nil {
		// An answer of the instance refusing the binary (4xx: it does not run there, the instance
		// cannot replace its program) counts toward replacing its Pod instead; no answer does not.
		var httpErr *instanceclient.HTTPError
		refused := errors.As(err, &httpErr) && httpErr.StatusCode >= 400 && httpErr.StatusCode < 500
		r.managerUpdates.fail(pod.UID, o.ManagerBinary.SHA256, r.Clock.Now(), refused)
		return []kit.Event{evManagerUpdateFailed.With(instance, clipMessage(err.Error()))}
	}
	r.managerUpdates.note(pod.UID, o.ManagerBinary.SHA256, r.Clock.Now())
	return []kit.Event{evManagerUpdating.With(res.Version, instance)}
}

// sentManagerUpdates remembers which Pods this operator sent which instance manager binary, and
// when, safe for concurrent reconciles.
type sentManagerUpdates struct {
	mu   sync.Mutex
	sent map[types.UID]sentManagerUpdate
}

type sentManagerUpdate struct {
	sha256 string
	// at is the last sending; failures counts the sendings that failed since one succeeded,
	// refusals those the instance refused (answered 4xx).
	at                  time.Time
	failures, refusals  int
	lastFailed, refused bool
}

// ManagerUpdateTry is what this operator remembers of sending one instance the binary.
type ManagerUpdateTry struct {
	At time.Time
	// Failed: the last sending failed; Failures counts those since one succeeded, Refusals those
	// the instance refused.
	Failed             bool
	Failures, Refusals int
}

// sentManagerForget is how long a sending is remembered; managerUpdateSettle is far shorter.
const sentManagerForget = 10 * time.Minute

// note records a successful sending of the binary of sha256 to pod at at.
func (s *sentManagerUpdates) note(pod types.UID, sha256 string, at time.Time) {
	s.record(pod, sha256, at, func(u *sentManagerUpdate) { u.lastFailed, u.failures = false, 0 })
}

// fail records a failed sending; refused says the instance answered, refusing it.
func (s *sentManagerUpdates) fail(pod types.UID, sha256 string, at time.Time, refused bool) {
	s.record(pod, sha256, at, func(u *sentManagerUpdate) {
		u.lastFailed = true
		u.failures++
		if refused {
			u.refusals++
		}
	})
}

func (s *sentManagerUpdates) record(pod types.UID, sha256 string, at time.Time, change func(*sentManagerUpdate)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sent == nil {
		s.sent = map[types.UID]sentManagerUpdate{}
	}
	for uid, u := range s.sent {
		if at.Sub(u.at) > sentManagerForget {
			delete(s.sent, uid)
		}
	}
	u := s.sent[pod]
	if u.sha256 != sha256 {
		u = sentManagerUpdate{sha256: sha256}
	}
	u.at = at
	change(&u)
	s.sent[pod] = u
}

// forPods returns, by instance, what was tried of sending the Pods the binary of sha256.
func (s *sentManagerUpdates) forPods(pods []corev1.Pod, sha256 string) map[string]ManagerUpdateTry {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]ManagerUpdateTry{}
	for _, p := range pods {
		if u, ok := s.sent[p.UID]; ok && u.sha256 == sha256 {
			out[p.Name] = ManagerUpdateTry{At: u.at, Failed: u.lastFailed, Failures: u.failures, Refusals: u.refusals}
		}
	}
	return out
}

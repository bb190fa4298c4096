package cluster

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/instances"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
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
	res, err := up.UpdateManager(ctx, o.Cluster, *pod, o.ManagerBinary)
	if err != nil {
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
	at     time.Time
}

// sentManagerForget is how long a sending is remembered; managerUpdateSettle is far shorter.
const sentManagerForget = 10 * time.Minute

func (s *sentManagerUpdates) note(pod types.UID, sha256 string, at time.Time) {
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
	s.sent[pod] = sentManagerUpdate{sha256: sha256, at: at}
}

// forPods returns, by instance, when the Pods were sent the binary of sha256.
func (s *sentManagerUpdates) forPods(pods []corev1.Pod, sha256 string) map[string]time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]time.Time{}
	for _, p := range pods {
		if u, ok := s.sent[p.UID]; ok && u.sha256 == sha256 {
			out[p.Name] = u.at
		}
	}
	return out
}

package instance

import (
	"context"
	"errors"
	"slices"
	"time"

	"k8s.io/utils/clock"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// PeerWatch tells the IsolationDetector whenever another instance answers: an instance that
// reaches a peer is not isolated, even while the API server is out of reach.
type PeerWatch struct {
	// Reach asks one instance for an answer; nil means it answered.
	Reach func(ctx context.Context, instance string) error
	// Members names the instances to ask (the local one is skipped).
	Members   func() []string
	Self      string
	Isolation *IsolationDetector
	Interval  time.Duration
	Clock     clock.Clock
}

// Run asks the peers, in turn until one answers, every Interval until ctx ends.
func (w *PeerWatch) Run(ctx context.Context) {
	for {
		for _, name := range w.Members() {
			if name == w.Self {
				continue
			}
			if w.Reach(ctx, name) == nil {
				w.Isolation.ContactPeer()
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-w.Clock.After(w.Interval):
		}
	}
}

// Reach asks instance's control API for its status: any answer, even an error status, proves
// the network path.
func (p ControlPeers) Reach(ctx context.Context, instance string) error {
	_, err := p.Client.Status(ctx, p.Target(instance))
	var httpErr *instanceclient.HTTPError
	if errors.As(err, &httpErr) {
		return nil
	}
	return err
}

// ClusterMembers names the instances of a Cluster that may exist: every serial ever used, and
// the listed ones.
func ClusterMembers(c *v1alpha1.Cluster, listed []string) []string {
	out := slices.Clone(listed)
	for serial := int32(1); serial <= max(c.Status.LatestGeneratedNode, c.Spec.Instances); serial++ {
		if name := specs.InstanceName(c.Name, serial); !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

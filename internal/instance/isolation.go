package instance

import (
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// IsolationDetector tells when the instance has reached neither the API server nor any other
// instance for longer than its limit: it is then cut off from everything that could coordinate
// it, its liveness probe fails and the kubelet restarts it (if the node is isolated too, the
// restart still happens locally). An API server outage alone is not isolation: the replicas keep
// serving reads, and a primary stops writes through its Lease deadline instead (PrimaryLease).
//
// The count starts only once the instance is bootstrapped (Arm): a clone longer than the limit
// must not get the container killed and the clone started again.
type IsolationDetector struct {
	clock clock.PassiveClock
	limit time.Duration
	mu    sync.Mutex
	armed bool
	// lastAPI and lastPeer are the last successful contacts.
	lastAPI, lastPeer time.Time
}

// NewIsolationDetector returns a detector that counts nothing until Arm.
func NewIsolationDetector(c clock.PassiveClock, limit time.Duration) *IsolationDetector {
	return &IsolationDetector{clock: c, limit: limit}
}

// Arm starts counting from now: bootstrap is over.
func (d *IsolationDetector) Arm() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.armed {
		d.armed, d.lastAPI, d.lastPeer = true, d.clock.Now(), d.clock.Now()
	}
}

// ContactAPIServer records a successful call to the API server.
func (d *IsolationDetector) ContactAPIServer() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.lastAPI = d.clock.Now()
}

// ContactPeer records an answer from another instance.
func (d *IsolationDetector) ContactPeer() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.lastPeer = d.clock.Now()
}

// Isolated reports whether, once armed, both the last contact with the API server and the last
// with a peer are older than the limit.
func (d *IsolationDetector) Isolated() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.armed && d.clock.Since(d.lastAPI) > d.limit && d.clock.Since(d.lastPeer) > d.limit
}

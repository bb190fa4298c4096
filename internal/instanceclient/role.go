package instanceclient

import (
	"context"
	"net/http"
)

// Paths of the role changes the operator asks during a failover.
const (
	// DemotePath: POST turns the server read-only, ends its client sessions and releases the
	// primary Lease.
	DemotePath = "/demote"
	// StopReplicaIOPath: POST stops the replication IO thread (the receiver); the applier keeps
	// applying what was received.
	StopReplicaIOPath = "/replication/stop-io"
)

// Demote asks t to stop accepting writes: super_read_only on, client sessions ended, the primary
// Lease released. It is idempotent.
func (c *Client) Demote(ctx context.Context, t Target) error {
	return c.do(ctx, t, http.MethodPost, DemotePath, struct{}{}, nil)
}

// StopReplicaIO asks t to stop its replication IO thread. It is idempotent, and a server without
// a replication channel answers as if it had stopped.
func (c *Client) StopReplicaIO(ctx context.Context, t Target) error {
	return c.do(ctx, t, http.MethodPost, StopReplicaIOPath, struct{}{}, nil)
}

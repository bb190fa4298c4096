package instanceclient

import (
	"context"
	"net/http"
)

// SemiSyncReplicaPath: POST tells a replica whether it is one of the semi-sync participants,
// the replicas that acknowledge commits (at most maxSyncReplicas).
const SemiSyncReplicaPath = "/semisync/replica"

// SemiSyncReplicaRequest is the body of POST /semisync/replica.
type SemiSyncReplicaRequest struct {
	// Participant: the replica acknowledges (rpl_semi_sync_replica_enabled ON); otherwise it
	// replicates asynchronously.
	Participant bool `json:"participant"`
}

// SetSemiSyncReplica tells t (a replica) whether it acknowledges. It is idempotent; the answer
// comes once the setting is applied and the receiver restarted.
func (c *Client) SetSemiSyncReplica(ctx context.Context, t Target, req SemiSyncReplicaRequest) error {
	return c.do(ctx, t, http.MethodPost, SemiSyncReplicaPath, req, nil)
}

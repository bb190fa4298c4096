package instance

import (
	"context"
	"net/http"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/semisync"
)

// demote serves POST /demote: the operator demotes a primary it is replacing. The server turns
// super_read_only, its client sessions end, and the commits still waiting for a semi-sync
// acknowledgement end (DemoteServer); only then is it reported read-only, so that its
// gtid_executed is everything it wrote. With Demote set (the primary Lease), this happens under
// the Lease's gate, which also latches the server read-only against a promotion decided before;
// the Lease is then released. The operator deletes the Pod next, or moves targetPrimary.
func (c *ControlAPI) demote(w http.ResponseWriter, r *http.Request) {
	stop := func(ctx context.Context) error { return DemoteServer(ctx, c.Op, c.Log, demoteAckWaitTimeout) }
	var err error
	if c.Demote != nil {
		err = c.Demote(r.Context(), stop)
	} else {
		err = stop(r.Context())
	}
	if err != nil {
		c.Log.Error(err, "demoting on the operator's request")
		http.Error(w, "demoting failed: "+err.Error(), http.StatusInternalServerError)
		return
	}
	if c.Demote == nil && c.ReleaseLease != nil {
		if err := c.ReleaseLease(r.Context()); err != nil {
			// The server is read-only already: the Lease expires on its own.
			c.Log.Info("releasing the primary Lease after a demotion failed; it will expire", "error", err.Error())
		}
	}
	c.Sweep.Trigger()
	c.Log.Info("demoted on the operator's request")
	writeJSON(w, struct{}{})
}

// stopReplicaIO serves POST /replication/stop-io: a failover stops the receiver of every replica
// of the failing primary, so the primary can no longer collect semi-sync acknowledgements. The
// applier keeps applying the relay log. A server without a channel has nothing to stop. It runs
// under the semi-sync participation lock: a change of participation restarts a running receiver
// to apply it, and one that read the receiver running just before this stop would otherwise
// start it again after.
func (c *ControlAPI) stopReplicaIO(w http.ResponseWriter, r *http.Request) {
	st, ok := c.localStatus(w, r)
	if !ok {
		return
	}
	if st.Replication == nil {
		writeJSON(w, struct{}{})
		return
	}
	err := c.Participation.Converge(func(semisync.Participation) error { return c.Op.StopReceiver(r.Context()) })
	if err != nil {
		c.Log.Error(err, "stopping the replication IO thread")
		http.Error(w, "stopping the IO thread failed", http.StatusInternalServerError)
		return
	}
	if st.Replication.IORunning != "No" {
		c.Log.Info("stopped the replication IO thread on the operator's request")
	}
	writeJSON(w, struct{}{})
}

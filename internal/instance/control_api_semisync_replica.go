package instance

import (
	"encoding/json"
	"net/http"
)

// semiSyncReplica serves POST /semisync/replica: the operator tells a replica whether it is one
// of the plan's participants, and the replica side is switched to match (SemiSyncParticipation).
// The primary refuses: it waits for acknowledgements and sends none.
func (c *ControlAPI) semiSyncReplica(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Participant *bool `json:"participant"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&req); err != nil || req.Participant == nil {
		http.Error(w, "want a JSON body with participant", http.StatusBadRequest)
		return
	}
	if c.Participation == nil {
		http.Error(w, "this instance manager does not manage semi-sync", http.StatusConflict)
		return
	}
	st, ok := c.localStatus(w, r)
	if !ok {
		return
	}
	if st.Writable() {
		http.Error(w, "the primary does not acknowledge", http.StatusConflict)
		return
	}
	if err := c.Participation.Tell(r.Context(), c.Op, *req.Participant); err != nil {
		c.Log.Error(err, "applying the semi-sync participation", "participant", *req.Participant)
		http.Error(w, "applying the semi-sync participation failed", http.StatusInternalServerError)
		return
	}
	c.Log.Info("applied the semi-sync participation", "participant", *req.Participant)
	writeJSON(w, struct{}{})
}

package instanceclient

// Paths of the control API.
const (
	StatusPath   = "/status"
	SemiSyncPath = "/semisync"
)

// Status is what an instance reports of itself on GET /status.
type Status struct {
	// Instance is the reporting instance's name.
	Instance string `json:"instance"`
	// Role is primary or replica as mysqld runs it (read_only off means primary).
	Role string `json:"role"`
	// ReadOnly mirrors super_read_only.
	ReadOnly bool `json:"readOnly"`
	// GTIDExecuted is @@gtid_executed.
	GTIDExecuted string `json:"gtidExecuted"`
	// Replication is the replica's applier state; nil on a primary.
	Replication *ReplicationStatus `json:"replication,omitempty"`
	// SemiSync is the primary's semi-sync state; nil on a replica or when semi-sync is off.
	SemiSync *SemiSyncStatus `json:"semiSync,omitempty"`
}

// ReplicationStatus is a replica's view of its source.
type ReplicationStatus struct {
	Source     string `json:"source"`
	IORunning  bool   `json:"ioRunning"`
	SQLRunning bool   `json:"sqlRunning"`
	LastError  string `json:"lastError,omitempty"`
	// LagSeconds is the applier lag; -1 when unknown.
	LagSeconds int64 `json:"lagSeconds"`
}

// SemiSyncStatus mirrors the primary's semi-sync status variables.
type SemiSyncStatus struct {
	Active              bool  `json:"active"`
	WaitForReplicaCount int32 `json:"waitForReplicaCount"`
	Clients             int32 `json:"clients"`
}

// SemiSyncRequest is the body of POST /semisync: the runtime acknowledgement count to apply.
type SemiSyncRequest struct {
	WaitForReplicaCount int32 `json:"waitForReplicaCount"`
}

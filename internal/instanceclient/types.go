package instanceclient

// Paths of the control API.
const (
	StatusPath   = "/status"
	SemiSyncPath = "/semisync"
)

// Status is what an instance reports of itself on GET /status: what the operator's switchover
// and failover decisions need. Fields added later are zero in the reports of instance managers
// that predate them, and each one's zero value is the conservative reading.
type Status struct {
	// Instance is the reporting instance's name.
	Instance string `json:"instance"`
	// Role is primary or replica as mysqld runs it (read_only off means primary).
	Role string `json:"role"`
	// ReadOnly is @@read_only (super_read_only implies it): the server refuses ordinary clients'
	// writes.
	ReadOnly bool `json:"readOnly"`
	// SuperReadOnly is @@super_read_only: the server refuses every write, administrators' too.
	SuperReadOnly bool `json:"superReadOnly,omitempty"`
	// GTIDExecuted is @@gtid_executed.
	GTIDExecuted string `json:"gtidExecuted"`
	// GTIDInFlight are the GTIDs its sessions own and have not committed yet (@@gtid_owned, read
	// before GTIDExecuted): with the AFTER_SYNC wait point, a commit waiting for its semi-sync
	// acknowledgement is in the binary log, and perhaps on a replica, but not yet in
	// GTIDExecuted. Empty in the reports of instance managers that predate it.
	GTIDInFlight string `json:"gtidInFlight,omitempty"`
	// Replication is the replica's applier state; nil on a primary.
	Replication *ReplicationStatus `json:"replication,omitempty"`
	// SemiSync is the primary's semi-sync state; nil on a replica or when semi-sync is off.
	SemiSync *SemiSyncStatus `json:"semiSync,omitempty"`
	// SemiSyncReplica is the replica side of semi-sync; nil when it is not enabled.
	SemiSyncReplica *SemiSyncReplicaStatus `json:"semiSyncReplica,omitempty"`
	// LeaseHeld: this instance holds the primary Lease <cluster>-primary and renewed it in time.
	LeaseHeld bool `json:"leaseHeld,omitempty"`
	// EndingSessions: the instance stopped taking writes and ends every client session while a
	// write Service may still route to it (instance.SessionSweep); it serves no reads meanwhile.
	EndingSessions bool `json:"endingSessions,omitempty"`
	// AckWaiters is the number of sessions whose commit waits for a semi-sync acknowledgement:
	// their transaction is in the binary log (and perhaps on a replica) but not yet in
	// GTIDExecuted. LongestAckWaitMillis is how long the oldest of them has waited (whole
	// seconds, as the processlist counts them).
	AckWaiters           int32 `json:"ackWaiters,omitempty"`
	LongestAckWaitMillis int64 `json:"longestAckWaitMillis,omitempty"`
	// Bootstrapping: initialization or the clone from the primary is not over yet; the instance
	// has no data to serve and is no candidate for promotion.
	Bootstrapping bool `json:"bootstrapping,omitempty"`
	// Parameters is what became of spec.mysql.parameters on this instance; nil before its first
	// convergence, and from instance managers that predate it.
	Parameters *ParametersReport `json:"parameters,omitempty"`
	// Manager is the instance manager's own binary; nil from instance managers that predate it.
	Manager *ManagerIdentity `json:"manager,omitempty"`
}

// ParametersReport is what an instance did with the Cluster's user parameters.
type ParametersReport struct {
	// Hash identifies the parameters it converged on (instance.ParametersHash of the spec's).
	Hash string `json:"hash"`
	// PendingRestart are the parameters whose new value, or removal, waits for mysqld's restart.
	PendingRestart []string `json:"pendingRestart,omitempty"`
	// Refused are the parameters left out of my.cnf, with the reason.
	Refused []RefusedParameter `json:"refused,omitempty"`
}

// RefusedParameter is one parameter an instance left out, and why.
type RefusedParameter struct {
	Key    string `json:"key"`
	Reason string `json:"reason"`
}

// BootstrapDone reports whether initialization and clone are over.
func (s *Status) BootstrapDone() bool { return !s.Bootstrapping }

// ReplicationStatus is a replica's view of its source.
type ReplicationStatus struct {
	// Source is the source's host:port.
	Source string `json:"source"`
	// SourceInstance is the instance Source belongs to, "" when it is none of the cluster's.
	SourceInstance string `json:"sourceInstance,omitempty"`
	// IORunning and SQLRunning: the receiver and the applier run ("Yes").
	IORunning  bool `json:"ioRunning"`
	SQLRunning bool `json:"sqlRunning"`
	// IOState is Replica_IO_Running as MySQL reports it: Yes, No or Connecting.
	IOState string `json:"ioState,omitempty"`
	// LastError is the applier's last error, or else the receiver's.
	LastError string `json:"lastError,omitempty"`
	// LastIOErrno, LastIOError, LastSQLErrno and LastSQLError are the threads' last errors.
	LastIOErrno  int    `json:"lastIOErrno,omitempty"`
	LastIOError  string `json:"lastIOError,omitempty"`
	LastSQLErrno int    `json:"lastSQLErrno,omitempty"`
	LastSQLError string `json:"lastSQLError,omitempty"`
	// GTIDRetrieved is Retrieved_Gtid_Set: what the receiver got from the source, applied or
	// not (a candidate holds GTIDExecuted plus this once its relay log is applied).
	GTIDRetrieved string `json:"gtidRetrieved,omitempty"`
	// LagSeconds is the applier lag; -1 when unknown (a thread stopped, the source gone).
	LagSeconds int64 `json:"lagSeconds"`
}

// SemiSyncReplicaStatus is a replica's semi-sync state.
type SemiSyncReplicaStatus struct {
	// Enabled is rpl_semi_sync_replica_enabled; Active is Rpl_semi_sync_replica_status, true
	// while connected to its source as a semi-sync replica.
	Enabled bool `json:"enabled"`
	Active  bool `json:"active"`
}

// SemiSyncStatus mirrors the primary's semi-sync status variables. It is reported while the
// source side is on, and while it is off because the primary's instance manager fell back to
// asynchronous replication (Active false, FallenBack true); not when the spec disables semi-sync.
type SemiSyncStatus struct {
	Active              bool  `json:"active"`
	WaitForReplicaCount int32 `json:"waitForReplicaCount"`
	Clients             int32 `json:"clients"`
	// FallenBack: the instance manager switched the source side off after a commit waited
	// timeoutMillis (it acknowledges commits alone until semi-sync comes back).
	FallenBack bool `json:"fallenBack,omitempty"`
}

// SemiSyncRequest is the body of POST /semisync: the runtime acknowledgement count to apply.
type SemiSyncRequest struct {
	WaitForReplicaCount int32 `json:"waitForReplicaCount"`
}

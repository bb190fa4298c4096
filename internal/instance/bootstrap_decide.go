package instance

import "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"

// BootstrapAction is what an instance does with its data directory before mysqld first starts.
type BootstrapAction int

const (
	// BootstrapNone: the data directory holds data; start mysqld on it as it is. Existing data is
	// never replaced automatically, diverged or not.
	BootstrapNone BootstrapAction = iota
	// BootstrapInitialize: the first instance of a new cluster initializes an empty data
	// directory; once promoted, it creates the operator's accounts.
	BootstrapInitialize
	// BootstrapClone: initialize an empty data directory so that mysqld can start, then clone the
	// current primary into it.
	BootstrapClone
	// BootstrapWait: the data directory is empty and nothing safe can be done yet.
	BootstrapWait
	// BootstrapRecover: the first instance of a Cluster with bootstrap.recovery restores the base
	// backup into its empty data directory (verified) before mysqld first starts. It never
	// initializes an empty server, and nothing an initialized server gets at bootstrap (initdb
	// accounts, databases) is done on the restored one.
	BootstrapRecover
)

func (a BootstrapAction) String() string {
	return [...]string{"none", "initialize", "clone", "wait", "recover"}[a]
}

// BootstrapDecision is the outcome of DecideBootstrap.
type BootstrapDecision struct {
	Action BootstrapAction
	// Donor is the instance to clone from, for BootstrapClone.
	Donor  string
	Reason string
}

// DecideBootstrap decides from the data directory's state, whether the Cluster declares a
// recovery, and the Cluster status. Only an instance of a cluster that has never had a primary
// initializes a new one, and only when the Cluster declares no recovery: then it restores the
// backup instead. An empty instance recorded as the primary waits for a failover rather than
// starting an empty primary that would hide the cluster's data.
func DecideBootstrap(instance string, hasData, recovery bool, st *v1alpha1.ClusterStatus) BootstrapDecision {
	switch {
	case hasData:
		return BootstrapDecision{Action: BootstrapNone, Reason: "data directory in place"}
	case st.CurrentPrimary == instance:
		return BootstrapDecision{Action: BootstrapWait, Reason: "recorded as primary but has no data; waiting for a failover"}
	case st.CurrentPrimary != "":
		return BootstrapDecision{Action: BootstrapClone, Donor: st.CurrentPrimary, Reason: "new replica of " + st.CurrentPrimary}
	case st.TargetPrimary == instance && recovery:
		return BootstrapDecision{Action: BootstrapRecover, Reason: "first primary of a cluster recovered from a backup"}
	case st.TargetPrimary == instance:
		return BootstrapDecision{Action: BootstrapInitialize, Reason: "first primary of a new cluster"}
	}
	return BootstrapDecision{Action: BootstrapWait, Reason: "waiting for the first primary"}
}

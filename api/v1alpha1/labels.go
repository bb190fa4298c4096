package v1alpha1

// Label and annotation keys the operator sets and selects on. Children are always found by these
// labels, whatever their owner references say.
const (
	labelPrefix = "mysql.cloudnative-mysql.io/"

	// ClusterLabel names the Cluster an object belongs to.
	ClusterLabel = labelPrefix + "cluster"
	// InstanceLabel names the instance (Pod) an object belongs to.
	InstanceLabel = labelPrefix + "instance"
	// RoleLabel is the observed role of an instance Pod: primary or replica.
	RoleLabel = labelPrefix + "role"
	// RoutableLabel is "true" on instance Pods the role Services may route to (cleared by fencing).
	RoutableLabel = labelPrefix + "routable"
	// ScheduledBackupLabel names the ScheduledBackup that created a Backup.
	ScheduledBackupLabel = labelPrefix + "scheduled-backup"
	// ImmediateBackupLabel is "true" on the Backup a ScheduledBackup created for spec.immediate.
	ImmediateBackupLabel = labelPrefix + "immediate-backup"
	// BackupLabel names the Backup a Job belongs to.
	BackupLabel = labelPrefix + "backup"
)

// Instance roles as written in RoleLabel.
const (
	RolePrimary = "primary"
	RoleReplica = "replica"
)

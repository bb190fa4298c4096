package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterSpec is the desired state of a highly available MySQL cluster.
// +kubebuilder:validation:XValidation:rule="self.minSyncReplicas <= self.maxSyncReplicas",message="minSyncReplicas must not be greater than maxSyncReplicas"
// +kubebuilder:validation:XValidation:rule="self.maxSyncReplicas < self.instances",message="maxSyncReplicas must be lower than instances (the primary cannot acknowledge its own writes)"
// +kubebuilder:validation:XValidation:rule="!has(self.mysql) || !has(self.mysql.semiSync) || !self.mysql.semiSync.enabled || self.minSyncReplicas >= 1",message="semi-sync needs minSyncReplicas >= 1"
type ClusterSpec struct {
	// Instances is the number of MySQL instances: one primary and instances-1 replicas.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	Instances int32 `json:"instances"`

	// ImageName is the MySQL server image every instance runs. The operator's init container copies
	// the instance manager into it, so any image with mysqld works.
	// +kubebuilder:default="percona/percona-server:8.4"
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-zA-Z0-9][-a-zA-Z0-9._:/@]*$')",message="imageName must be an image reference: letters, digits and '-._:/@', no spaces"
	// +optional
	ImageName string `json:"imageName,omitempty"`

	// MinSyncReplicas is the number of replicas that must acknowledge each commit when semi-sync
	// is enabled (rpl_semi_sync_source_wait_for_replica_count).
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	// +optional
	// +kubebuilder:validation:Maximum=63
	MinSyncReplicas int32 `json:"minSyncReplicas"`

	// MaxSyncReplicas bounds the number of replicas that take part in semi-sync acknowledgement.
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	// +optional
	// +kubebuilder:validation:Maximum=63
	MaxSyncReplicas int32 `json:"maxSyncReplicas"`

	// MySQL configures the server: semi-sync and user parameters. The parameters mysqld takes
	// only when it initializes a data directory (lower_case_table_names, innodb_page_size,
	// innodb_data_file_path) are fixed once the Cluster exists.
	// +kubebuilder:default={}
	// +kubebuilder:validation:XValidation:rule="((has(self.parameters) && 'lower_case_table_names' in self.parameters) ? (has(oldSelf.parameters) && 'lower_case_table_names' in oldSelf.parameters && oldSelf.parameters['lower_case_table_names'] == self.parameters['lower_case_table_names']) : !(has(oldSelf.parameters) && 'lower_case_table_names' in oldSelf.parameters)) && ((has(self.parameters) && 'lower-case-table-names' in self.parameters) ? (has(oldSelf.parameters) && 'lower-case-table-names' in oldSelf.parameters && oldSelf.parameters['lower-case-table-names'] == self.parameters['lower-case-table-names']) : !(has(oldSelf.parameters) && 'lower-case-table-names' in oldSelf.parameters)) && ((has(self.parameters) && 'innodb_page_size' in self.parameters) ? (has(oldSelf.parameters) && 'innodb_page_size' in oldSelf.parameters && oldSelf.parameters['innodb_page_size'] == self.parameters['innodb_page_size']) : !(has(oldSelf.parameters) && 'innodb_page_size' in oldSelf.parameters)) && ((has(self.parameters) && 'innodb-page-size' in self.parameters) ? (has(oldSelf.parameters) && 'innodb-page-size' in oldSelf.parameters && oldSelf.parameters['innodb-page-size'] == self.parameters['innodb-page-size']) : !(has(oldSelf.parameters) && 'innodb-page-size' in oldSelf.parameters)) && ((has(self.parameters) && 'innodb_data_file_path' in self.parameters) ? (has(oldSelf.parameters) && 'innodb_data_file_path' in oldSelf.parameters && oldSelf.parameters['innodb_data_file_path'] == self.parameters['innodb_data_file_path']) : !(has(oldSelf.parameters) && 'innodb_data_file_path' in oldSelf.parameters)) && ((has(self.parameters) && 'innodb-data-file-path' in self.parameters) ? (has(oldSelf.parameters) && 'innodb-data-file-path' in oldSelf.parameters && oldSelf.parameters['innodb-data-file-path'] == self.parameters['innodb-data-file-path']) : !(has(oldSelf.parameters) && 'innodb-data-file-path' in oldSelf.parameters))",message="lower_case_table_names, innodb_page_size and innodb_data_file_path take effect only when a data directory is initialized: they cannot be added, changed or removed on an existing Cluster"
	// +optional
	MySQL MySQLConfiguration `json:"mysql"`

	// FailoverDelay is how many seconds the primary must keep failing before automatic failover
	// starts. 0 fails over at once.
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	// +optional
	// +kubebuilder:validation:Maximum=2147483647
	FailoverDelay int32 `json:"failoverDelay"`

	// MaxSwitchoverDelay is how many seconds a switchover target may take to catch up before the
	// switchover is aborted and reported as blocked.
	// +kubebuilder:default=3600
	// +kubebuilder:validation:Minimum=1
	// +optional
	// +kubebuilder:validation:Maximum=2147483647
	MaxSwitchoverDelay int32 `json:"maxSwitchoverDelay"`

	// PrimaryUpdateStrategy says who moves the primary when a rolling update (a new image, new
	// resources, a new operator, a parameter that needs a restart) has updated every replica:
	// unsupervised, the operator does it with primaryUpdateMethod; supervised, it waits for a
	// person to promote an updated replica (kubectl cnmysql promote) and says so in the
	// Progressing condition.
	// +kubebuilder:default=unsupervised
	// +optional
	PrimaryUpdateStrategy PrimaryUpdateStrategy `json:"primaryUpdateStrategy,omitempty"`

	// PrimaryUpdateMethod is how an unsupervised update reaches the primary of several instances:
	// switchover to the most advanced updated replica, then update the old primary as a replica
	// (a write gap of about a second); or restart the primary's Pod in place on its volume (a
	// write gap as long as mysqld's shutdown and start, with no failover meanwhile). A single
	// instance is always restarted.
	// +kubebuilder:default=switchover
	// +optional
	PrimaryUpdateMethod PrimaryUpdateMethod `json:"primaryUpdateMethod,omitempty"`

	// EnablePrimaryLease makes the primary hold the coordination.k8s.io Lease <cluster>-primary and
	// makes failover wait for it to expire.
	// +kubebuilder:default=true
	// +optional
	EnablePrimaryLease *bool `json:"enablePrimaryLease,omitempty"`

	// Storage is the persistent volume of each instance.
	Storage StorageConfiguration `json:"storage"`

	// Resources of the MySQL container of each instance. Every value must be a quantity;
	// negative cpu, memory and ephemeral-storage quantities, and requests of those above their
	// limits, are refused. The rules below name those keys; other resources (extended ones) are
	// checked when the API server validates the instance Pods.
	// +kubebuilder:validation:XValidation:rule="!has(self.requests) || ['cpu', 'memory', 'ephemeral-storage'].all(k, !(k in self.requests) || !quantity(string(self.requests[k])).isLessThan(quantity('0')))",message="resources.requests cpu, memory and ephemeral-storage must not be negative"
	// +kubebuilder:validation:XValidation:rule="!has(self.limits) || ['cpu', 'memory', 'ephemeral-storage'].all(k, !(k in self.limits) || !quantity(string(self.limits[k])).isLessThan(quantity('0')))",message="resources.limits cpu, memory and ephemeral-storage must not be negative"
	// +kubebuilder:validation:XValidation:rule="!has(self.requests) || !has(self.limits) || ['cpu', 'memory', 'ephemeral-storage'].all(k, !(k in self.requests) || !(k in self.limits) || !quantity(string(self.requests[k])).isGreaterThan(quantity(string(self.limits[k]))))",message="resources.requests cpu, memory and ephemeral-storage must not exceed their limits"
	// +optional
	Resources ResourceRequirements `json:"resources,omitempty"`

	// StopDelay is how many seconds an instance has to shut down once its Pod is deleted (the
	// Pod's terminationGracePeriodSeconds): a primary gives up its Lease, then mysqld stops
	// cleanly, flushing its dirty pages, with all but 15 of these seconds; only a mysqld still
	// running then is killed. mysqld's stop grows with the dirty pages of its buffer pool: raise
	// this for a large one on slow disks.
	// +kubebuilder:default=180
	// +kubebuilder:validation:Minimum=20
	// +kubebuilder:validation:Maximum=86400
	// +optional
	StopDelay int32 `json:"stopDelay,omitempty"`

	// Affinity places the instances: anti-affinity between them (preferred on distinct nodes
	// by default), a node selector and tolerations.
	// +kubebuilder:default={}
	// +optional
	Affinity AffinityConfiguration `json:"affinity"`

	// TopologySpreadConstraints spread the instances over the values of node labels (zones,
	// say); each constraint counts the Cluster's own instances.
	// +kubebuilder:validation:MaxItems=8
	// +optional
	TopologySpreadConstraints []TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`

	// PriorityClassName is the PriorityClass of the instance Pods: with a high one, the
	// scheduler preempts less important Pods to place an instance.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="size(self) == 0 || self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="priorityClassName must be a lower-case DNS subdomain (letters, digits, '-' and '.')"
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`

	// PodMetadata are labels and annotations every instance Pod carries beside the operator's.
	// +optional
	PodMetadata *PodMetadata `json:"podMetadata,omitempty"`

	// Managed configures objects the operator manages beside the instances, such as Services.
	// +optional
	Managed *ManagedConfiguration `json:"managed,omitempty"`

	// Bootstrap says how the first instance gets its data: an empty server, or a recovery.
	// +optional
	Bootstrap *BootstrapConfiguration `json:"bootstrap,omitempty"`

	// Backup configures where backups go and how long they are kept.
	// +optional
	Backup *BackupConfiguration `json:"backup,omitempty"`

	// Monitoring configures how Prometheus scrapes the instances: the operator can keep a
	// PodMonitor (prometheus-operator) for the Cluster.
	// +optional
	Monitoring *MonitoringConfiguration `json:"monitoring,omitempty"`
}

// ResourceRequirements are the requests and limits of a container, as corev1.ResourceRequirements
// with bounds of its own: every value of requests and limits is checked with isQuantity (the
// quantity pattern admits strings such as 1e1.5 that do not decode, and one such value would stop
// the operator's cache of every Cluster). Each map holds at most 16 resources: the API server
// estimates a rule over every value of a map from its largest size, and the rule fits its CEL
// cost budget up to 31 values (a value's length is unbounded, so each costs the most a string can).
type ResourceRequirements struct {
	// Limits are the most of each resource the container may use.
	// +kubebuilder:validation:Type=object
	// +kubebuilder:validation:MaxProperties=16
	// +kubebuilder:validation:XValidation:rule="self.all(k, type(self[k]) == int || isQuantity(self[k]))",message="resources.limits values must be quantities such as 500m, 1Gi or 2"
	// +optional
	Limits corev1.ResourceList `json:"limits,omitempty"`

	// Requests are the least of each resource the container is scheduled with; those left out
	// default to the limits.
	// +kubebuilder:validation:Type=object
	// +kubebuilder:validation:MaxProperties=16
	// +kubebuilder:validation:XValidation:rule="self.all(k, type(self[k]) == int || isQuantity(self[k]))",message="resources.requests values must be quantities such as 500m, 1Gi or 2"
	// +optional
	Requests corev1.ResourceList `json:"requests,omitempty"`

	// Claims names entries of the Pod's resourceClaims the container uses (dynamic resource
	// allocation).
	// +listType=map
	// +listMapKey=name
	// +optional
	Claims []corev1.ResourceClaim `json:"claims,omitempty"`
}

// Container returns the requirements as a container takes them, sharing nothing with r.
func (r ResourceRequirements) Container() corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Limits:   r.Limits.DeepCopy(),
		Requests: r.Requests.DeepCopy(),
		Claims:   append([]corev1.ResourceClaim(nil), r.Claims...),
	}
}

// StorageConfiguration describes the PersistentVolumeClaim of each instance.
type StorageConfiguration struct {
	// Size of each instance's volume. Raising it grows every instance's PVC when its
	// StorageClass allows volume expansion (all of them, or none: the StorageResized condition
	// says why). A volume cannot shrink: a smaller size is not applied, and new instances get
	// the existing volumes' size.
	// +kubebuilder:validation:XValidation:rule="type(self) == int || isQuantity(self)",message="storage.size must be a quantity such as 10Gi"
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self > 0 : (!isQuantity(self) || quantity(self).isGreaterThan(quantity('0')))",message="storage.size must be greater than zero"
	Size resource.Quantity `json:"size"`
	// StorageClass of the claims; the cluster default when empty.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="size(self) == 0 || self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="storageClass must be a lower-case DNS subdomain (letters, digits, '-' and '.')"
	// +optional
	StorageClass *string `json:"storageClass,omitempty"`
	// WhenScaledDown says what becomes of the PVC of an instance a scale-down removes: Retain
	// keeps it, annotated detached, for a person to delete; Delete deletes it once its Pod is gone.
	// +kubebuilder:default=Retain
	// +optional
	WhenScaledDown PVCRetention `json:"whenScaledDown,omitempty"`
}

// PVCRetention is what becomes of a removed instance's PVC.
// +kubebuilder:validation:Enum=Retain;Delete
type PVCRetention string

const (
	// PVCRetain keeps the PVC and its data.
	PVCRetain PVCRetention = "Retain"
	// PVCDelete deletes the PVC, and with it (per its StorageClass) the volume's data.
	PVCDelete PVCRetention = "Delete"
)

// MySQLConfiguration configures mysqld on every instance.
type MySQLConfiguration struct {
	// SemiSync configures semi-synchronous replication.
	// +optional
	SemiSync *SemiSyncConfiguration `json:"semiSync,omitempty"`

	// Parameters are written into my.cnf and, when they change, applied to the running servers
	// (SET GLOBAL; a variable mysqld takes only at start restarts the instances in the rolling
	// update's order). Keys the operator owns (GTID, binlog, read-only, TLS, server identity,
	// replication filters, mysqlx, persisted settings), values with newlines or quotes, and what
	// mysqld refuses are left out and reported in status.parameters.refused and the
	// ParametersRefused condition.
	// +optional
	// +kubebuilder:validation:MaxProperties=256
	Parameters map[string]string `json:"parameters,omitempty"`
}

// PrimaryUpdateStrategy says whether the operator moves the primary during a rolling update.
// +kubebuilder:validation:Enum=unsupervised;supervised
type PrimaryUpdateStrategy string

const (
	// PrimaryUpdateUnsupervised: the operator updates the primary once every replica is updated.
	PrimaryUpdateUnsupervised PrimaryUpdateStrategy = "unsupervised"
	// PrimaryUpdateSupervised: the operator waits for a person to promote an updated replica.
	PrimaryUpdateSupervised PrimaryUpdateStrategy = "supervised"
)

// PrimaryUpdateMethod is how an unsupervised rolling update updates the primary.
// +kubebuilder:validation:Enum=switchover;restart
type PrimaryUpdateMethod string

const (
	// PrimaryUpdateSwitchover switches over to the most advanced updated replica first.
	PrimaryUpdateSwitchover PrimaryUpdateMethod = "switchover"
	// PrimaryUpdateRestart restarts the primary's Pod in place.
	PrimaryUpdateRestart PrimaryUpdateMethod = "restart"
)

// DataDurability chooses between availability and durability when sync replicas are unhealthy.
// +kubebuilder:validation:Enum=preferred;required
type DataDurability string

const (
	// DataDurabilityPreferred lowers the acknowledgement count to the healthy replicas (never below
	// one) so writes keep flowing, and raises it back as replicas recover.
	DataDurabilityPreferred DataDurability = "preferred"
	// DataDurabilityRequired pins the acknowledgement count to minSyncReplicas.
	DataDurabilityRequired DataDurability = "required"
)

// SemiSyncConfiguration configures the semi-sync plugins on the primary and replicas.
type SemiSyncConfiguration struct {
	// Enabled turns semi-sync on: the primary waits for minSyncReplicas acknowledgements per commit.
	// +kubebuilder:default=false
	// +optional
	Enabled bool `json:"enabled"`

	// TimeoutMillis is how long a commit waits for acknowledgements before the primary's instance
	// manager, holding a freshly renewed Lease, falls back to asynchronous replication (mysqld's
	// own rpl_semi_sync_source_timeout is always the maximum). Under dataDurability required a
	// value below 15000 (the primary Lease's TTL) is applied as 15000, so that a primary cut off
	// from everything turns itself read-only before any of its commits could fall back; the
	// Cluster is Degraded (SemiSyncAcknowledgementsLate) while a commit has waited longer than
	// TimeoutMillis.
	// +kubebuilder:default=10000
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=4294967295
	// +optional
	TimeoutMillis int64 `json:"timeoutMillis"`

	// DataDurability says how the acknowledgement count follows replica health.
	// +kubebuilder:default=preferred
	// +optional
	DataDurability DataDurability `json:"dataDurability"`
}

// BootstrapConfiguration says how a new Cluster gets its first data.
// +kubebuilder:validation:XValidation:rule="!(has(self.initdb) && has(self.recovery))",message="bootstrap takes either initdb or recovery, not both"
type BootstrapConfiguration struct {
	// InitDB initializes an empty server with an application database and its owner; it is what
	// a Cluster without recovery gets, with database app owned by app.
	// +optional
	InitDB *BootstrapInitDB `json:"initdb,omitempty"`

	// Recovery restores the first instance from a backup instead of initializing an empty server.
	// +optional
	Recovery *BootstrapRecovery `json:"recovery,omitempty"`
}

// BootstrapInitDB names the application database and its owner, created by the first instance
// at bootstrap; the owner's password is in the Secret <cluster>-app. Both are fixed once the
// Cluster exists.
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="bootstrap.initdb cannot change once the Cluster exists"
type BootstrapInitDB struct {
	// Database is the application database; app when empty. Lower-case letters, digits and '_',
	// starting with a letter, at most 64 characters, and not a system schema.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z][a-z0-9_]*$')",message="database must start with a lower-case letter and hold only lower-case letters, digits and '_'"
	// +kubebuilder:validation:XValidation:rule="!(self in ['mysql', 'sys', 'information_schema', 'performance_schema'])",message="database cannot be a system schema"
	// +optional
	Database string `json:"database,omitempty"`
	// Owner is the MySQL account (owner@'%') with every privilege on Database and none elsewhere;
	// app when empty. Lower-case letters, digits and '_', starting with a letter, at most 32
	// characters, and not one of the operator's accounts.
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z][a-z0-9_]*$')",message="owner must start with a lower-case letter and hold only lower-case letters, digits and '_'"
	// +kubebuilder:validation:XValidation:rule="!(self in ['root', 'replication', 'backup'])",message="owner cannot be one of the operator's accounts (root, replication, backup)"
	// +optional
	Owner string `json:"owner,omitempty"`
}

// BootstrapRecovery restores a new Cluster's first instance from a base backup, named by exactly
// one of backup and source. A Cluster with a recovery section never initializes an empty server:
// until the restore is verified its first instance does not start mysqld, and a failure is
// reported on the Cluster (condition Recovered) and retried.
// +kubebuilder:validation:XValidation:rule="has(self.backup) != has(self.source)",message="bootstrap.recovery needs exactly one of backup (a Backup object) and source (an object store and a cluster name)"
type BootstrapRecovery struct {
	// Backup names a completed Backup in this namespace; its recorded location and checksum are
	// used, and retention and remote cleanup refuse to delete it while this Cluster exists.
	// +optional
	Backup *LocalObjectReference `json:"backup,omitempty"`

	// Source is an object store and the name of the cluster whose backups it holds; no Kubernetes
	// object of that cluster is needed. The newest complete base backup under
	// <path>/<clusterName>/ (the one whose metadata.json records the latest stoppedAt) is restored.
	// +optional
	Source *RecoverySource `json:"source,omitempty"`

	// RecoveryTarget asks for point-in-time recovery: after the base backup, replay the archived
	// binlogs (<path>/<cluster>/binlogs/) up to a time, a GTID set, or the latest archived
	// transaction. With a source, the base backup is chosen for the target. A gap in the archive,
	// a missing or corrupt segment, or a target out of reach stops the recovery (condition
	// Recovered False) rather than restore less than asked.
	// +optional
	RecoveryTarget *RecoveryTarget `json:"recoveryTarget,omitempty"`
}

// RecoveryTarget is where a point-in-time recovery stops: exactly one of targetTime,
// targetGTID and targetLatest.
// +kubebuilder:validation:XValidation:rule="(has(self.targetTime) ? 1 : 0) + (has(self.targetGTID) ? 1 : 0) + (has(self.targetLatest) && self.targetLatest ? 1 : 0) == 1",message="recoveryTarget needs exactly one of targetTime, targetGTID and targetLatest: true"
type RecoveryTarget struct {
	// TargetTime: replay the transactions committed at or before this instant (RFC 3339, to the
	// microsecond, e.g. "2026-11-25T04:00:00.250000Z"): the archived history up to the first
	// transaction committed after it. The archive must reach it. With a source, the base backup
	// is the newest one that started before it (preferring one that also ended before it).
	// It is a string checked as an RFC 3339 date-time at admission, decoded by the reader: a
	// time type whose decoding is stricter than the schema (metav1.MicroTime wants exactly six
	// fractional digits) would let one Cluster stop the operator's cache of every Cluster.
	// +kubebuilder:validation:Format=date-time
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$`
	TargetTime string `json:"targetTime,omitempty"`

	// TargetGTID: the restored gtid_executed is exactly this GTID set (as MySQL prints
	// gtid_executed): the base backup's transactions must all be in it, and the archive must
	// hold the rest. With a source, the base backup is the newest one within the set.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=16384
	// +kubebuilder:validation:XValidation:rule="self.matches('^\\\\s*[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}(:[a-zA-Z_][a-zA-Z0-9_]{0,31})?(:[0-9]+(-[0-9]+)?)+(\\\\s*,\\\\s*[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}(:[a-zA-Z_][a-zA-Z0-9_]{0,31})?(:[0-9]+(-[0-9]+)?)+)*\\\\s*$')",message="targetGTID must be a GTID set such as 3e11fa47-71ca-11e1-9e33-c80aa9429562:1-77"
	// +optional
	TargetGTID string `json:"targetGTID,omitempty"`

	// TargetLatest: replay every archived binlog.
	// +optional
	TargetLatest bool `json:"targetLatest,omitempty"`
}

// RecoverySource locates the backups of a cluster in an object store.
type RecoverySource struct {
	// ClusterName is the name of the cluster that wrote the backups: they are under
	// <objectStore.path>/<clusterName>/.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="clusterName must be a cluster name: lower-case letters, digits and '-'"
	ClusterName string `json:"clusterName"`

	// ObjectStore is the bucket, path and credentials (Secrets in this namespace) to read from.
	ObjectStore ObjectStoreConfiguration `json:"objectStore"`

	// Incarnation restores only backups written by the Cluster incarnation of this UID (as
	// status.objectStoreLocation and the location's marker name it). Empty: every complete backup
	// in the location, which holds one incarnation's history (or histories continued into it).
	// +kubebuilder:validation:MaxLength=36
	// +kubebuilder:validation:XValidation:rule="self.matches('^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$')",message="incarnation must be a Cluster UID such as 5f0c1c0e-7a55-4a52-9f3f-1b2c3d4e5f60"
	// +optional
	Incarnation string `json:"incarnation,omitempty"`
}

// BackupConfiguration is the Cluster-level backup policy.
// +kubebuilder:validation:XValidation:rule="has(self.objectStore) || (!has(self.retentionPolicy) && !has(self.retentionCount) && !has(self.retentionSize))",message="a retention policy requires an objectStore"
type BackupConfiguration struct {
	// ObjectStore is where backups and archived binlogs are written.
	// +optional
	ObjectStore *ObjectStoreConfiguration `json:"objectStore,omitempty"`

	// RetentionPolicy is a time window, <n>d, <n>w or <n>m (days, weeks, 30-day months, n >= 1):
	// base backups completed before now minus the window are deleted from the object store.
	// +kubebuilder:validation:Pattern=`^[1-9][0-9]{0,2}[dwm]$`
	// +optional
	RetentionPolicy string `json:"retentionPolicy,omitempty"`

	// RetentionCount keeps only the newest N completed base backups.
	// +kubebuilder:validation:Minimum=1
	// +optional
	// +kubebuilder:validation:Maximum=2147483647
	RetentionCount *int32 `json:"retentionCount,omitempty"`

	// RetentionSize keeps the newest base backups whose total size fits this budget.
	// +kubebuilder:validation:XValidation:rule="type(self) == int || isQuantity(self)",message="retentionSize must be a quantity such as 500Gi"
	// +kubebuilder:validation:XValidation:rule="!isQuantity(self) || quantity(self).isGreaterThan(quantity('0'))",message="retentionSize must be greater than zero"
	// +optional
	RetentionSize *resource.Quantity `json:"retentionSize,omitempty"`

	// DeletionPolicy is the default for Backups of this Cluster that do not set their own: keep
	// (the default) leaves remote objects when a Backup object is deleted, delete removes them.
	// +optional
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`

	// ArchiveTimeout bounds how long a committed transaction stays only in the primary's open
	// binary log: once the oldest transaction of the open binlog is older than this, the primary
	// rotates it (FLUSH BINARY LOGS) and archives it, so the archive's recovery point is about
	// this plus one upload behind. Whole seconds between 1s and 10m; 3s by default.
	// +kubebuilder:default="3s"
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]{1,2}m)?([0-9]{1,3}s)?$') && size(self) > 0",message="archiveTimeout must be a whole number of seconds written with m and s, such as 5s or 1m30s"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]{1,2}m)?([0-9]{1,3}s)?$') || size(self) == 0 || (duration(self) >= duration('1s') && duration(self) <= duration('10m'))",message="archiveTimeout must be between 1s and 10m"
	// +optional
	ArchiveTimeout *metav1.Duration `json:"archiveTimeout,omitempty"`

	// ServerName is the directory of this Cluster's backups and archived binlogs under
	// objectStore.path: <path>/<serverName>/. The Cluster's name when empty. A location belongs to
	// one Cluster incarnation (see status.objectStoreLocation): give a re-created Cluster a new
	// serverName (or path) to start a history of its own beside an earlier incarnation's.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="serverName must be lower-case letters, digits and '-', starting and ending with a letter or digit"
	// +optional
	ServerName string `json:"serverName,omitempty"`

	// FailureAlertAfter is how long a Cluster with an object store may go without a successful
	// backup (counted from the last success, or from the Cluster's creation) before its
	// BackupsHealthy condition turns False with reason NoSuccessfulBackup, the critical level,
	// whatever the cause: failing backups, a stuck or suspended schedule, or none at all.
	// Between 1m and 8760h; 26h by default.
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+h)?([0-9]+m)?([0-9]+s)?$') && size(self) > 0",message="failureAlertAfter must be a duration written with h, m and s, such as 26h or 90m"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+h)?([0-9]+m)?([0-9]+s)?$') || size(self) == 0 || (duration(self) >= duration('1m') && duration(self) <= duration('8760h'))",message="failureAlertAfter must be between 1m and 8760h"
	// +optional
	FailureAlertAfter *metav1.Duration `json:"failureAlertAfter,omitempty"`

	// FinishedBackupTTL, when set, deletes the Backup objects of this Cluster (scheduled and on
	// demand) that finished (completed, failed or superseded) longer ago than this. Only the
	// objects: remote data stays unless the Backup's deletion policy is delete. The newest
	// completed Backup and any Backup a Cluster of the namespace recovers from
	// (bootstrap.recovery.backup) are kept. Unset keeps every Backup object, since Backup objects
	// are also the catalog bootstrap.recovery.backup names. At least 1m.
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+h)?([0-9]+m)?([0-9]+s)?$') && size(self) > 0",message="finishedBackupTTL must be a duration written with h, m and s, such as 24h"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]+h)?([0-9]+m)?([0-9]+s)?$') || size(self) == 0 || duration(self) >= duration('1m')",message="finishedBackupTTL must be at least 1m"
	// +optional
	FinishedBackupTTL *metav1.Duration `json:"finishedBackupTTL,omitempty"`

	// ContinueHistory lets this Cluster take over a location another incarnation claimed, and
	// continue its backups and binlog archive, when that is safe: the Cluster was recovered from
	// that location (bootstrap.recovery), the Cluster that claimed it no longer exists, and this
	// Cluster's primary has executed every transaction the location holds (it continues the
	// same GTID history; a recovery to an earlier point is a fork and is refused).
	// +optional
	ContinueHistory bool `json:"continueHistory,omitempty"`

	// Verification restores completed backups into a throwaway Job, on a schedule or every N
	// backups, to prove they restore (see BackupVerification). Off when unset.
	// +optional
	Verification *BackupVerification `json:"verification,omitempty"`
}

// ObjectStoreConfiguration locates an S3-compatible bucket and its credentials.
// +kubebuilder:validation:XValidation:rule="!has(self.endpoint) || !self.endpoint.startsWith('http://') || (has(self.allowInsecureEndpoint) && self.allowInsecureEndpoint) || self.endpoint.matches('^http://(localhost|127([.][0-9]{1,3}){3}|[[]::1[]])(:[0-9]{1,5})?(/.*)?$')",message="a plain http endpoint sends the object store credentials and every backup unencrypted: use https, or set allowInsecureEndpoint: true to accept that (loopback endpoints need no opt-in)"
type ObjectStoreConfiguration struct {
	// Bucket name.
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9][-a-z0-9.]*[a-z0-9]$')",message="bucket must be an S3 bucket name: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit"
	Bucket string `json:"bucket"`

	// Path is a key prefix inside the bucket; objects go under <path>/<cluster>/.
	// +kubebuilder:validation:Pattern=`^[^/].*$|^$`
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Path string `json:"path,omitempty"`

	// Endpoint is the S3 API URL; empty means AWS S3.
	// +kubebuilder:validation:Pattern=`^https?://`
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="isURL(self) && size(url(self).getHostname()) > 0",message="endpoint must be a URL with a host, such as https://s3.example.com"
	// +optional
	Endpoint string `json:"endpoint,omitempty"`

	// Region of the bucket.
	// +kubebuilder:default="us-east-1"
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9-]*$')",message="region consists of lower-case letters, digits and '-', such as us-east-1"
	// +optional
	Region string `json:"region,omitempty"`

	// AllowInsecureEndpoint accepts a plain http endpoint other than loopback: the access keys
	// sign every request in the clear and backups travel unencrypted, so anyone on the path can
	// read them. Without it such an endpoint is rejected.
	// +optional
	AllowInsecureEndpoint bool `json:"allowInsecureEndpoint,omitempty"`

	// ForcePathStyle addresses the bucket in the URL path rather than the host name.
	// +optional
	ForcePathStyle bool `json:"forcePathStyle,omitempty"`

	// EndpointCA is a PEM bundle that signs the endpoint's TLS certificate.
	// +optional
	EndpointCA *SecretKeySelector `json:"endpointCA,omitempty"`

	// Credentials are read from Secrets; they never appear on a command line or in logs.
	Credentials S3Credentials `json:"credentials"`
}

// S3Credentials holds references to the S3 access key pair.
type S3Credentials struct {
	// AccessKeyID selects the access key id.
	AccessKeyID SecretKeySelector `json:"accessKeyId"`
	// SecretAccessKey selects the secret access key.
	SecretAccessKey SecretKeySelector `json:"secretAccessKey"`
	// SessionToken selects an optional session token.
	// +optional
	SessionToken *SecretKeySelector `json:"sessionToken,omitempty"`
}

// Cluster is a highly available MySQL cluster: a primary, GTID replicas and their Services.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=mysql;mysqlcluster
// +kubebuilder:printcolumn:name="Instances",type=integer,JSONPath=`.spec.instances`
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.readyInstances`
// +kubebuilder:printcolumn:name="Primary",type=string,JSONPath=`.status.currentPrimary`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Last-Backup",type=date,JSONPath=`.status.backups.lastSuccessful.completedAt`
// +kubebuilder:printcolumn:name="Backups",type=string,priority=1,JSONPath=`.status.conditions[?(@.type=="BackupsHealthy")].reason`
// +kubebuilder:printcolumn:name="Archive",type=string,JSONPath=`.status.conditions[?(@.type=="BinlogArchiving")].reason`
// +kubebuilder:printcolumn:name="Recoverable-From",type=date,JSONPath=`.status.binlogArchive.recoverableFrom`
// +kubebuilder:printcolumn:name="Recoverable-To",type=date,JSONPath=`.status.binlogArchive.recoverableTo`
// +kubebuilder:printcolumn:name="Archive-Lag",type=integer,priority=1,JSONPath=`.status.binlogArchive.lagSeconds`
// +kubebuilder:printcolumn:name="Last-Segment",type=string,priority=1,JSONPath=`.status.binlogArchive.lastSegment`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="a Cluster name must be a DNS-1035 label (lower-case letters, digits and '-', starting with a letter, no '.'), because its Services are named after it"
// +kubebuilder:validation:XValidation:optionalOldSelf=true,rule="oldSelf.hasValue() || !has(self.spec.bootstrap) || !has(self.spec.bootstrap.recovery) || !has(self.spec.bootstrap.recovery.source) || !has(self.spec.backup) || !has(self.spec.backup.objectStore) || (has(self.spec.backup.continueHistory) && self.spec.backup.continueHistory) || self.spec.backup.objectStore.bucket != self.spec.bootstrap.recovery.source.objectStore.bucket || (has(self.spec.backup.objectStore.endpoint) ? self.spec.backup.objectStore.endpoint : '/') != (has(self.spec.bootstrap.recovery.source.objectStore.endpoint) ? self.spec.bootstrap.recovery.source.objectStore.endpoint : '/') || (has(self.spec.backup.objectStore.path) ? self.spec.backup.objectStore.path : '/') != (has(self.spec.bootstrap.recovery.source.objectStore.path) ? self.spec.bootstrap.recovery.source.objectStore.path : '/') || (has(self.spec.backup.serverName) ? self.spec.backup.serverName : self.metadata.name) != self.spec.bootstrap.recovery.source.clusterName",message="spec.backup.objectStore is the location bootstrap.recovery.source restores from: write elsewhere (another path or spec.backup.serverName), or set spec.backup.continueHistory to continue that location's history"
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 50",message="a Cluster name is at most 50 characters, so instance, Service and Lease names derived from it stay valid"
// +kubebuilder:validation:XValidation:rule="!has(self.spec.managed) || !has(self.spec.managed.services) || !has(self.spec.managed.services.additional) || self.spec.managed.services.additional.all(s, size(self.metadata.name) + 1 + size(s.name) <= 63)",message="additional Service names <cluster>-<name> must be at most 63 characters"
type Cluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ClusterSpec   `json:"spec"`
	Status ClusterStatus `json:"status,omitempty"`
}

// ClusterList is a list of Clusters.
// +kubebuilder:object:root=true
type ClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Cluster `json:"items"`
	// Undecodable names the items a decoded list left out because they do not decode
	// (list_decode.go); never serialized. A reader that must see every object calls Complete.
	Undecodable []string `json:"-"`
}

func init() {
	SchemeBuilder.Register(&Cluster{}, &ClusterList{})
}

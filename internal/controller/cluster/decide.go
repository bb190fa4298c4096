package cluster

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/instances"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/failover"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// Observation is what the Cluster decision reads; gather fills it.
type Observation struct {
	Now     time.Time
	Cluster *v1.Cluster
	// Pods, PVCs and Services are the children the Cluster controls.
	Pods     []corev1.Pod
	PVCs     []corev1.PersistentVolumeClaim
	Services []corev1.Service
	// Secrets are the Cluster's password, CA and certificate Secrets that exist, by name, read
	// from the API server.
	Secrets       map[string]*corev1.Secret
	OperatorImage string
	// Reports are the instances' answers to GET /status, by instance name.
	Reports map[string]*instanceclient.Status
	// ReportErrors are the instances that were asked and did not answer, with the error.
	ReportErrors map[string]string
	// MaxReadLag is how far a replica may lag and still serve reads; 0 disables the check.
	MaxReadLag time.Duration
	// SemiSyncSettable says the operator can set the primary's acknowledgement count (through
	// the instance manager's control API).
	SemiSyncSettable bool
	// Lease is the primary Lease <cluster>-primary (lease.go).
	Lease failover.Lease
	// RecoveryBackup is the Backup bootstrap.recovery names, nil when there is none or it does
	// not exist: the instances' Role lets them read the Secrets it recorded.
	RecoveryBackup *v1.Backup
	// RefusedReplacements are the instances whose Pod runs an outdated spec and whose new Pod the
	// API server refuses (a dry-run create), with its message (rollout_dryrun.go).
	RefusedReplacements map[string]string
	// StorageClasses are the classes of the PVCs asking for less than storage.size, by name; nil
	// for one that does not exist, absent for one the operator may not read (storage.go).
	StorageClasses map[string]*storagev1.StorageClass
	// ManagerBinary is the instance manager binary the operator sends to instances that run
	// another one; nil: instance managers are not updated in place (manager_update.go).
	ManagerBinary *instances.ManagerBinary
	// ManagerUpdatesSent is what this operator tried of sending ManagerBinary to the instances,
	// for their current Pod.
	ManagerUpdatesSent map[string]ManagerUpdateTry
	// ForeignObjects are the PVCs and Pods named after an instance this reconcile may create that
	// exist with another controller, as "Kind name", by instance name (ownership_instances.go).
	ForeignObjects map[string][]string
	// PodMonitor is the Cluster's PodMonitor as gather found it (podmonitor.go).
	PodMonitor PodMonitorObservation
}

// podRelabel sets the role and routable labels of one Pod.
type podRelabel struct {
	Pod      string
	Role     string
	Routable bool
}

// Decision is everything one reconcile does; act performs it step by step, in the order of
// actSteps.
type Decision struct {
	// Secrets are the password Secrets, the CA and the certificates to write (stepSecrets).
	Secrets SecretWork
	// ServiceAccounts (one per instance), Roles and RoleBindings let the instance managers watch
	// the Cluster, write its status and hold the primary Lease, and the primary archive; PDB
	// guards the instances (stepOwned; planRBAC).
	ServiceAccounts []*corev1.ServiceAccount
	Roles           []*rbacv1.Role
	RoleBindings    []*rbacv1.RoleBinding
	PDB             *policyv1.PodDisruptionBudget
	// CreatePVCs and CreatePods are created in order, PVCs first (stepCreate).
	CreatePVCs []*corev1.PersistentVolumeClaim
	CreatePods []*corev1.Pod
	// RefusedObjects are objects controlled elsewhere that kept an instance from being created
	// (refuseForeignInstance); act reports them in the OwnershipConflict condition.
	RefusedObjects []string
	// Detach is the instance a scale-down removes: its PVC is marked detached, then its Pod
	// deleted (stepDetach); ScaleDownWait says why the next removal waits.
	Detach        string
	ScaleDownWait string
	// DeletePVCs are detached PVCs whose Pod is gone, deleted under storage.whenScaledDown
	// Delete (stepDetach).
	DeletePVCs []string
	// DeletePods are Pods left on detached PVCs (a scale-down interrupted between its two steps)
	// or one Pod replaced by a rolling update; their PVCs stay (stepDeletePods).
	DeletePods []string
	// PrimaryUnknown says targetPrimary is empty on a Cluster with instances and no single
	// instance reports itself primary: nothing is promoted or added until a human sets it.
	PrimaryUnknown bool
	// ExpandPVCs are the PVCs whose storage request to raise to storage.size (stepExpand);
	// storageCondition is the StorageResized condition (planStorage).
	ExpandPVCs       []string
	storageCondition metav1.Condition
	// ResizePods are the Pods whose MySQL container is resized in place (stepResize).
	ResizePods []podResize
	// UpdateManager is the instance whose instance manager is sent ManagerBinary, to replace
	// itself in place (stepManagerUpdate).
	UpdateManager string
	// Rollout, when not nil, says why a rolling update waits or which step of the primary's
	// update is under way (rollout.go, primary_update.go).
	Rollout *rolloutWait
	// Relabel lists label changes, the ones that take the primary role away first, so two Pods
	// never both carry role=primary (stepRelabel).
	Relabel []podRelabel
	// relabelEvents are the Events of Relabel's changes, by Pod: each is emitted once its Pod's
	// labels are changed.
	relabelEvents map[string]kit.Event
	// leaving is the replica this reconcile's rolling update replaces or is about to: its
	// semi-sync acknowledgements are handed over to another replica first (planRollout).
	leaving string
	// endingSessions: an instance reports ending client sessions (kept out of routing until a
	// reconcile sees its sweep over, so the next one follows soon).
	endingSessions bool
	// Services are the desired Services (applied when they differ); DeleteServices are owned
	// Services no longer desired (stepServices).
	Services       []*corev1.Service
	DeleteServices []string
	// Instances are the instances after this reconcile (their certificates must exist).
	Instances []string
	// Status is the new status; patched when it differs (stepStatus).
	Status v1.ClusterStatus
	// SemiSync is the acknowledgement count to set on the primary; nil when it is right, unknown
	// or cannot be set (stepSemiSync).
	SemiSync *SemiSyncAdjustment
	// SemiSyncParticipants are the replicas to tell whether they acknowledge, those that start
	// first (stepSemiSync).
	SemiSyncParticipants []SemiSyncParticipantTell
	// Failover is this reconcile's switchover or failover step (stepFailover, and the status).
	Failover FailoverWork
	// FencingInvalid, when not empty, says why the fencing annotation cannot be read.
	FencingInvalid string
	// PodMonitor is what to do to the Cluster's PodMonitor (stepPodMonitor; podmonitor.go).
	PodMonitor PodMonitorWork
	// Events record the outcome of each step, emitted once that step is done.
	Events map[actStep][]kit.Event

	failoverObservation failover.Observation
	// switchedOver: this reconcile sees a switchover's promotion for the first time and moves the
	// primary label (planFailover); transitions are what the metrics count once their step
	// succeeded (metrics.go).
	switchedOver bool
	transitions  []transition
}

// actStep names the steps of act, in the order act performs them. A Decision's Events belong to
// the step whose success they report.
type actStep int

const (
	// stepSecrets writes the Secrets first: Pods mount them.
	stepSecrets actStep = iota
	stepOwned
	stepCreate
	stepDetach
	stepDeletePods
	// stepFailover stops replicas' IO threads, demotes or deletes the old primary (failover.go).
	stepFailover
	// stepServices before stepRelabel: see act.
	stepServices
	stepRelabel
	stepStatus
	stepSemiSync
	// stepPodMonitor creates, updates or deletes the Cluster's PodMonitor (podmonitor_act.go); it
	// never fails act.
	stepPodMonitor
	// stepResize resizes Pods in place (resize.go); it never fails act.
	stepResize
	// stepManagerUpdate sends an instance manager its new binary (manager_update.go); it never
	// fails act.
	stepManagerUpdate
	// stepExpand raises the PVCs' storage requests (storage.go); it runs after the others
	// whatever they did, and never fails act, so that a PVC that cannot grow never holds back a
	// failover, the Services or the status.
	stepExpand
	// stepDemotion is no step of act: the moment a relabel removes the primary label from the old
	// primary's Pod, when a switchover's completion is counted (the rest of the relabel may fail;
	// the next reconcile no longer sees the old label, so it is counted once).
	stepDemotion
)

// Decide is the pure heart of the Cluster controller: from what gather read it decides the
// instances to create or remove, the Secrets to write, labels, Services, the status with its
// conditions, and the primary's semi-sync count.
func Decide(o Observation) Decision {
	c := o.Cluster.DeepCopy()
	active, maxSerial := indexInstances(c, o.PVCs, o.Pods)
	c.Status.LatestGeneratedNode = max(c.Status.LatestGeneratedNode, maxSerial)
	d := Decision{}
	d.planFencing(c, active)
	clearPrimaryRestart(c, o, active)
	d.planFailover(c, o, active)
	d.planLeaseEvents(o)

	created := maxSerial == 0 && c.Status.LatestGeneratedNode == 0
	if largest := largestRequest(active); largest.Cmp(c.Spec.Storage.Size) > 0 {
		// A size below the volumes' is not applied (planStorage): new instances get theirs.
		c.Spec.Storage.Size = largest
	}
	active = d.planScaleUp(c, o, active)
	d.planTargetPrimary(c, o, active, created)
	for i := range d.CreatePods {
		setPodRole(c, d.CreatePods[i])
	}
	active = d.planScaleDown(c, o, active)
	d.DeletePods = podsOnDetachedPVCs(o.PVCs, o.Pods)
	d.DeletePVCs = detachedPVCsToDelete(c, o.PVCs, o.Pods)
	d.planRollout(c, o, active)
	storage := planStorage(o.Cluster.Spec.Storage.Size, active, o.StorageClasses, o.Now)
	d.ExpandPVCs, d.storageCondition = storage.Expand, storage.Condition
	for _, in := range active {
		d.Instances = append(d.Instances, in.Name)
	}
	d.Secrets = planSecrets(c, d.Instances, o.Secrets, o.Now)
	d.planRelabel(c, o, active)
	d.planServices(c, o.Services, active)
	d.PDB = specs.BuildPDB(c)
	d.Status = aggregateStatus(c, o, active, &d)
	d.managerUpdatedEvents(o)
	d.planRBAC(c, o)
	d.planPodMonitor(c, o)
	d.mergeHAConditions(c, o)
	for _, e := range conditionEvents(o.Cluster.Status.Conditions, d.Status, c.Spec.Instances) {
		d.event(stepStatus, e)
	}
	d.planSemiSync(o)
	d.transitions = planTransitions(o, d)
	return d
}

// event records e as the outcome of step.
func (d *Decision) event(step actStep, e kit.Event) {
	if d.Events == nil {
		d.Events = map[actStep][]kit.Event{}
	}
	d.Events[step] = append(d.Events[step], e)
}

// pending reports whether this reconcile changes the set of instances.
func (d Decision) pending() bool {
	return len(d.CreatePods) > 0 || d.Detach != "" || len(d.DeletePods) > 0
}

// needsFreshLook reports whether the decision creates or removes instances: those are decided
// again on a live read, so a cache that has not yet seen the last serial or the last switchover
// never makes the controller reuse a serial or remove the new primary.
func (d Decision) needsFreshLook() bool {
	return d.pending() || d.Failover.acts()
}

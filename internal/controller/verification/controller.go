package verification

import (
	"context"
	"fmt"
	"os"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// Reconciler runs the restore verifications of each Cluster.
type Reconciler struct {
	// Client reads through the manager's cache and writes to the API server.
	Client client.Client
	// APIReader reads Pods (not cached) and confirms that no verification Job exists before one
	// is created.
	APIReader client.Reader
	Recorder  record.EventRecorder
	Clock     clock.PassiveClock
	// OperatorImage runs the Job's init container; specs.DefaultOperatorImage when empty.
	OperatorImage string
}

// NewReconciler returns the production reconciler for mgr.
func NewReconciler(mgr ctrl.Manager, clk clock.PassiveClock) *Reconciler {
	return &Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
		Recorder: mgr.GetEventRecorderFor("verification-controller"), Clock: clk,
		OperatorImage: os.Getenv(specs.OperatorImageEnv)}
}

// SetupWithManager registers the reconciler under the name "verification": a Cluster is looked
// at when its spec or last verification changes, when one of its Backups or verification Jobs
// changes, and at its schedule's next slot.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	err := ctrl.NewControllerManagedBy(mgr).
		Named("verification").
		For(&v1.Cluster{}, builder.WithPredicates(clusterChanged())).
		Watches(&v1.Backup{}, kit.ToCluster(kit.ClusterOf)).
		Watches(&batchv1.Job{}, kit.ToCluster(func(o client.Object) string {
			if _, ok := o.GetLabels()[v1.VerificationLabel]; !ok {
				return ""
			}
			return o.GetLabels()[v1.ClusterLabel]
		})).
		Complete(r)
	if err != nil {
		return fmt.Errorf("building the verification controller: %w", err)
	}
	return nil
}

// clusterChanged passes creations, deletions, spec changes, the first status and changes of the
// last verification, the location claim and the archive; not every status write.
func clusterChanged() predicate.Funcs {
	return kit.ClusterChanges(func(o, n *v1.Cluster) bool {
		return o.Generation != n.Generation || o.Status.LatestGeneratedNode != n.Status.LatestGeneratedNode ||
			!equality.Semantic.DeepEqual(o.Status.LastVerifiedBackup, n.Status.LastVerifiedBackup) ||
			!equality.Semantic.DeepEqual(o.Status.ObjectStoreLocation, n.Status.ObjectStoreLocation) ||
			(o.Status.BinlogArchive == nil) != (n.Status.BinlogArchive == nil)
	}, true)
}

// Reconcile gathers, decides and acts.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var c v1.Cluster
	if err := r.Client.Get(ctx, req.NamespacedName, &c); err != nil {
		if apierrors.IsNotFound(err) {
			export(req.Namespace, req.Name, nil)
			return ctrl.Result{}, r.deleteJobsOf(ctx, req.Namespace, req.Name)
		}
		return ctrl.Result{}, err
	}
	if c.DeletionTimestamp != nil {
		return ctrl.Result{}, r.deleteJobsOf(ctx, c.Namespace, c.Name)
	}
	if kit.AwaitsFirstStatus(&c) {
		return ctrl.Result{RequeueAfter: kit.FirstStatusWait}, nil
	}
	o, err := r.gather(ctx, &c)
	if err != nil {
		return ctrl.Result{}, err
	}
	d := Decide(o)
	if err := r.act(ctx, &c, d); err != nil {
		return kit.ConflictOr(err)
	}
	return ctrl.Result{RequeueAfter: d.RequeueAfter}, nil
}

// gather reads the Cluster's completed Backups and its verification Jobs from the cache, and the
// termination message of each finished Job from the API server.
func (r *Reconciler) gather(ctx context.Context, c *v1.Cluster) (Observation, error) {
	o := Observation{Now: r.Clock.Now(), Cluster: c}
	var backups v1.BackupList
	if err := r.Client.List(ctx, &backups, client.InNamespace(c.Namespace)); err != nil {
		return o, fmt.Errorf("listing the Backups of %s: %w", c.Namespace, err)
	}
	completedAt := map[string]*v1.Backup{}
	for _, b := range backups.Items {
		// A Backup created before the Cluster is an earlier incarnation's, of the same name.
		if b.Spec.Cluster.Name != c.Name || b.CreationTimestamp.Before(&c.CreationTimestamp) {
			continue
		}
		completedAt[b.Name] = &b
		if b.Status.Phase == v1.BackupPhaseCompleted && b.DeletionTimestamp == nil && artifactsPresent(&b) {
			o.Backups = append(o.Backups, b)
		}
	}
	var jobs batchv1.JobList
	if err := r.Client.List(ctx, &jobs, client.InNamespace(c.Namespace), client.MatchingLabels{v1.ClusterLabel: c.Name},
		client.HasLabels{v1.VerificationLabel}); err != nil {
		return o, fmt.Errorf("listing the verification Jobs of %s: %w", c.Name, err)
	}
	for i := range jobs.Items {
		j := Job{Job: &jobs.Items[i], Backup: jobs.Items[i].Labels[v1.VerificationLabel]}
		if b := completedAt[j.Backup]; b != nil {
			j.BackupCompletedAt = b.Status.CompletedAt
		}
		if kit.JobFinished(j.Job) {
			msg, err := kit.PodMessage(ctx, r.APIReader, j.Job)
			if err != nil {
				return o, err
			}
			j.Message = msg
		}
		o.Jobs = append(o.Jobs, j)
	}
	return o, nil
}

// artifactsPresent: retention has not recorded the backup's objects as gone.
func artifactsPresent(b *v1.Backup) bool {
	for _, cond := range b.Status.Conditions {
		if cond.Type == v1.BackupArtifactsAvailable {
			return cond.Status != "False"
		}
	}
	return true
}

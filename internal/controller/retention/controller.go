package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/retention"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/retentionpass"
)

// retentionPassTimeout bounds one pass, so a hung object store cannot hold a worker forever.
const retentionPassTimeout = 30 * time.Minute

// RetentionReconciler runs the retention pass of each Cluster that has a retention policy, an
// object store and an established primary, at most once per RetentionInterval: it deletes the
// expired base backups, the binlog segments no retained backup can use and interrupted uploads
// from the object store. It never deletes Backup objects; the Backups whose artifacts it deleted
// get the condition ArtifactsAvailable=False, reason Expired.
//
// A pass that fails (the object store unreachable, a Secret unreadable) is not stamped in
// status.lastRetentionRunTime, emits a Warning Event and is retried with backoff; the pass itself
// leaves the store valid whenever it stops.
type RetentionReconciler struct {
	// Client reads through the manager's cache and writes to the API server.
	Client client.Client
	// APIReader reads from the API server: what a pass protects is read fresh before it deletes.
	APIReader client.Reader
	Recorder  record.EventRecorder
	Clock     clock.PassiveClock
	// OpenStore opens a Cluster's object store; objectstore.New when nil.
	OpenStore func(objectstore.Config) (*objectstore.Client, error)
	// MaxConcurrentReconciles defaults to defaultRetentionWorkers.
	MaxConcurrentReconciles int

	failures retentionFailures
}

// NewRetentionReconciler returns the production reconciler for mgr.
func NewRetentionReconciler(mgr ctrl.Manager, clk clock.PassiveClock) *RetentionReconciler {
	return &RetentionReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
		Recorder: mgr.GetEventRecorderFor("retention-controller"), Clock: clk}
}

// retentionPassInput is what a due pass reads, fresh from the API server.
type retentionPassInput struct {
	// Now is when the pass starts: its notion of the current time and the stamp it leaves.
	Now      time.Time
	Cluster  *v1.Cluster
	Policy   retention.Policy
	Clusters []v1.Cluster
	Backups  []v1.Backup
	Config   objectstore.Config
}

// Reconcile decides whether the Cluster's pass is due on the cached Cluster, decides again on a
// fresh read, runs the pass and records its outcome.
func (r *RetentionReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	logger := log.FromContext(ctx)
	var c v1.Cluster
	if err := r.Client.Get(ctx, req.NamespacedName, &c); err != nil {
		r.failures.reset(req.NamespacedName)
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	s := r.schedule(ctx, &c)
	if !s.Due {
		return ctrl.Result{RequeueAfter: s.RequeueAfter}, nil
	}
	in, s, err := r.gatherPass(ctx, req.NamespacedName)
	if err == nil && !s.Due {
		return ctrl.Result{RequeueAfter: s.RequeueAfter}, nil
	}
	var report retentionpass.Report
	if err == nil {
		logger.Info("retention pass", "policy", describePolicy(in.Cluster.Spec.Backup))
		report, err = r.runPass(ctx, in)
	}
	return r.finishPass(ctx, &c, in, report, err)
}

// schedule decides on c and logs or emits why no pass runs.
func (r *RetentionReconciler) schedule(ctx context.Context, c *v1.Cluster) retentionSchedule {
	p, perr := retention.PolicyFromSpec(c.Spec.Backup)
	s := decideRetentionSchedule(retentionObservation{Now: r.Clock.Now(), Cluster: c, Policy: p, PolicyErr: perr})
	if s.Skip != "" {
		log.FromContext(ctx).V(1).Info("no retention pass", "reason", s.Skip)
		emit(r.Recorder, c, s.Events)
	}
	return s
}

// gatherPass re-reads the Cluster from the API server and decides again (the cache may not show
// a stamp just written), then reads what the pass protects and the object store configuration.
// The input is nil when the pass is no longer due.
func (r *RetentionReconciler) gatherPass(ctx context.Context, key types.NamespacedName) (*retentionPassInput, retentionSchedule, error) {
	var c v1.Cluster
	if err := r.APIReader.Get(ctx, key, &c); err != nil {
		return nil, retentionSchedule{}, fmt.Errorf("reading Cluster %s: %w", key.Name, err)
	}
	s := r.schedule(ctx, &c)
	if !s.Due {
		return nil, s, nil
	}
	in := &retentionPassInput{Now: r.Clock.Now(), Cluster: &c}
	in.Policy, _ = retention.PolicyFromSpec(c.Spec.Backup)
	var clusters v1.ClusterList
	if err := r.APIReader.List(ctx, &clusters, client.InNamespace(key.Namespace)); err != nil {
		return in, s, fmt.Errorf("listing the Clusters of %s: %w", key.Namespace, err)
	}
	var backups v1.BackupList
	if err := r.APIReader.List(ctx, &backups, client.InNamespace(key.Namespace)); err != nil {
		return in, s, fmt.Errorf("listing the Backups of %s: %w", key.Namespace, err)
	}
	in.Clusters, in.Backups = clusters.Items, backups.Items
	secrets, err := objectstore.ReadSecrets(ctx, r.APIReader, c.Namespace, c.Spec.Backup.ObjectStore)
	if err != nil {
		return in, s, fmt.Errorf("object store credentials: %w", err)
	}
	if in.Config, err = objectstore.ResolveConfig(c.Spec.Backup.ObjectStore, secrets); err != nil {
		return in, s, fmt.Errorf("object store configuration: %w", err)
	}
	return in, s, nil
}

// runPass opens the store and runs the pass with the protections of in.
func (r *RetentionReconciler) runPass(ctx context.Context, in *retentionPassInput) (retentionpass.Report, error) {
	open := r.OpenStore
	if open == nil {
		open = objectstore.New
	}
	store, err := open(in.Config)
	if err != nil {
		return retentionpass.Report{}, fmt.Errorf("opening the object store: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, retentionPassTimeout)
	defer cancel()
	name := in.Cluster.Name
	prot := protectedBackups(name, in.Clusters, in.Backups)
	report, err := retentionpass.Run(ctx, store, name, in.Policy, retentionpass.Options{
		Now: in.Now, IncompleteGrace: incompleteGrace(name, in.Backups), Protected: prot.protects,
		Namespace: in.Cluster.Namespace})
	if err != nil {
		return report, fmt.Errorf("bucket %s, %s: %w", in.Config.Bucket, objectstore.ClusterDir(in.Config.Path, name), err)
	}
	return report, nil
}

// finishPass records a pass's outcome: the Backups whose directory it deleted (expired, or left
// without metadata.json by an earlier interrupted pass) are marked expired, even after a failure
// since what is deleted stays deleted; after a success, the completed Backups recorded in the
// cluster's directory whose metadata.json the pass did not find are marked missing (marks an
// earlier pass lost); a success is stamped; the Events go on the Cluster.
func (r *RetentionReconciler) finishPass(ctx context.Context, cached *v1.Cluster, in *retentionPassInput,
	report retentionpass.Report, passErr error,
) (ctrl.Result, error) {
	logger := log.FromContext(ctx)
	key := client.ObjectKeyFromObject(cached)
	obj, now := cached, r.Clock.Now()
	if in != nil {
		obj, now = in.Cluster, in.Now
	}
	policy := describePolicy(obj.Spec.Backup)
	failures := 0
	if passErr != nil {
		failures = r.failures.add(key)
	} else {
		r.failures.reset(key)
	}
	out := decideRetentionOutcome(policy, report, passErr, failures)
	var markErr error
	gone := slices.Concat(report.Expired, report.Incomplete)
	if in != nil && len(gone) > 0 {
		markErr = r.markExpired(ctx, backupsOfExpired(gone, in.Config, in.Backups), policy, now)
	}
	if in != nil && passErr == nil && report.Listed {
		missing := backupsMissing(in.Cluster.Name, report.Found, gone, in.Config, in.Backups)
		markErr = errors.Join(markErr, r.markMissing(ctx, missing, now))
	}
	if out.Stamp {
		if err := r.stamp(ctx, key, now); err != nil {
			return ctrl.Result{}, err
		}
	}
	if passErr != nil {
		logger.Error(passErr, "retention pass failed", "retry", out.RequeueAfter)
	} else {
		logger.Info("retention pass done", "expired", len(report.Expired), "expiredBytes", report.ExpiredBytes,
			"segments", report.Segments, "segmentBytes", report.SegmentBytes, "incomplete", len(report.Incomplete))
	}
	emit(r.Recorder, obj, out.Events)
	if markErr != nil {
		return ctrl.Result{}, markErr
	}
	return ctrl.Result{RequeueAfter: out.RequeueAfter}, nil
}

// retentionFailures counts the failed passes in a row of each Cluster, for the backoff. It lives
// in memory: after a restart the first retry comes soon again.
type retentionFailures struct {
	mu sync.Mutex
	n  map[types.NamespacedName]int
}

func (f *retentionFailures) add(key types.NamespacedName) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == nil {
		f.n = map[types.NamespacedName]int{}
	}
	f.n[key]++
	return f.n[key]
}

func (f *retentionFailures) reset(key types.NamespacedName) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.n, key)
}

package cluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/instances"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/failover"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// gather reads the Cluster and the children it controls through the cache, and the instances'
// reports. When what it read would create or remove instances, it reads the Cluster, its Pods and
// its PVCs again from the API server: a cache that has not yet seen the last serial or the last
// switchover must never make the controller reuse a serial or remove the new primary. Last, it
// reads the Cluster's Secrets from the API server. The Observation is nil when the Cluster is
// gone or being deleted (owner references take care of the children).
func (r *Reconciler) gather(ctx context.Context, key client.ObjectKey) (*Observation, error) {
	var c v1.Cluster
	if err := r.Client.Get(ctx, key, &c); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if c.DeletionTimestamp != nil {
		return nil, nil
	}
	image := r.OperatorImage
	if image == "" {
		image = specs.DefaultOperatorImage
	}
	o := &Observation{Now: r.Clock.Now(), Cluster: &c, OperatorImage: image, MaxReadLag: r.MaxReadLag}
	if o.MaxReadLag == 0 {
		o.MaxReadLag = DefaultMaxReadLag
	}
	_, o.SemiSyncSettable = r.Instances.(instances.SemiSyncSetter)
	sel := []client.ListOption{client.InNamespace(c.Namespace), client.MatchingLabels{v1.ClusterLabel: c.Name}}
	var pods corev1.PodList
	var pvcs corev1.PersistentVolumeClaimList
	var svcs corev1.ServiceList
	for what, list := range map[string]client.ObjectList{"Pods": &pods, "PVCs": &pvcs, "Services": &svcs} {
		if err := r.Client.List(ctx, list, sel...); err != nil {
			return nil, fmt.Errorf("listing the %s of Cluster %s: %w", what, key, err)
		}
	}
	o.Pods = kit.ControlledBy(&c, pods.Items)
	o.PVCs = kit.ControlledBy(&c, pvcs.Items)
	o.Services = kit.ControlledBy(&c, svcs.Items)
	o.Reports, o.ReportErrors = r.reports(ctx, o)
	if o.ManagerBinary = r.ManagerBinary; o.ManagerBinary != nil {
		o.ManagerUpdatesSent = r.managerUpdates.forPods(o.Pods, o.ManagerBinary.SHA256)
	}
	// The Lease after the reports: a target seen read-only in its report and holding the Lease
	// read after it is promoting (it takes the Lease before it clears read-only); with the Lease
	// read first, a switchover could be aborted under a target that took it in between.
	lease, err := r.readLease(ctx, &c)
	if err != nil {
		return nil, err
	}
	o.Lease = lease
	if Decide(*o).needsFreshLook() {
		if err := r.refresh(ctx, o); err != nil || o.Cluster == nil {
			return nil, err
		}
	}
	if o.RecoveryBackup, err = r.readRecoveryBackup(ctx, o.Cluster); err != nil {
		return nil, err
	}
	secrets, err := r.readSecrets(ctx, o.Cluster, secretNames(o.Cluster, certInstances(o.Cluster, o.PVCs, o.Pods)))
	if err != nil {
		return nil, err
	}
	o.Secrets = secrets
	o.RefusedReplacements = r.dryRunReplacements(ctx, o)
	if o.StorageClasses, err = r.readStorageClasses(ctx, o.Cluster, o.PVCs); err != nil {
		return nil, err
	}
	if o.ForeignObjects, err = r.readForeignInstanceObjects(ctx, o); err != nil {
		return nil, err
	}
	o.PodMonitor = r.observePodMonitor(ctx, o.Cluster)
	return o, nil
}

// refresh re-reads the Cluster, its Pods and its PVCs from the API server, bypassing the cache;
// o.Cluster is nil when the Cluster is gone or being deleted.
func (r *Reconciler) refresh(ctx context.Context, o *Observation) error {
	var c v1.Cluster
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(o.Cluster), &c); err != nil || c.DeletionTimestamp != nil {
		o.Cluster = nil
		return client.IgnoreNotFound(err)
	}
	sel := []client.ListOption{client.InNamespace(c.Namespace), client.MatchingLabels{v1.ClusterLabel: c.Name}}
	var pods corev1.PodList
	var pvcs corev1.PersistentVolumeClaimList
	if err := r.APIReader.List(ctx, &pods, sel...); err != nil {
		return fmt.Errorf("listing the Pods of Cluster %s: %w", c.Name, err)
	}
	if err := r.APIReader.List(ctx, &pvcs, sel...); err != nil {
		return fmt.Errorf("listing the PVCs of Cluster %s: %w", c.Name, err)
	}
	o.Cluster, o.Pods, o.PVCs = &c, kit.ControlledBy(&c, pods.Items), kit.ControlledBy(&c, pvcs.Items)
	return nil
}

// reports asks the instances of o's Pods, the suspect ones with SuspectTimeout (splitSuspects),
// logging each one that does not answer.
func (r *Reconciler) reports(ctx context.Context, o *Observation) (map[string]*instanceclient.Status, map[string]string) {
	if r.Instances == nil {
		return nil, nil
	}
	// Whether the primary's renewal is overdue, from the Lease as the last reconcile read it
	// (this one reads it after the reports).
	spec, st := failover.ObserveCluster(o.Cluster)
	last, _ := r.leases.last(client.ObjectKey{Namespace: o.Cluster.Namespace, Name: specs.PrimaryLeaseName(o.Cluster.Name)}.String())
	overdue := failover.LeaseRenewalOverdue(failover.Observation{Now: o.Now, Spec: spec, Status: st, Lease: last})
	trusted, suspect := splitSuspects(o.Pods, r.unanswered.snapshot(), st.CurrentPrimary, overdue)
	reports, errs := r.askInstances(ctx, o, trusted, suspect)
	r.unanswered.note(o.Pods, reports, errs, r.Clock.Now())
	out := map[string]string{}
	for name, err := range errs {
		log.FromContext(ctx).Info("instance did not report", "instance", name, "error", err.Error())
		out[name] = err.Error()
	}
	return reports, out
}

// readSecrets reads the named Secrets of c's namespace from the API server (the operator does not
// cache Secrets); the map holds those that exist.
func (r *Reconciler) readSecrets(ctx context.Context, c *v1.Cluster, names []string) (map[string]*corev1.Secret, error) {
	out := map[string]*corev1.Secret{}
	for _, name := range names {
		var s corev1.Secret
		err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: name}, &s)
		if client.IgnoreNotFound(err) != nil {
			return nil, fmt.Errorf("reading Secret %s: %w", name, err)
		}
		if err == nil {
			out[name] = &s
		}
	}
	return out, nil
}

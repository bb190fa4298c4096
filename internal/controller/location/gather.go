package location

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

// gather opens the Cluster's object store and reads what Decide needs: the marker, and without a
// marker of this Cluster what the location holds; for a takeover also whether the marker's
// holder exists and every transaction the location holds.
func (r *Reconciler) gather(ctx context.Context, c *v1.Cluster) (Observation, *objectstore.Client, error) {
	o := Observation{Now: r.Clock.Now(), Cluster: c, Location: c.ObjectStoreLocation()}
	store, err := r.openStore(ctx, c)
	if err != nil {
		return o, nil, err
	}
	dir := c.ObjectStoreDirName()
	o.Claim, o.ClaimETag, err = store.ReadClaim(ctx, dir)
	switch {
	case errors.Is(err, objectstore.ErrNotFound):
		o.Claim = nil
	case err != nil:
		return o, nil, fmt.Errorf("reading the location's marker: %w", err)
	case o.Claim.UID == string(c.UID):
		return o, store, nil
	}
	if o.Claim != nil && !continueHistory(c) {
		return o, store, nil // another incarnation's marker: what else the location holds changes nothing
	}
	// The backups' metadata.json are read only when a rule looks at them: data without a marker
	// written after the Cluster's creation (adoption), or a takeover.
	if o.Contents, err = store.LocationContents(ctx, dir); err != nil {
		return o, nil, err
	}
	adoptable := o.Claim == nil && !o.Contents.Empty() && !o.Contents.Oldest.Before(c.CreationTimestamp.Add(adoptionMargin))
	if adoptable || (continueHistory(c) && !o.Contents.Empty()) {
		if err := store.ReadBackupOwners(ctx, &o.Contents); err != nil {
			return o, nil, err
		}
	}
	if !continueHistory(c) || (o.Claim == nil && o.Contents.Empty()) {
		return o, store, nil
	}
	if o.RecoveredFrom, err = r.recoveredFrom(ctx, c); err != nil {
		return o, nil, err
	}
	if o.Claim != nil {
		o.Holder = r.holderState(ctx, o.Claim)
	}
	if o.LocationGTIDs, err = locationGTIDs(ctx, store, dir, o.Contents); err != nil {
		return o, nil, err
	}
	return o, store, nil
}

// openStore reads the object store's Secrets and opens it.
func (r *Reconciler) openStore(ctx context.Context, c *v1.Cluster) (*objectstore.Client, error) {
	return objectstore.OpenSpec(ctx, r.APIReader, c.Namespace, c.Spec.Backup.ObjectStore, r.OpenStore)
}

// holderState looks the marker's Cluster up by namespace and name.
func (r *Reconciler) holderState(ctx context.Context, claim *objectstore.Claim) HolderState {
	var other v1.Cluster
	err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: claim.Namespace, Name: claim.Cluster}, &other)
	switch {
	case apierrors.IsNotFound(err):
		return HolderGone
	case err != nil:
		return HolderUnknown
	case string(other.UID) == claim.UID:
		return HolderExists
	}
	return HolderGone // a later Cluster of that name: the marker's incarnation is gone
}

// recoveredFrom is the location the Cluster was restored from, "" when it was not (or not yet).
func (r *Reconciler) recoveredFrom(ctx context.Context, c *v1.Cluster) (string, error) {
	rec := c.Recovery()
	if rec == nil || c.Status.Recovery == nil {
		return "", nil
	}
	if rec.Source != nil {
		return v1.LocationOf(&rec.Source.ObjectStore, rec.Source.ClusterName), nil
	}
	if rec.Backup == nil {
		return "", nil
	}
	var b v1.Backup
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: c.Namespace, Name: rec.Backup.Name}, &b); err != nil {
		if apierrors.IsNotFound(err) {
			return "", nil
		}
		return "", fmt.Errorf("reading Backup %s: %w", rec.Backup.Name, err)
	}
	if b.Status.ObjectStore == nil {
		return "", nil
	}
	_, ref, err := objectstore.ParseBackupDir(b.Status.DestinationPath)
	if err != nil {
		return "", nil
	}
	return v1.LocationOf(b.Status.ObjectStore, ref.Cluster), nil
}

// locationGTIDs is the union of the archived segments' transactions and the backups' sets.
func locationGTIDs(ctx context.Context, store *objectstore.Client, dir string, contents objectstore.Contents) (gtid.Set, error) {
	index, _, err := store.ReadIndex(ctx, dir)
	if err != nil {
		return gtid.Set{}, fmt.Errorf("reading the binlog index: %w", err)
	}
	var all gtid.Set
	for _, s := range index.Segments {
		g, err := gtid.Parse(s.GTIDRange)
		if err != nil {
			return gtid.Set{}, fmt.Errorf("segment %s: %w", s.Name, err)
		}
		all = gtid.Union(all, g)
	}
	for _, raw := range contents.BackupGTIDs {
		g, err := gtid.Parse(raw)
		if err != nil {
			return gtid.Set{}, fmt.Errorf("a backup's gtidExecuted: %w", err)
		}
		all = gtid.Union(all, g)
	}
	return all, nil
}

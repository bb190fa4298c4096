package backup

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

const (
	// cleanupTimeout bounds one attempt to delete a backup directory, so a hung object store
	// never holds a worker.
	cleanupTimeout = 2 * time.Minute
	// cleanupMaxRetries is how many times the object store client tries one request during a
	// cleanup; the finalizer's own backoff does the rest.
	cleanupMaxRetries = 2
)

// errStoreUnresolved marks a store the cleanup cannot reach until a user acts.
var errStoreUnresolved = errors.New("object store unresolved")

// reconcileFinalizer runs the remote-cleanup finalizer's gather, decide and act. done says the
// reconcile ends here: the Backup is being deleted, or the finalizer step failed.
func (r *Reconciler) reconcileFinalizer(ctx context.Context, b *v1.Backup) (ctrl.Result, bool, error) {
	cleaning := b.DeletionTimestamp != nil && controllerutil.ContainsFinalizer(b, v1.RemoteCleanupFinalizer)
	if cleaning {
		// The cleanup deletes a recovery point: it decides on the Backup as the API server has
		// it, not as the cache does (a keep or the bypass annotation written since).
		fresh := &v1.Backup{}
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(b), fresh); err != nil {
			if apierrors.IsNotFound(err) {
				return ctrl.Result{}, true, nil
			}
			return r.cleanupReadFailed(ctx, b, fmt.Errorf("reading Backup %s: %w", b.Name, err))
		}
		*b = *fresh
	}
	o, err := r.gatherFinalizer(ctx, b)
	if err != nil && cleaning {
		return r.cleanupReadFailed(ctx, b, err)
	}
	if err != nil {
		return ctrl.Result{}, true, err
	}
	d := decideFinalizer(*o)
	if d.Action == finCleanup {
		d = decideCleanupResult(*o, r.deleteRemote(ctx, o, d.Ref))
	}
	res, err := r.actFinalizer(ctx, o, d)
	return res, b.DeletionTimestamp != nil || err != nil, err
}

// cleanupReadFailed surfaces a cleanup that could not read what it decides on (the API server
// failed or refused a read; a missing RBAC permission does not go away by itself) in the
// RemoteCleanup condition and a Warning, and retries with the cleanup's backoff, so that the
// Warning comes once per attempt. Nothing is deleted.
func (r *Reconciler) cleanupReadFailed(ctx context.Context, b *v1.Backup, err error) (ctrl.Result, bool, error) {
	o := &finalizerObservation{Now: r.Clock.Now(), Backup: b}
	res, aerr := r.actFinalizer(ctx, o, decideCleanupReadFailed(*o, err))
	if aerr != nil {
		return ctrl.Result{}, true, errors.Join(err, aerr)
	}
	return res, true, nil
}

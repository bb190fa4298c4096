package instance

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/restore"
)

var (
	// errRecoveryBackupMissing: the Backup a recovery names does not exist, is not completed or
	// records no location.
	errRecoveryBackupMissing = errors.New("the recovery's backup is not available")
	// errRecoveryChecksum: the backup's metadata.json records another checksum than its Backup.
	errRecoveryChecksum = errors.New("the backup's checksum differs from its Backup's")
	// errRecoveryRemoved: the Cluster's recovery section was removed while it was pending.
	errRecoveryRemoved = errors.New("bootstrap.recovery was removed before the restore")
	// errPointInTimeUnavailable: the recovery asks for a replay of archived binlogs.
	errPointInTimeUnavailable = errors.New("point-in-time recovery (recoveryTarget) is not available in this version: " +
		"nothing is restored rather than the base backup alone; remove recoveryTarget to restore the base backup as it ended")
)

// recoverySource is the backup a recovery restores, located and with its metadata read.
type recoverySource struct {
	store objectstore.Store
	md    *objectstore.Metadata
	// backup is the Backup object's name, or the backup's name in the store.
	backup string
	// path is the backup's directory in the object store.
	path string
}

// locateRecovery finds the backup bootstrap.recovery names: through the Backup object's
// recorded location, or as the newest complete backup of the source cluster in its object store.
func locateRecovery(ctx context.Context, k8s client.Reader, namespace string, rec *v1alpha1.BootstrapRecovery) (recoverySource, error) {
	switch {
	case rec.RecoveryTarget != nil:
		return recoverySource{}, errPointInTimeUnavailable
	case rec.Backup != nil:
		return locateBackupObject(ctx, k8s, namespace, rec.Backup.Name)
	case rec.Source != nil:
		return locateInBucket(ctx, k8s, namespace, rec.Source)
	}
	return recoverySource{}, fmt.Errorf("%w: bootstrap.recovery names neither a backup nor a source", errRecoveryBackupMissing)
}

func locateBackupObject(ctx context.Context, k8s client.Reader, namespace, name string) (recoverySource, error) {
	var b v1alpha1.Backup
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &b); err != nil {
		if apierrors.IsNotFound(err) {
			return recoverySource{}, fmt.Errorf("%w: Backup %s/%s does not exist", errRecoveryBackupMissing, namespace, name)
		}
		return recoverySource{}, fmt.Errorf("reading Backup %s/%s: %w", namespace, name, err)
	}
	st := &b.Status
	switch {
	case st.Phase != v1alpha1.BackupPhaseCompleted:
		return recoverySource{}, fmt.Errorf("%w: Backup %s is %q, not completed", errRecoveryBackupMissing, name, st.Phase)
	case st.DestinationPath == "" || st.ObjectStore == nil:
		return recoverySource{}, fmt.Errorf("%w: Backup %s records no object store location", errRecoveryBackupMissing, name)
	}
	prefix, ref, err := objectstore.ParseBackupDir(st.DestinationPath)
	if err != nil {
		return recoverySource{}, fmt.Errorf("%w: Backup %s: %w", errRecoveryBackupMissing, name, err)
	}
	spec := st.ObjectStore.DeepCopy()
	spec.Path = prefix
	if st.Bucket != "" {
		spec.Bucket = st.Bucket
	}
	if st.Endpoint != "" {
		spec.Endpoint = st.Endpoint
	}
	store, err := openRecoveryStore(ctx, k8s, namespace, spec)
	if err != nil {
		return recoverySource{}, err
	}
	md, err := store.ReadMetadata(ctx, ref)
	if err != nil {
		return recoverySource{}, fmt.Errorf("reading the metadata.json of Backup %s at %s: %w", name, st.DestinationPath, err)
	}
	if st.Checksum != "" && st.Checksum != md.Checksum() {
		return recoverySource{}, fmt.Errorf("%w: Backup %s records %s, %s%s records %s", errRecoveryChecksum,
			name, st.Checksum, st.DestinationPath, objectstore.MetadataName, md.Checksum())
	}
	return recoverySource{store: store, md: md, backup: name, path: st.DestinationPath}, nil
}

func locateInBucket(ctx context.Context, k8s client.Reader, namespace string, src *v1alpha1.RecoverySource) (recoverySource, error) {
	store, err := openRecoveryStore(ctx, k8s, namespace, &src.ObjectStore)
	if err != nil {
		return recoverySource{}, err
	}
	md, err := restore.LocateNewest(ctx, store, src.ClusterName)
	if err != nil {
		return recoverySource{}, fmt.Errorf("bucket %s, path %q: %w", src.ObjectStore.Bucket, src.ObjectStore.Path, err)
	}
	return recoverySource{store: store, md: md, backup: md.BackupName, path: store.BackupDir(md.Ref())}, nil
}

// openRecoveryStore reads the credentials the configuration references and opens the store.
func openRecoveryStore(ctx context.Context, k8s client.Reader, namespace string, spec *v1alpha1.ObjectStoreConfiguration) (*objectstore.Client, error) {
	secrets, err := objectstore.ReadSecrets(ctx, k8s, namespace, spec)
	if err != nil {
		return nil, fmt.Errorf("object store credentials: %w", err)
	}
	cfg, err := objectstore.ResolveConfig(spec, secrets)
	if err != nil {
		return nil, err
	}
	return objectstore.New(cfg)
}

// RecoveryFailureReason is the reason of the Recovered condition for a failed restore.
func RecoveryFailureReason(err error) string {
	switch {
	case errors.Is(err, errPointInTimeUnavailable):
		return v1alpha1.ReasonRecoveryPointInTimeUnavailable
	case errors.Is(err, objectstore.ErrChecksumMismatch), errors.Is(err, restore.ErrCorrupt),
		errors.Is(err, restore.ErrGTIDMismatch), errors.Is(err, errRecoveryChecksum):
		return v1alpha1.ReasonRecoveryVerificationFailed
	case errors.Is(err, errRecoveryBackupMissing), errors.Is(err, restore.ErrNoBackup), errors.Is(err, objectstore.ErrNotFound):
		return v1alpha1.ReasonRecoveryBackupNotFound
	}
	return v1alpha1.ReasonRecoveryBackupUnreadable
}

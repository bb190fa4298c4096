package instance

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/pitr"
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
	// errRecoveryTarget: the recoveryTarget cannot be read (admission validates it already).
	errRecoveryTarget = errors.New("bootstrap.recovery.recoveryTarget is not valid")
)

// recoverySource is the backup a recovery restores, located and with its metadata read.
type recoverySource struct {
	store objectstore.Store
	md    *objectstore.Metadata
	// backup is the Backup object's name, or the backup's name in the store.
	backup string
	// path is the backup's directory in the object store.
	path string
	// target, when set, asks for a point-in-time recovery: the binlog archive of the cluster
	// named archive (the one that took the backup, or the source's) is replayed up to it.
	target  *pitr.Target
	archive string
	// replayed is what the replay did, once it succeeded.
	replayed *pitr.Result
}

// locateRecovery finds the backup bootstrap.recovery names: through the Backup object's
// recorded location, or in the source cluster's object store (the newest complete backup, or
// with a recoveryTarget the one pitr.ChooseBase picks for it). A named Backup must fit the
// target (pitr.CheckBase).
func locateRecovery(ctx context.Context, k8s client.Reader, namespace string, rec *v1alpha1.BootstrapRecovery) (recoverySource, error) {
	var target *pitr.Target
	if rec.RecoveryTarget != nil {
		t, err := pitr.TargetOf(rec.RecoveryTarget)
		if err != nil {
			return recoverySource{}, fmt.Errorf("%w: %w", errRecoveryTarget, err)
		}
		target = &t
	}
	var src recoverySource
	var err error
	switch {
	case rec.Backup != nil:
		src, err = locateBackupObject(ctx, k8s, namespace, rec.Backup.Name)
		if err == nil && target != nil {
			err = pitr.CheckBase(src.md, *target)
		}
		if err == nil {
			src.archive = src.md.Cluster
		}
	case rec.Source != nil:
		src, err = locateInBucket(ctx, k8s, namespace, rec.Source, target)
		src.archive = rec.Source.ClusterName
	default:
		err = fmt.Errorf("%w: bootstrap.recovery names neither a backup nor a source", errRecoveryBackupMissing)
	}
	if err != nil {
		return recoverySource{}, err
	}
	src.target = target
	return src, nil
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

func locateInBucket(ctx context.Context, k8s client.Reader, namespace string, src *v1alpha1.RecoverySource, target *pitr.Target) (recoverySource, error) {
	store, err := openRecoveryStore(ctx, k8s, namespace, &src.ObjectStore)
	if err != nil {
		return recoverySource{}, err
	}
	found, err := restore.LocateAll(ctx, store, src.ClusterName)
	if err == nil {
		found, err = restore.OfIncarnation(found, src.Incarnation)
	}
	var md *objectstore.Metadata
	switch {
	case err != nil:
	case target == nil:
		md = restore.Newest(found)
	default:
		md, err = pitr.ChooseBase(found, *target)
	}
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
	case errors.Is(err, errRecoveryTarget), errors.Is(err, pitr.ErrNoBase), errors.Is(err, pitr.ErrBaseBeyondTarget),
		errors.Is(err, pitr.ErrBeyondArchive):
		return v1alpha1.ReasonRecoveryPointInTimeUnavailable
	case errors.Is(err, pitr.ErrGap), errors.Is(err, pitr.ErrSegment) && errors.Is(err, objectstore.ErrNotFound):
		return v1alpha1.ReasonRecoveryArchiveIncomplete
	case errors.Is(err, objectstore.ErrChecksumMismatch), errors.Is(err, restore.ErrCorrupt),
		errors.Is(err, restore.ErrGTIDMismatch), errors.Is(err, errRecoveryChecksum), errors.Is(err, pitr.ErrReplayMismatch):
		return v1alpha1.ReasonRecoveryVerificationFailed
	case errors.Is(err, errRecoveryBackupMissing), errors.Is(err, restore.ErrNoBackup), errors.Is(err, objectstore.ErrNotFound):
		return v1alpha1.ReasonRecoveryBackupNotFound
	}
	return v1alpha1.ReasonRecoveryBackupUnreadable
}

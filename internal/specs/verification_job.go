package specs

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	mysqlv1alpha1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backupjob"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

// VerifyContainerName is the container of a verification Job.
const VerifyContainerName = "verify"

// Defaults of spec.backup.verification.
const (
	DefaultVerificationTimeout = 2 * time.Hour
	DefaultCheckTableBudget    = 10 * time.Minute
)

// verificationParameters are the Cluster's my.cnf settings a restored data directory needs to
// start (the initialization-only ones); the rest of the verification server is mysqld's defaults
// (a 128 MiB buffer pool). A data directory that records its own values wins (restore).
var verificationParameters = slices.Sorted(maps.Keys(InitOnlyParameters))

// VerificationJobName names the verification of backup that became due at due: the Backup's
// name (cut to 49 characters) and a hash of both, so that a decision taken again after a restart
// names the same Job.
func VerificationJobName(backup string, due time.Time) string {
	sum := sha256.Sum256([]byte(backup + "/" + due.UTC().Format(time.RFC3339Nano)))
	return strings.TrimRight(backup[:min(len(backup), 49)], "-.") + "-verify-" + hex.EncodeToString(sum[:])[:6]
}

// VerificationJobParams are the inputs of a verification Job that are not in the Backup or its
// Cluster.
type VerificationJobParams struct {
	OperatorImage string
	Name          string
	// Due is the instant that made the verification due (v1.VerificationDueAnnotation).
	Due time.Time
	// Archive is the directory whose binlog archive the Job replays; empty for none.
	Archive string
}

// BuildVerificationJob returns the Job that runs `manager verify` on Backup b of Cluster c in the
// Cluster's MySQL image, reading the object store and directory the Backup recorded. Like a
// backup Job it runs one Pod once, mounts no service account token and reads every secret from a
// file; it reaches no instance (no credential of the Cluster is mounted, only the object store's).
// The Backup owns it without controlling it, so it goes with the Backup.
func BuildVerificationJob(b *mysqlv1alpha1.Backup, c *mysqlv1alpha1.Cluster, p VerificationJobParams) *batchv1.Job {
	v := c.Spec.Backup.Verification
	labels := map[string]string{mysqlv1alpha1.ClusterLabel: c.Name, mysqlv1alpha1.VerificationLabel: b.Name}
	store, dir := backupDestination(b, c)
	scratch, scratchMounts := mysqldScratchVolumes()
	volumes := append([]corev1.Volume{
		{Name: controllerVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: scratchVolume, VolumeSource: verificationScratch(v)},
	}, scratch...)
	mounts := append([]corev1.VolumeMount{
		{Name: controllerVolume, MountPath: ControllerDir},
		{Name: scratchVolume, MountPath: BackupScratchDir},
	}, scratchMounts...)
	args := backupjob.VerifyArgs{Cluster: dir, BackupName: b.Name, BackupID: b.Status.BackupID, Archive: p.Archive,
		ScratchDir: BackupScratchDir, CheckBudget: durationOr(v.CheckTableBudget, DefaultCheckTableBudget),
		Store: backupjob.Store{Bucket: store.Bucket, Path: store.Path, Endpoint: store.Endpoint, Region: store.Region,
			ForcePathStyle: store.ForcePathStyle}}
	if prefix, _, err := objectstore.ParseBackupDir(b.Status.DestinationPath); err == nil {
		args.Store.Path = prefix
	}
	if b.Status.Bucket != "" {
		args.Store.Bucket = b.Status.Bucket
	}
	if b.Status.Endpoint != "" {
		args.Store.Endpoint = b.Status.Endpoint
	}
	args.MysqldArgs = StartArgs(c.Spec.MySQL.Parameters, verificationParameters)
	for _, f := range storeSecretFiles(store) {
		*f.flag(&args.Store) = storeSecretsDir + "/" + f.volume + "/value"
		volumes = append(volumes, secretVolume(f.volume, f.sel.Name, corev1.KeyToPath{Key: f.sel.Key, Path: "value"}))
		mounts = append(mounts, corev1.VolumeMount{Name: f.volume, MountPath: storeSecretsDir + "/" + f.volume, ReadOnly: true})
	}
	container := corev1.Container{
		Name: VerifyContainerName, Image: c.Spec.ImageName, ImagePullPolicy: corev1.PullIfNotPresent,
		Command: []string{ManagerPath, "verify"}, Args: args.Flags(), VolumeMounts: mounts,
		Resources:                verificationResources(v),
		TerminationMessagePath:   corev1.TerminationMessagePathDefault,
		TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		SecurityContext:          containerSecurityContext(),
	}
	notController := false
	owner := backupOwnerReference(b)
	owner.Controller = &notController
	job := oneShotJob(metav1.ObjectMeta{Name: p.Name, Namespace: b.Namespace, Labels: labels,
		Annotations:     map[string]string{mysqlv1alpha1.VerificationDueAnnotation: p.Due.UTC().Format(time.RFC3339Nano)},
		OwnerReferences: []metav1.OwnerReference{owner}}, p.OperatorImage, container, volumes)
	deadline := int64(durationOr(v.Timeout, DefaultVerificationTimeout).Seconds())
	job.Spec.ActiveDeadlineSeconds = &deadline
	return job
}

// verificationScratch is an emptyDir, or with storage.size a generic ephemeral volume.
func verificationScratch(v *mysqlv1alpha1.BackupVerification) corev1.VolumeSource {
	if v.Storage == nil || v.Storage.Size.IsZero() {
		return corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}
	}
	return corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
		VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: v.Storage.StorageClassName,
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceStorage: v.Storage.Size}},
		}},
	}}
}

func verificationResources(v *mysqlv1alpha1.BackupVerification) corev1.ResourceRequirements {
	if v.Resources != nil {
		return v.Resources.Container()
	}
	return corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("512Mi")}}
}

func durationOr(d *metav1.Duration, def time.Duration) time.Duration {
	if d == nil || d.Duration <= 0 {
		return def
	}
	return d.Duration
}

// secretVolume mounts the items of a Secret.
func secretVolume(name, secret string, items ...corev1.KeyToPath) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
		Secret: &corev1.SecretVolumeSource{SecretName: secret, Items: items}}}
}

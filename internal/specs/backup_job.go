package specs

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	mysqlv1alpha1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backupjob"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/certs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/objectstore"
)

// Paths inside a backup Job's container. Every secret is a mounted file.
const (
	BackupContainerName = "backup"
	BackupScratchDir    = "/scratch"
	backupSecretsDir    = "/etc/backup"
	backupPasswordFile  = backupSecretsDir + "/password/" + corev1.BasicAuthPasswordKey
	backupTLSDir        = backupSecretsDir + "/tls"
	storeSecretsDir     = backupSecretsDir + "/object-store"
	scratchVolume       = "scratch"
	backupTLSVolume     = "backup-tls"
	backupPassVolume    = "backup-password"
)

// BackupJobParams are the inputs of a backup Job that are not in the Backup or its Cluster.
type BackupJobParams struct {
	// OperatorImage runs the init container that copies the manager binary.
	OperatorImage string
	// BackupID is the backup's directory in the object store.
	BackupID string
	// Instance is the target instance.
	Instance string
}

// BackupJobName is the name of a Backup's Job: the Backup's own name (at most 63 characters).
func BackupJobName(backup string) string { return backup }

// BackupTargetHost is the DNS name the backup Job reaches an instance at: its headless Service.
func BackupTargetHost(instance, namespace string) string { return instance + "." + namespace + ".svc" }

// BuildBackupJob returns the Job that runs `manager backup` (with the flags of backupjob.Args) for b in the Cluster's MySQL image
// (which holds mysqld, needed by the clone recipient). The Job is owned by the Backup, runs one
// Pod once (no retries, so a finished Backup's data path never runs again), is bounded by the
// Backup's timeout, mounts no service account token, and reads every secret from a file. The
// clone presents the replication client certificate: the backup account requires a certificate
// from the cluster CA (REQUIRE X509), not a particular subject.
func BuildBackupJob(b *mysqlv1alpha1.Backup, c *mysqlv1alpha1.Cluster, p BackupJobParams) *batchv1.Job {
	labels := map[string]string{mysqlv1alpha1.ClusterLabel: c.Name, mysqlv1alpha1.BackupLabel: b.Name}
	volumes, mounts := backupVolumes(b, c)
	container := corev1.Container{
		Name:                     BackupContainerName,
		Image:                    c.Spec.ImageName,
		ImagePullPolicy:          corev1.PullIfNotPresent,
		Command:                  []string{ManagerPath, "backup"},
		Args:                     backupArgs(b, c, p),
		VolumeMounts:             mounts,
		TerminationMessagePath:   corev1.TerminationMessagePathDefault,
		TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		SecurityContext:          containerSecurityContext(),
	}
	job := oneShotJob(metav1.ObjectMeta{Name: BackupJobName(b.Name), Namespace: b.Namespace, Labels: labels,
		OwnerReferences: []metav1.OwnerReference{backupOwnerReference(b)}}, p.OperatorImage, container, volumes)
	if b.Spec.Timeout != nil && b.Spec.Timeout.Duration > 0 {
		secs := int64(b.Spec.Timeout.Duration.Seconds())
		job.Spec.ActiveDeadlineSeconds = &secs
	}
	return job
}

// oneShotJob is a Job of the manager's Jobs (backup, verification): one Pod run once, never
// retried, no service account token, the manager binary copied in by the init container, the
// Pod labelled as the Job.
func oneShotJob(meta metav1.ObjectMeta, operatorImage string, container corev1.Container, volumes []corev1.Volume) *batchv1.Job {
	noToken, zero := false, int32(0)
	return &batchv1.Job{
		ObjectMeta: meta,
		Spec: batchv1.JobSpec{
			BackoffLimit: &zero,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: meta.Labels},
				Spec: corev1.PodSpec{
					RestartPolicy:                corev1.RestartPolicyNever,
					AutomountServiceAccountToken: &noToken,
					SecurityContext:              podSecurityContext(),
					InitContainers:               []corev1.Container{bootstrapContainer(operatorImage)},
					Containers:                   []corev1.Container{container},
					Volumes:                      volumes,
				},
			},
		},
	}
}

func backupArgs(b *mysqlv1alpha1.Backup, c *mysqlv1alpha1.Cluster, p BackupJobParams) []string {
	method := b.Spec.Method
	if method == "" {
		method = mysqlv1alpha1.BackupMethodClone
	}
	store, dir := backupDestination(b, c)
	args := backupjob.Args{
		Cluster: dir, Namespace: c.Namespace, ClusterUID: string(c.UID), BackupName: b.Name, BackupID: p.BackupID, Method: string(method),
		TargetHost: BackupTargetHost(p.Instance, c.Namespace), TargetPort: MySQLPort,
		User: UserBackup, PasswordFile: backupPasswordFile,
		CAFile:     backupTLSDir + "/" + certs.CAKey,
		CertFile:   backupTLSDir + "/" + certs.CertKey,
		KeyFile:    backupTLSDir + "/" + certs.KeyKey,
		ScratchDir: BackupScratchDir,
		Store: backupjob.Store{Bucket: store.Bucket, Path: store.Path, Endpoint: store.Endpoint, Region: store.Region,
			ForcePathStyle: store.ForcePathStyle},
	}
	for _, f := range storeSecretFiles(store) {
		*f.flag(&args.Store) = storeSecretsDir + "/" + f.volume + "/value"
	}
	return args.Flags()
}

// storeSecretFile is one object store secret mounted as a file, and the flag naming the file.
type storeSecretFile struct {
	flag   func(*backupjob.Store) *string
	volume string
	sel    mysqlv1alpha1.SecretKeySelector
}

func storeSecretFiles(store *mysqlv1alpha1.ObjectStoreConfiguration) []storeSecretFile {
	out := []storeSecretFile{
		{func(s *backupjob.Store) *string { return &s.AccessKeyIDFile }, "s3-access-key-id", store.Credentials.AccessKeyID},
		{func(s *backupjob.Store) *string { return &s.SecretAccessKeyFile }, "s3-secret-access-key", store.Credentials.SecretAccessKey},
	}
	if store.Credentials.SessionToken != nil {
		out = append(out, storeSecretFile{func(s *backupjob.Store) *string { return &s.SessionTokenFile },
			"s3-session-token", *store.Credentials.SessionToken})
	}
	if store.EndpointCA != nil {
		out = append(out, storeSecretFile{func(s *backupjob.Store) *string { return &s.EndpointCAFile },
			"s3-endpoint-ca", *store.EndpointCA})
	}
	return out
}

func backupVolumes(b *mysqlv1alpha1.Backup, c *mysqlv1alpha1.Cluster) ([]corev1.Volume, []corev1.VolumeMount) {
	scratch, scratchMounts := mysqldScratchVolumes()
	volumes := []corev1.Volume{
		{Name: controllerVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: scratchVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		secretVolume(backupPassVolume, UserSecretName(c.Name, UserBackup),
			corev1.KeyToPath{Key: corev1.BasicAuthPasswordKey, Path: corev1.BasicAuthPasswordKey}),
		secretVolume(backupTLSVolume, ReplicationClientSecretName(c.Name)),
	}
	mounts := []corev1.VolumeMount{
		{Name: controllerVolume, MountPath: ControllerDir},
		{Name: scratchVolume, MountPath: BackupScratchDir},
		{Name: backupPassVolume, MountPath: backupSecretsDir + "/password", ReadOnly: true},
		{Name: backupTLSVolume, MountPath: backupTLSDir, ReadOnly: true},
	}
	volumes, mounts = append(volumes, scratch...), append(mounts, scratchMounts...)
	store, _ := backupDestination(b, c)
	for _, f := range storeSecretFiles(store) {
		volumes = append(volumes, secretVolume(f.volume, f.sel.Name, corev1.KeyToPath{Key: f.sel.Key, Path: "value"}))
		mounts = append(mounts, corev1.VolumeMount{Name: f.volume, MountPath: storeSecretsDir + "/" + f.volume, ReadOnly: true})
	}
	return volumes, mounts
}

// backupOwnerReference makes the Backup the controller owner of its Job.
func backupOwnerReference(b *mysqlv1alpha1.Backup) metav1.OwnerReference {
	t := true
	return metav1.OwnerReference{
		APIVersion: mysqlv1alpha1.GroupVersion.String(), Kind: "Backup", Name: b.Name, UID: b.UID,
		Controller: &t, BlockOwnerDeletion: &t,
	}
}

// backupDestination is where the Job writes: the object store and directory the Backup recorded
// when its destination was chosen (status.objectStore, status.destinationPath), so a change of the
// Cluster's path or serverName in between does not send the backup elsewhere; the Cluster's own
// for a Backup that recorded none.
func backupDestination(b *mysqlv1alpha1.Backup, c *mysqlv1alpha1.Cluster) (*mysqlv1alpha1.ObjectStoreConfiguration, string) {
	store, dir := c.Spec.Backup.ObjectStore, c.ObjectStoreDirName()
	if b.Status.ObjectStore != nil {
		store = b.Status.ObjectStore
	}
	if _, ref, err := objectstore.ParseBackupDir(b.Status.DestinationPath); err == nil {
		dir = ref.Cluster
	}
	return store, dir
}

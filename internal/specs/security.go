package specs

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// MySQLUID and MySQLGID are the user and group every instance Pod and backup Job runs as, and
// the group that owns the data volume (fsGroup). The MySQL image must let this user run mysqld and
// read its files; 999 is mysql in the usual MySQL images and in the local node's image.
const (
	MySQLUID int64 = 999
	MySQLGID int64 = 999
)

// TmpDir and MysqldRunDir are emptyDirs in every container that runs mysqld, whose root
// filesystem is read-only. TmpDir is mysqld's tmpdir (sorts, temporary tables), the socket link of
// a backup Job's private mysqld, any client's scratch. MysqldRunDir is where mysqld puts what it
// does not take from my.cnf: the X Plugin's socket and its lock file.
const (
	TmpDir          = "/tmp"
	MysqldRunDir    = "/var/run/mysqld"
	tmpVolume       = "tmp"
	mysqldRunVolume = "mysqld-run"
)

// podSecurityContext is the Pod-level security context of instance Pods and backup Jobs: a fixed
// non-root user, the volume's group set to it only when the volume's root does not already match
// (OnRootMismatch: a large data directory is not walked at every start), and the runtime's
// default seccomp profile. With containerSecurityContext this satisfies the Pod Security
// "restricted" profile.
func podSecurityContext() *corev1.PodSecurityContext {
	onRootMismatch := corev1.FSGroupChangeOnRootMismatch
	return &corev1.PodSecurityContext{
		RunAsNonRoot:        ptr.To(true),
		RunAsUser:           ptr.To(MySQLUID),
		RunAsGroup:          ptr.To(MySQLGID),
		FSGroup:             ptr.To(MySQLGID),
		FSGroupChangePolicy: &onRootMismatch,
		SeccompProfile:      &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// containerSecurityContext is every container's: no capabilities, no privilege escalation, a
// read-only root filesystem (writes go to the volumes mounted for them).
func containerSecurityContext() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		RunAsNonRoot:             ptr.To(true),
		AllowPrivilegeEscalation: ptr.To(false),
		ReadOnlyRootFilesystem:   ptr.To(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// mysqldScratchVolumes are the emptyDirs mounted at TmpDir and MysqldRunDir, and their mounts.
func mysqldScratchVolumes() ([]corev1.Volume, []corev1.VolumeMount) {
	emptyDir := func(name string) corev1.Volume {
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
	}
	return []corev1.Volume{emptyDir(tmpVolume), emptyDir(mysqldRunVolume)},
		[]corev1.VolumeMount{{Name: tmpVolume, MountPath: TmpDir}, {Name: mysqldRunVolume, MountPath: MysqldRunDir}}
}

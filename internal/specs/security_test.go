package specs

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// podsUnderTest are the Pod specs the operator builds: an instance Pod and a backup Job's template.
func podsUnderTest() map[string]corev1.PodSpec {
	b, c := backupJobFixture()
	return map[string]corev1.PodSpec{
		"instance Pod": BuildPod(c, 1, PodOptions{OperatorImage: "op:1"}).Spec,
		"backup Job":   BuildBackupJob(b, c, BackupJobParams{OperatorImage: "op:1", BackupID: "b", Instance: "db-1"}).Spec.Template.Spec,
	}
}

func TestPodSecurityContext(t *testing.T) {
	for kind, spec := range podsUnderTest() {
		sc := spec.SecurityContext
		for _, tc := range []struct {
			rule string
			ok   func() bool
		}{
			{"runs as non-root", func() bool { return sc.RunAsNonRoot != nil && *sc.RunAsNonRoot }},
			{"runs as the fixed uid 999", func() bool { return sc.RunAsUser != nil && *sc.RunAsUser == 999 }},
			{"runs as the fixed gid 999", func() bool { return sc.RunAsGroup != nil && *sc.RunAsGroup == 999 }},
			{"volumes belong to group 999 (fsGroup)", func() bool { return sc.FSGroup != nil && *sc.FSGroup == 999 }},
			{"the volume's ownership is changed only when its root does not match", func() bool {
				return sc.FSGroupChangePolicy != nil && *sc.FSGroupChangePolicy == corev1.FSGroupChangeOnRootMismatch
			}},
			{"seccomp profile RuntimeDefault", func() bool {
				return sc.SeccompProfile != nil && sc.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault
			}},
			{"no host namespaces", func() bool { return !spec.HostNetwork && !spec.HostPID && !spec.HostIPC }},
			{"no hostPath volume", func() bool {
				for _, v := range spec.Volumes {
					if v.HostPath != nil {
						return false
					}
				}
				return true
			}},
		} {
			if sc == nil || !tc.ok() {
				t.Errorf("%s: rule broken: %s", kind, tc.rule)
			}
		}
	}
}

func TestContainerSecurityContext(t *testing.T) {
	for kind, spec := range podsUnderTest() {
		for _, c := range append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...) {
			sc := c.SecurityContext
			for _, tc := range []struct {
				rule string
				ok   func() bool
			}{
				{"no privilege escalation", func() bool {
					return sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation
				}},
				{"drops ALL capabilities and adds none", func() bool {
					return sc.Capabilities != nil && reflect.DeepEqual(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) &&
						len(sc.Capabilities.Add) == 0
				}},
				{"read-only root filesystem", func() bool { return sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem }},
				{"not privileged", func() bool { return sc.Privileged == nil || !*sc.Privileged }},
				{"runs as non-root", func() bool { return sc.RunAsNonRoot != nil && *sc.RunAsNonRoot }},
				{"seccomp profile RuntimeDefault", func() bool {
					return sc.SeccompProfile != nil && sc.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault
				}},
			} {
				if sc == nil || !tc.ok() {
					t.Errorf("%s, container %s: rule broken: %s", kind, c.Name, tc.rule)
				}
			}
		}
	}
}

// Every place a container writes is a volume, since the root filesystem is read-only.
func TestWritablePathsAreVolumes(t *testing.T) {
	specsByKind := podsUnderTest()
	for _, tc := range []struct {
		rule      string
		kind      string
		container string
		path      string
		emptyDir  bool
	}{
		{"the bootstrap init container writes the manager into an emptyDir", "instance Pod", BootstrapContainerName, ControllerDir, true},
		{"mysqld's socket, pid file and my.cnf go to the controller emptyDir", "instance Pod", MySQLContainerName, ControllerDir, true},
		{"mysqld's tmpdir is an emptyDir", "instance Pod", MySQLContainerName, "/tmp", true},
		{"mysqld's default run directory (the X Plugin's socket) is an emptyDir", "instance Pod", MySQLContainerName, "/var/run/mysqld", true},
		{"the data volume is the PVC", "instance Pod", MySQLContainerName, DataVolumeDir, false},
		{"the backup Job's init container writes the manager into an emptyDir", "backup Job", BootstrapContainerName, ControllerDir, true},
		{"the backup's scratch is an emptyDir", "backup Job", BackupContainerName, BackupScratchDir, true},
		{"the backup's private mysqld has a tmpdir", "backup Job", BackupContainerName, "/tmp", true},
		{"the backup's private mysqld has its default run directory", "backup Job", BackupContainerName, "/var/run/mysqld", true},
	} {
		spec := specsByKind[tc.kind]
		volumes := map[string]corev1.VolumeSource{}
		for _, v := range spec.Volumes {
			volumes[v.Name] = v.VolumeSource
		}
		found := false
		for _, c := range append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...) {
			if c.Name != tc.container {
				continue
			}
			for _, m := range c.VolumeMounts {
				if m.MountPath == tc.path && !m.ReadOnly {
					v, ok := volumes[m.Name]
					found = ok && (v.EmptyDir != nil) == tc.emptyDir
				}
			}
		}
		if !found {
			t.Errorf("rule broken: %s", tc.rule)
		}
	}
}

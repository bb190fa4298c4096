package specs

import (
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	mysqlv1alpha1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

func TestBuildPod(t *testing.T) {
	c := testCluster()
	pod := BuildPod(c, 2, PodOptions{OperatorImage: "op:1", Role: mysqlv1alpha1.RoleReplica, Routable: true})
	mysql := pod.Spec.Containers[0]
	initC := pod.Spec.InitContainers[0]
	volumes := map[string]corev1.VolumeSource{}
	for _, v := range pod.Spec.Volumes {
		volumes[v.Name] = v.VolumeSource
	}
	mounts := map[string]string{}
	for _, m := range mysql.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	for _, tc := range []struct {
		rule string
		ok   bool
	}{
		{"the Pod is named <cluster>-<n>", pod.Name == "db-2" && pod.Namespace == "ns"},
		{"the Pod is owned by the Cluster", ownedByCluster(pod.ObjectMeta)},
		{"labels: cluster, instance, role, routable", reflect.DeepEqual(pod.Labels, map[string]string{
			mysqlv1alpha1.ClusterLabel: "db", mysqlv1alpha1.InstanceLabel: "db-2",
			mysqlv1alpha1.RoleLabel: "replica", mysqlv1alpha1.RoutableLabel: "true"})},
		{"one init container copies the manager from the operator image",
			len(pod.Spec.InitContainers) == 1 && initC.Image == "op:1" &&
				reflect.DeepEqual(initC.Command, []string{"/manager", "bootstrap", "/controller/manager"})},
		{"the init container writes into the shared emptyDir", len(initC.VolumeMounts) == 1 &&
			initC.VolumeMounts[0].Name == controllerVolume && initC.VolumeMounts[0].MountPath == "/controller" &&
			volumes[controllerVolume].EmptyDir != nil},
		{"the MySQL container runs the copied manager", mysql.Image == "percona/percona-server:8.4" &&
			reflect.DeepEqual(mysql.Command, []string{"/controller/manager", "instance", "run",
				"--data-volume=/var/lib/mysql", "--data-dir=/var/lib/mysql/data", "--grace-period=165s"}) &&
			mounts[controllerVolume] == "/controller"},
		{"the Pod's grace period is stopDelay (180 s by default), mysqld gets all but 15 s of it",
			*pod.Spec.TerminationGracePeriodSeconds == 180 && slices.Contains(mysql.Command, "--grace-period=165s")},
		{"resources come from the spec", mysql.Resources.Requests.Cpu().Equal(resource.MustParse("500m"))},
		{"the data PVC is mounted", volumes[dataVolume].PersistentVolumeClaim != nil &&
			volumes[dataVolume].PersistentVolumeClaim.ClaimName == "db-2" && mounts[dataVolume] == "/var/lib/mysql"},
		{"the data directory is a subdirectory of the volume (its root may hold lost+found)",
			DataDir == "/var/lib/mysql/data"},
		{"the server certificate is mounted", volumes[serverTLSVolume].Secret != nil &&
			volumes[serverTLSVolume].Secret.SecretName == "db-2-server-tls" && mounts[serverTLSVolume] == ServerTLSDir},
		{"the replication client certificate is mounted", volumes[replicationTLSVolume].Secret != nil &&
			volumes[replicationTLSVolume].Secret.SecretName == "db-replication-client-tls"},
		{"mysql, manager, probe, administrative and metrics ports", len(mysql.Ports) == 5 && mysql.Ports[0].ContainerPort == 3306 &&
			mysql.Ports[1].ContainerPort == ManagerPort && mysql.Ports[2].ContainerPort == ProbePort && mysql.Ports[3].ContainerPort == AdminPort &&
			mysql.Ports[4].ContainerPort == MetricsPort && mysql.Ports[4].Name == "metrics"},
		{"the metrics token is mounted from the Cluster's metrics Secret, optional, the token only",
			volumes[metricsAuthVolume].Secret != nil && volumes[metricsAuthVolume].Secret.SecretName == "db-metrics" &&
				*volumes[metricsAuthVolume].Secret.Optional && len(volumes[metricsAuthVolume].Secret.Items) == 1 &&
				volumes[metricsAuthVolume].Secret.Items[0].Key == MetricsTokenKey && mounts[metricsAuthVolume] == MetricsAuthDir},
		{"the instance manager learns the Pod IP, its administrative interface's address",
			slices.ContainsFunc(mysql.Env, func(e corev1.EnvVar) bool {
				return e.Name == "POD_IP" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "status.podIP"
			})},
		{"startup probe on the instance manager's probe port", probeOn(mysql.StartupProbe, StartupPath)},
		{"readiness probe on the instance manager's probe port", probeOn(mysql.ReadinessProbe, ReadinessPath)},
		{"liveness probe on the instance manager's probe port", probeOn(mysql.LivenessProbe, LivenessPath)},
		{"the Pod runs as its own ServiceAccount", pod.Spec.ServiceAccountName == pod.Name},
		{"the manager knows its Pod's UID (the primary Lease names it)", slices.ContainsFunc(mysql.Env, func(e corev1.EnvVar) bool {
			return e.Name == "POD_UID" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.uid"
		})},
		{"hostname and subdomain give the Pod a DNS name under its headless Service",
			pod.Spec.Hostname == "db-2" && pod.Spec.Subdomain == "db-2"},
		{"anti-affinity on hostname is preferred, not required", pod.Spec.Affinity.PodAntiAffinity != nil &&
			pod.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil &&
			pod.Spec.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm.TopologyKey == corev1.LabelHostname &&
			reflect.DeepEqual(pod.Spec.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm.LabelSelector.MatchLabels,
				map[string]string{mysqlv1alpha1.ClusterLabel: "db"})},
	} {
		if !tc.ok {
			t.Errorf("rule broken: %s", tc.rule)
		}
	}
}

func TestPodSpecHash(t *testing.T) {
	c := testCluster()
	base := BuildPod(c, 1, PodOptions{OperatorImage: "op:1"}).Annotations[PodSpecHashAnnotation]
	changed := func(f func(*mysqlv1alpha1.Cluster), image string) string {
		cc := testCluster()
		if f != nil {
			f(cc)
		}
		return BuildPod(cc, 1, PodOptions{OperatorImage: image, Role: "primary", Routable: true}).Annotations[PodSpecHashAnnotation]
	}
	for _, tc := range []struct {
		rule string
		ok   bool
	}{
		{"the hash is recorded", len(base) == 16},
		{"labels do not change the hash", changed(nil, "op:1") == base},
		{"a new image changes it", changed(func(c *mysqlv1alpha1.Cluster) { c.Spec.ImageName = "mysql:9" }, "op:1") != base},
		{"new CPU and memory of the same QoS class leave it: they are resized in place", changed(func(c *mysqlv1alpha1.Cluster) {
			c.Spec.Resources.Requests[corev1.ResourceCPU] = resource.MustParse("2")
			c.Spec.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}
		}, "op:1") == base},
		{"resources that change the QoS class change it (no resize may)", changed(func(c *mysqlv1alpha1.Cluster) {
			c.Spec.Resources = mysqlv1alpha1.ResourceRequirements{}
		}, "op:1") != base},
		{"other resources (ephemeral storage) change it", changed(func(c *mysqlv1alpha1.Cluster) {
			c.Spec.Resources.Limits = corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("1Gi")}
		}, "op:1") != base},
		{"a new operator image leaves it: the instance manager is updated in place", changed(nil, "op:2") == base},
	} {
		if !tc.ok {
			t.Errorf("rule broken: %s", tc.rule)
		}
	}
}

func probeOn(p *corev1.Probe, path string) bool {
	return p != nil && p.HTTPGet != nil && p.HTTPGet.Path == path &&
		p.HTTPGet.Port.StrVal == ProbePortName && p.HTTPGet.Scheme == corev1.URISchemeHTTP
}

func TestBuildPodLabelsFollowOptions(t *testing.T) {
	for _, tc := range []struct {
		rule     string
		opts     PodOptions
		role     string
		routable bool
	}{
		{"an instance with no established role has no role label", PodOptions{}, "", false},
		{"a primary", PodOptions{Role: mysqlv1alpha1.RolePrimary, Routable: true}, "primary", true},
		{"a fenced replica is not routable", PodOptions{Role: mysqlv1alpha1.RoleReplica}, "replica", false},
	} {
		l := BuildPod(testCluster(), 1, tc.opts).Labels
		role, hasRole := l[mysqlv1alpha1.RoleLabel]
		_, routable := l[mysqlv1alpha1.RoutableLabel]
		if role != tc.role || hasRole != (tc.role != "") || routable != tc.routable {
			t.Errorf("%s: labels %v", tc.rule, l)
		}
	}
}

func TestBuildPVC(t *testing.T) {
	c := testCluster()
	class := "fast"
	c.Spec.Storage.StorageClass = &class
	pvc := BuildPVC(c, 4)
	for _, tc := range []struct {
		rule string
		ok   bool
	}{
		{"the PVC is named like its instance", pvc.Name == "db-4"},
		{"the PVC is owned by the Cluster", ownedByCluster(pvc.ObjectMeta)},
		{"cluster and instance labels, no role", pvc.Labels[mysqlv1alpha1.InstanceLabel] == "db-4" &&
			pvc.Labels[mysqlv1alpha1.ClusterLabel] == "db" && pvc.Labels[mysqlv1alpha1.RoleLabel] == ""},
		{"size from the spec", pvc.Spec.Resources.Requests.Storage().Equal(resource.MustParse("1Gi"))},
		{"storage class from the spec", *pvc.Spec.StorageClassName == "fast"},
		{"read-write-once", reflect.DeepEqual(pvc.Spec.AccessModes, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce})},
	} {
		if !tc.ok {
			t.Errorf("rule broken: %s", tc.rule)
		}
	}
}

func TestBuildPDB(t *testing.T) {
	pdb := BuildPDB(testCluster())
	if pdb.Name != "db" || !ownedByCluster(pdb.ObjectMeta) || pdb.Spec.MaxUnavailable.IntValue() != 1 ||
		!reflect.DeepEqual(pdb.Spec.Selector.MatchLabels, map[string]string{mysqlv1alpha1.ClusterLabel: "db"}) {
		t.Errorf("at most one instance of the Cluster may be evicted at a time: %+v", pdb)
	}
}

func TestInstanceRoleAndRoutable(t *testing.T) {
	for _, tc := range []struct {
		rule                      string
		current, target, instance string
		fenced, diverged          []string
		wantRole                  string
		wantRoutable              bool
	}{
		{"the current primary is labelled primary", "db-1", "db-1", "db-1", nil, nil, "primary", true},
		{"other instances are replicas", "db-1", "db-1", "db-2", nil, nil, "replica", true},
		{"a target still promoting stays a replica (it leaves ro when rw moves to it)", "db-1", "db-2", "db-2", nil, nil, "replica", true},
		{"the old primary stays primary until the new one reports", "db-1", "db-2", "db-1", nil, nil, "primary", true},
		{"on creation the first instance waits for its promotion", "", "db-1", "db-1", nil, nil, "", true},
		{"a fenced instance is not routable", "db-1", "db-1", "db-2", []string{"db-2"}, nil, "replica", false},
		{"a fenced primary is not routable", "db-1", "db-1", "db-1", []string{"db-1"}, nil, "primary", false},
		{"a diverged instance is not routable", "db-1", "db-1", "db-3", nil, []string{"db-3"}, "replica", false},
	} {
		c := testCluster()
		c.Status.CurrentPrimary, c.Status.TargetPrimary = tc.current, tc.target
		c.Status.FencedInstances, c.Status.DivergedInstances = tc.fenced, tc.diverged
		if got := InstanceRole(c, tc.instance); got != tc.wantRole {
			t.Errorf("%s: role %q, want %q", tc.rule, got, tc.wantRole)
		}
		if got := InstanceRoutable(c, tc.instance); got != tc.wantRoutable {
			t.Errorf("%s: routable %v, want %v", tc.rule, got, tc.wantRoutable)
		}
	}
}

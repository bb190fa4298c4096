package specs

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	mysqlv1alpha1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// Ports and paths shared by the operator, the instance manager and the Pods.
const (
	// MySQLPort is mysqld's port; every Service exposes it as "mysql".
	MySQLPort = 3306
	// MySQLPortName names MySQLPort on containers and Services.
	MySQLPortName = "mysql"
	// ManagerPort is the instance manager's control API: HTTPS requiring a client certificate
	// signed by the cluster CA.
	ManagerPort = 8000
	// ManagerPortName names ManagerPort.
	ManagerPortName = "manager"
	// ProbePort is the instance manager's plain-HTTP probe port: the kubelet has no client
	// certificate, and the control API's TLS handshake refuses callers without one.
	ProbePort = 8001
	// ProbePortName names ProbePort.
	ProbePortName = "probes"
	// MetricsPort is the instance manager's /metrics: HTTPS, for scrapers holding the Cluster's
	// metrics token (MetricsSecretName) or a client certificate of its CA.
	MetricsPort = 9104
	// MetricsPortName names MetricsPort (a PodMonitor's port).
	MetricsPortName = "metrics"
	// AdminPort is mysqld's administrative interface (admin_address is the Pod IP): only accounts
	// with SERVICE_CONNECTION_ADMIN log in there, and max_connections does not limit it, so the
	// operator can fence a server whose ordinary connection slots are all taken.
	AdminPort = 33062
	// AdminPortName names AdminPort.
	AdminPortName = "mysql-admin"

	// ControllerDir is the emptyDir the init container copies the manager binary into.
	ControllerDir = "/controller"
	// ManagerPath is the manager binary inside the MySQL container.
	ManagerPath = ControllerDir + "/manager"
	// DataVolumeDir is where the instance's PVC is mounted.
	DataVolumeDir = "/var/lib/mysql"
	// DataDir is mysqld's data directory: a subdirectory of the volume, whose root may hold
	// lost+found (mysqld --initialize wants an empty directory). The instance manager moves a
	// data directory found at the volume's root (earlier versions) into it.
	DataDir = DataVolumeDir + "/data"
	// ServerTLSDir holds tls.crt, tls.key and ca.crt of the instance's server certificate.
	ServerTLSDir = "/etc/mysql-tls/server"
	// ReplicationTLSDir holds the replication user's client certificate.
	ReplicationTLSDir = "/etc/mysql-tls/replication"
	// MetricsAuthDir holds the token of the Cluster's metrics Secret (MetricsTokenPath).
	MetricsAuthDir = "/etc/cnm-metrics"
	// MetricsTokenPath is the file the instance manager reads the scrapers' token from.
	MetricsTokenPath = MetricsAuthDir + "/token"

	// Probe paths served by the instance manager on ManagerPort.
	StartupPath   = "/startupz"
	ReadinessPath = "/readyz"
	LivenessPath  = "/healthz"

	// Container and volume names.
	BootstrapContainerName = "bootstrap"
	MySQLContainerName     = "mysql"
	dataVolume             = "data"
	controllerVolume       = "controller"
	serverTLSVolume        = "server-tls"
	replicationTLSVolume   = "replication-tls"
	metricsAuthVolume      = "metrics-auth"
)

// PodOptions are the inputs of an instance Pod that do not come from the Cluster spec.
type PodOptions struct {
	// OperatorImage runs the bootstrap init container that copies the manager binary.
	OperatorImage string
	// Role is the role label (primary, replica, or empty while not established).
	Role string
	// Routable sets the routable label.
	Routable bool
}

// BuildPod returns the Pod of instance serial of c. The init container copies the manager binary
// into a shared emptyDir so any MySQL image works; the MySQL container runs it as PID 1.
func BuildPod(c *mysqlv1alpha1.Cluster, serial int32, opts PodOptions) *corev1.Pod {
	name := InstanceName(c.Name, serial)
	meta := objectMeta(c, name)
	meta.Labels = InstanceLabels(c.Name, name, opts.Role, opts.Routable)
	pod := &corev1.Pod{
		ObjectMeta: meta,
		Spec: corev1.PodSpec{
			Hostname:           name,
			ServiceAccountName: InstanceServiceAccountName(name),
			Subdomain:          name,
			SecurityContext:    podSecurityContext(),
			InitContainers:     []corev1.Container{bootstrapContainer(opts.OperatorImage)},
			Containers:         []corev1.Container{mysqlContainer(c, name)},
			Volumes:            instanceVolumes(c.Name, name),
		},
	}
	applyScheduling(&pod.Spec, c)
	grace, _ := stopBudget(c)
	pod.Spec.TerminationGracePeriodSeconds = &grace
	pod.Annotations = map[string]string{PodSpecHashAnnotation: podHash(&pod.Spec, c.Spec.PodMetadata),
		ResourcesAnnotation: ResizableKey(c.Spec.Resources.Container())}
	applyPodMetadata(&pod.ObjectMeta, c)
	return pod
}

// PodSpecHashAnnotation records the hash of the spec a Pod was built with; a Pod whose hash
// differs from what BuildPod returns now runs an outdated spec (image, resources, scheduling).
// The operator's image is left out (withoutOperatorImage): a new operator updates the instance
// managers in place, without restarting mysqld.
const PodSpecHashAnnotation = "mysql.cloudnative-mysql.io/pod-spec-hash"

// podHash is the hash a Pod is built with: of the part of its spec a change of needs a new Pod
// (hashedSpec), its QoS class (left out with the CPU and memory, which are resized in place, while
// no resize may change it), and c's podMetadata, so that a change of any rolls the Cluster (a
// Pod's labels and annotations are then the Cluster's as they were when it was created, never a
// partial patch).
func podHash(spec *corev1.PodSpec, pm *mysqlv1alpha1.PodMetadata) string {
	if pm != nil && len(pm.Labels) == 0 && len(pm.Annotations) == 0 {
		pm = nil
	}
	data, _ := json.Marshal(struct { // a built spec always marshals
		Spec     *corev1.PodSpec            `json:"spec"`
		QoS      corev1.PodQOSClass         `json:"qos"`
		Metadata *mysqlv1alpha1.PodMetadata `json:"metadata,omitempty"`
	}{hashedSpec(spec), PodQOSClass(spec), pm})
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

// hashedSpec is the part of a Pod's spec that a change of needs a new Pod: neither the operator's
// image (withoutOperatorImage) nor the MySQL container's CPU and memory (ResizableResources).
func hashedSpec(spec *corev1.PodSpec) *corev1.PodSpec {
	out := withoutOperatorImage(spec)
	out.Containers = append([]corev1.Container(nil), out.Containers...)
	for i := range out.Containers {
		if out.Containers[i].Name == MySQLContainerName {
			out.Containers[i].Resources = withoutResizable(out.Containers[i].Resources)
		}
	}
	return out
}

// withoutOperatorImage is spec with the operator's image (the bootstrap init container's) left
// out: the only thing that image gives a Pod is the instance manager's binary, which a new
// operator replaces in place (controller/cluster manager_update.go); an instance that cannot
// take it in place has its Pod replaced.
func withoutOperatorImage(spec *corev1.PodSpec) *corev1.PodSpec {
	out := *spec
	out.InitContainers = append([]corev1.Container(nil), spec.InitContainers...)
	for i := range out.InitContainers {
		if out.InitContainers[i].Name == BootstrapContainerName {
			out.InitContainers[i].Image = ""
		}
	}
	return &out
}

func bootstrapContainer(image string) corev1.Container {
	return corev1.Container{
		Name:            BootstrapContainerName,
		Image:           image,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Command:         []string{"/manager", "bootstrap", ManagerPath},
		VolumeMounts:    []corev1.VolumeMount{{Name: controllerVolume, MountPath: ControllerDir}},
		SecurityContext: containerSecurityContext(),
	}
}

func mysqlContainer(c *mysqlv1alpha1.Cluster, instance string) corev1.Container {
	_, scratchMounts := mysqldScratchVolumes()
	ctr := corev1.Container{
		Name:            MySQLContainerName,
		Image:           c.Spec.ImageName,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Command:         instanceCommand(c),
		Env: []corev1.EnvVar{
			{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
			{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
			{Name: "POD_UID", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.uid"}}},
			{Name: "NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
			{Name: "CLUSTER_NAME", Value: c.Name},
		},
		Ports: []corev1.ContainerPort{
			{Name: MySQLPortName, ContainerPort: MySQLPort, Protocol: corev1.ProtocolTCP},
			{Name: ManagerPortName, ContainerPort: ManagerPort, Protocol: corev1.ProtocolTCP},
			{Name: ProbePortName, ContainerPort: ProbePort, Protocol: corev1.ProtocolTCP},
			{Name: AdminPortName, ContainerPort: AdminPort, Protocol: corev1.ProtocolTCP},
			{Name: MetricsPortName, ContainerPort: MetricsPort, Protocol: corev1.ProtocolTCP},
		},
		Resources:      c.Spec.Resources.Container(),
		ResizePolicy:   mysqlResizePolicy(),
		StartupProbe:   managerProbe(StartupPath, 10, 360),
		ReadinessProbe: managerProbe(ReadinessPath, 5, 3),
		LivenessProbe:  managerProbe(LivenessPath, 10, 3),
		VolumeMounts: append([]corev1.VolumeMount{
			{Name: dataVolume, MountPath: DataVolumeDir},
			{Name: controllerVolume, MountPath: ControllerDir},
			{Name: serverTLSVolume, MountPath: ServerTLSDir, ReadOnly: true},
			{Name: replicationTLSVolume, MountPath: ReplicationTLSDir, ReadOnly: true},
			{Name: metricsAuthVolume, MountPath: MetricsAuthDir, ReadOnly: true},
		}, scratchMounts...),
		SecurityContext: containerSecurityContext(),
	}
	if at := c.Annotations[mysqlv1alpha1.RestartedAtAnnotation]; at != "" {
		// In the spec, so in its hash: a new value restarts every instance in the rolling
		// update's order (kubectl cnmysql restart).
		ctr.Env = append(ctr.Env, corev1.EnvVar{Name: "RESTARTED_AT", Value: at})
	}
	return ctr
}

// instanceCommand runs the instance manager, giving mysqld its part of the shutdown budget.
func instanceCommand(c *mysqlv1alpha1.Cluster) []string {
	_, mysqld := stopBudget(c)
	return []string{ManagerPath, "instance", "run", "--data-volume=" + DataVolumeDir, "--data-dir=" + DataDir,
		"--grace-period=" + strconv.FormatInt(mysqld, 10) + "s"}
}

// managerProbe is an HTTP probe on the instance manager's probe port.
func managerProbe(path string, period, failures int32) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Path: path, Port: intstr.FromString(ProbePortName), Scheme: corev1.URISchemeHTTP,
		}},
		PeriodSeconds:    period,
		FailureThreshold: failures,
		TimeoutSeconds:   5,
	}
}

func instanceVolumes(cluster, instance string) []corev1.Volume {
	scratch, _ := mysqldScratchVolumes()
	return append([]corev1.Volume{
		{Name: dataVolume, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: instance}}},
		{Name: controllerVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: serverTLSVolume, VolumeSource: corev1.VolumeSource{
			Secret: &corev1.SecretVolumeSource{SecretName: ServerCertSecretName(instance)}}},
		{Name: replicationTLSVolume, VolumeSource: corev1.VolumeSource{
			Secret: &corev1.SecretVolumeSource{SecretName: ReplicationClientSecretName(cluster)}}},
		// Optional: an instance starts (and serves no scraper) before the operator made the Secret.
		{Name: metricsAuthVolume, VolumeSource: corev1.VolumeSource{
			Secret: &corev1.SecretVolumeSource{SecretName: MetricsSecretName(cluster), Optional: ptr.To(true),
				Items: []corev1.KeyToPath{{Key: MetricsTokenKey, Path: "token"}}}}},
	}, scratch...)
}

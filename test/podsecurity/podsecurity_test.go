package podsecurity

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
)

// restrictedNamespace creates a namespace whose Pods must satisfy the "restricted" profile.
func restrictedNamespace(t *testing.T, env *kubetest.Env) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "restricted-", Labels: map[string]string{
		"pod-security.kubernetes.io/enforce":         "restricted",
		"pod-security.kubernetes.io/enforce-version": "latest",
	}}}
	check.Must(t, env.Client.Create(t.Context(), ns))
	t.Cleanup(func() { _ = env.Client.Delete(t.Context(), ns) })
	return ns.Name
}

// podOf is a Pod with the spec of a workload's template, as its controller would create it.
func podOf(ns, name string, spec corev1.PodSpec) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: spec}
}

// operatorDeployment reads the operator's Deployment from config/manager.
func operatorDeployment(t *testing.T) *appsv1.Deployment {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(kubetest.RepoRoot(), "config", "manager", "manager.yaml"))
	check.Must(t, err)
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var d appsv1.Deployment
		err := dec.Decode(&d)
		if errors.Is(err, io.EOF) {
			break
		}
		check.Must(t, err)
		if d.Kind == "Deployment" {
			return &d
		}
	}
	t.Fatal("config/manager/manager.yaml has no Deployment")
	return nil
}

func TestRestrictedNamespaceAdmitsTheGeneratedPods(t *testing.T) {
	env := kubetest.StartT(t, kubetest.Options{})
	ns := restrictedNamespace(t, env)
	refusesBarePods(t, env, ns)

	cluster := &v1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns, UID: "cluster-uid"},
		Spec: v1.ClusterSpec{Instances: 1, ImageName: "cloudnative-mysql/mysql:9.7",
			Storage: v1.StorageConfiguration{Size: resource.MustParse("1Gi")},
			Backup: &v1.BackupConfiguration{ObjectStore: &v1.ObjectStoreConfiguration{
				Bucket: "b", Endpoint: "https://s3.example",
				Credentials: v1.S3Credentials{
					AccessKeyID:     v1.SecretKeySelector{Name: "s3", Key: "id"},
					SecretAccessKey: v1.SecretKeySelector{Name: "s3", Key: "secret"},
				},
			}}},
	}
	backup := &v1.Backup{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: ns, UID: "backup-uid"},
		Spec: v1.BackupSpec{Cluster: v1.LocalObjectReference{Name: "db"},
			Timeout: &metav1.Duration{Duration: time.Hour}},
	}
	job := specs.BuildBackupJob(backup, cluster, specs.BackupJobParams{OperatorImage: "cloudnative-mysql/operator:dev",
		BackupID: "20260101T000000Z", Instance: "db-1"})
	deployment := operatorDeployment(t)
	// The ServiceAccount admission plugin wants the Pods' accounts to exist.
	for _, sa := range []string{specs.InstanceServiceAccountName(specs.InstanceName(cluster.Name, 1)), deployment.Spec.Template.Spec.ServiceAccountName} {
		check.Must(t, env.Client.Create(t.Context(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sa}}))
	}

	for _, tc := range []struct {
		what string
		pod  *corev1.Pod
	}{
		{"an instance Pod", specs.BuildPod(cluster, 1, specs.PodOptions{OperatorImage: "cloudnative-mysql/operator:dev"})},
		{"a backup Job's Pod", podOf(ns, "nightly-pod", job.Spec.Template.Spec)},
		{"the operator's Pod (config/manager)", podOf(ns, "operator-pod", deployment.Spec.Template.Spec)},
	} {
		if err := env.Client.Create(t.Context(), tc.pod); err != nil {
			t.Errorf("%s is refused in a restricted namespace: %v", tc.what, err)
		}
	}

	// The workload objects themselves (Pod Security only warns on them) are stored as built.
	check.Must(t, env.Client.Create(t.Context(), job))
	deployment.Namespace = ns
	check.Must(t, env.Client.Create(t.Context(), deployment))
	var stored batchv1.Job
	check.Must(t, env.Client.Get(t.Context(), client.ObjectKeyFromObject(job), &stored))
	if sc := stored.Spec.Template.Spec.SecurityContext; sc == nil || sc.RunAsUser == nil || *sc.RunAsUser != specs.MySQLUID {
		t.Errorf("the stored backup Job does not run as uid %d: %+v", specs.MySQLUID, sc)
	}
}

// refusesBarePods checks that the namespace really enforces the profile: a Pod as the operator
// built them before (no security context) is refused, with the reasons.
func refusesBarePods(t *testing.T, env *kubetest.Env, ns string) {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bare"}, Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "mysql", Image: "cloudnative-mysql/mysql:9.7"}}}}
	err := env.Client.Create(t.Context(), pod)
	if !apierrors.IsForbidden(err) {
		t.Fatalf("a Pod without security context: %v, want Forbidden by Pod Security admission", err)
	}
	for _, reason := range []string{"allowPrivilegeEscalation != false", "unrestricted capabilities", "runAsNonRoot != true", "seccompProfile"} {
		if !strings.Contains(err.Error(), reason) {
			t.Errorf("the refusal does not mention %q: %v", reason, err)
		}
	}
}

package operator_test

import (
	"bytes"
	"path/filepath"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
)

// selects reports whether sel selects a Pod labelled l.
func selects(t *testing.T, sel *metav1.LabelSelector, l map[string]string) bool {
	t.Helper()
	s, err := metav1.LabelSelectorAsSelector(sel)
	check.Must(t, err)
	return s.Matches(labels.Set(l))
}

// allows lists the ports rule opens.
func allows(rule networkingv1.NetworkPolicyIngressRule) []int {
	var out []int
	for _, p := range rule.Ports {
		out = append(out, p.Port.IntValue())
	}
	slices.Sort(out)
	return out
}

// TestNetworkPolicySample: config/samples/networkpolicy.yaml is accepted by the API server and
// still matches what the operator builds: it selects the instance Pods of cluster-sample, lets
// their peers and backup Jobs reach the mysql and control API ports, the operator's Pods (as
// config/manager deploys them) the control API and mysqld's administrative port (the fence),
// and clients the mysql port only. The API server accepts the operator's egress policy too.
func TestNetworkPolicySample(t *testing.T) {
	env := kubetest.StartT(t, kubetest.Options{})
	var policies []networkingv1.NetworkPolicy
	for _, doc := range bytes.Split(readFile(t, filepath.Join("..", "..", "config", "samples", "networkpolicy.yaml")), []byte("\n---")) {
		var p networkingv1.NetworkPolicy
		check.Must(t, yaml.UnmarshalStrict(doc, &p))
		policies = append(policies, p)
	}
	check.Must(t, env.Client.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNamespace}}))
	ns := env.NewNamespace(t)
	for i := range policies {
		p := policies[i].DeepCopy()
		if p.Namespace == "" {
			p.Namespace = ns
		}
		check.Must(t, env.Client.Create(t.Context(), p))
	}
	if len(policies) != 3 {
		t.Fatalf("want the instances' policy and the operator's ingress and egress policies, got %d", len(policies))
	}
	instances, op := policies[0], policies[1] // the egress policy: TestOperatorEgressPolicy

	c := &v1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster-sample", Namespace: ns},
		Spec: v1.ClusterSpec{Backup: &v1.BackupConfiguration{ObjectStore: &v1.ObjectStoreConfiguration{}}}}
	pod := specs.BuildPod(c, 1, specs.PodOptions{OperatorImage: "op", Routable: true})
	backup := specs.BuildBackupJob(&v1.Backup{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: ns}}, c, specs.BackupJobParams{})
	var deployment appsv1.Deployment
	for _, doc := range bytes.Split(readFile(t, filepath.Join("..", "..", "config", "manager", "manager.yaml")), []byte("\n---")) {
		if bytes.Contains(doc, []byte("kind: Deployment")) {
			check.Must(t, yaml.Unmarshal(doc, &deployment))
		}
	}
	operatorPod := deployment.Spec.Template.Labels
	operatorNS := map[string]string{"kubernetes.io/metadata.name": operatorNamespace}
	client := map[string]string{"app.kubernetes.io/part-of": "my-application"}

	if !selects(t, &instances.Spec.PodSelector, pod.Labels) || selects(t, &instances.Spec.PodSelector, backup.Spec.Template.Labels) {
		t.Error("the instances' policy selects the instance Pods and nothing else of the Cluster")
	}
	mysql, control := []int{specs.MySQLPort}, []int{specs.MySQLPort, specs.ManagerPort}
	for _, tc := range []struct {
		rule      string
		pod, ns   map[string]string
		wantPorts []int
	}{
		{"a peer instance reaches mysql and the control API", pod.Labels, nil, control},
		{"a backup Job reaches mysql", backup.Spec.Template.Labels, nil, control},
		{"the operator reaches the control API and the administrative port", operatorPod, operatorNS,
			[]int{specs.ManagerPort, specs.AdminPort}},
		{"a client reaches mysql only", client, nil, mysql},
		{"another Pod of the namespace reaches nothing", map[string]string{"app": "other"}, nil, nil},
	} {
		var got []int
		for _, r := range instances.Spec.Ingress {
			for _, from := range r.From {
				sameNS := from.NamespaceSelector == nil && tc.ns == nil
				otherNS := from.NamespaceSelector != nil && tc.ns != nil && selects(t, from.NamespaceSelector, tc.ns)
				if (sameNS || otherNS) && from.PodSelector != nil && selects(t, from.PodSelector, tc.pod) {
					got = append(got, allows(r)...)
				}
			}
		}
		slices.Sort(got)
		if !slices.Equal(slices.Compact(got), tc.wantPorts) {
			t.Errorf("%s: ports %v, want %v", tc.rule, got, tc.wantPorts)
		}
	}
	if !selects(t, &op.Spec.PodSelector, operatorPod) || op.Namespace != operatorNamespace {
		t.Error("the operator's policy selects the operator's Pods in its namespace")
	}
	metricsPort := intstr.FromInt32(deployment.Spec.Template.Spec.Containers[0].Ports[0].ContainerPort)
	if len(op.Spec.Ingress) != 1 || allows(op.Spec.Ingress[0])[0] != metricsPort.IntValue() {
		t.Errorf("the operator's policy opens its metrics port %v only: %+v", metricsPort.IntValue(), op.Spec.Ingress)
	}
}

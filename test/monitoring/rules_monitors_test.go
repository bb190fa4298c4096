package monitoring

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// The names the metrics contract fixes.
const (
	clusterLabel   = "mysql.cloudnative-mysql.io/cluster"
	clusterMetaKey = "__meta_kubernetes_pod_label_mysql_cloudnative_mysql_io_cluster"
	operatorJob    = "cloudnative-mysql-operator"
	metricsReader  = "cloudnative-mysql-metrics-reader"
	sampleCluster  = "cluster-sample"
)

var documentSeparator = regexp.MustCompile(`(?m)^---[ \t]*$`)

// documents splits a YAML stream into its non-empty documents.
func documents(t *testing.T, path string) [][]byte {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, d := range documentSeparator.Split(string(src), -1) {
		if strings.TrimSpace(regexp.MustCompile(`(?m)^#.*$`).ReplaceAllString(d, "")) != "" {
			out = append(out, []byte(d))
		}
	}
	return out
}

func decodeStrictFile(t *testing.T, path string, into any) {
	t.Helper()
	docs := documents(t, path)
	if len(docs) != 1 {
		t.Fatalf("%s: %d documents, want 1", path, len(docs))
	}
	if err := yaml.UnmarshalStrict(docs[0], into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// decodeStrict decodes one object with the Go type of its kind, rejecting unknown fields.
func decodeStrict(doc []byte) (any, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return nil, err
	}
	var obj any
	switch tm.APIVersion + " " + tm.Kind {
	case "monitoring.coreos.com/v1 PodMonitor":
		obj = &monitoringv1.PodMonitor{}
	case "monitoring.coreos.com/v1 PrometheusRule":
		obj = &monitoringv1.PrometheusRule{}
	case "v1 ServiceAccount":
		obj = &corev1.ServiceAccount{}
	case "v1 Secret":
		obj = &corev1.Secret{}
	case "rbac.authorization.k8s.io/v1 ClusterRoleBinding":
		obj = &rbacv1.ClusterRoleBinding{}
	default:
		return nil, fmt.Errorf("no Go type for %s %s", tm.APIVersion, tm.Kind)
	}
	if err := yaml.UnmarshalStrict(doc, obj); err != nil {
		return nil, fmt.Errorf("%s: %w", tm.Kind, err)
	}
	return obj, nil
}

// monitoringObjects decodes every object of config/monitoring and dist/monitoring.yaml.
func monitoringObjects(t *testing.T) map[string][]any {
	t.Helper()
	files := []string{filepath.Join("..", "..", "dist", "monitoring.yaml")}
	for _, f := range []string{"prometheusrule.yaml", "operator-scraper.yaml", "operator-podmonitor.yaml", "cluster-podmonitor.yaml"} {
		files = append(files, filepath.Join(monitoringDir, f))
	}
	out := map[string][]any{}
	for _, f := range files {
		for i, d := range documents(t, f) {
			obj, err := decodeStrict(d)
			if err != nil {
				t.Fatalf("%s, document %d: %v", f, i+1, err)
			}
			out[filepath.Base(f)] = append(out[filepath.Base(f)], obj)
		}
	}
	return out
}

func TestMonitoringObjectsDecodeStrictly(t *testing.T) {
	objs := monitoringObjects(t)
	kinds := map[string]int{}
	for _, o := range objs["monitoring.yaml"] {
		kinds[fmt.Sprintf("%T", o)]++
	}
	for _, k := range []string{"*v1.PodMonitor", "*v1.PrometheusRule", "*v1.ServiceAccount", "*v1.Secret", "*v1.ClusterRoleBinding"} {
		if kinds[k] != 1 {
			t.Errorf("dist/monitoring.yaml holds %d %s, want 1 (%v)", kinds[k], k, kinds)
		}
	}
}

// TestStrictDecodingRejectsUnknownFields proves the decoding above can fail: a misspelt field of a
// PodMonitor, which a lenient decoder would drop (and prometheus-operator's CRD prune), is refused.
func TestStrictDecodingRejectsUnknownFields(t *testing.T) {
	doc := documents(t, filepath.Join(monitoringDir, "cluster-podmonitor.yaml"))[0]
	if _, err := decodeStrict(doc); err != nil {
		t.Fatalf("the sample itself: %v", err)
	}
	for name, from := range map[string]string{
		"in tlsConfig":        "serverName:",
		"in an endpoint":      "scheme:",
		"in a relabeling":     "targetLabel:",
		"in the spec":         "selector:",
		"in the credentials":  "key: token",
		"in the ca reference": "key: ca.crt",
	} {
		broken := strings.Replace(string(doc), from, "x"+from, 1)
		if broken == string(doc) {
			t.Fatalf("%s: %q not in the sample", name, from)
		}
		if _, err := decodeStrict([]byte(broken)); err == nil {
			t.Errorf("%s: a misspelt field was accepted", name)
		}
	}
}

func onlyPodMonitor(t *testing.T, objs []any) *monitoringv1.PodMonitor {
	t.Helper()
	if len(objs) != 1 {
		t.Fatalf("%d objects, want one PodMonitor", len(objs))
	}
	pm, ok := objs[0].(*monitoringv1.PodMonitor)
	if !ok || len(pm.Spec.PodMetricsEndpoints) != 1 {
		t.Fatalf("want a PodMonitor with one endpoint, got %T", objs[0])
	}
	return pm
}

func relabelTargets(rs []monitoringv1.RelabelConfig) map[string][]string {
	out := map[string][]string{}
	for _, r := range rs {
		var src []string
		for _, s := range r.SourceLabels {
			src = append(src, string(s))
		}
		if r.TargetLabel != "" {
			out[r.TargetLabel] = src
		}
	}
	return out
}

// TestClusterPodMonitorFollowsTheContract: HTTPS on the port named metrics, the bearer token and
// the CA from Secret <cluster>-metrics, server name <cluster>-r, targets labelled namespace, pod
// and cluster.
func TestClusterPodMonitorFollowsTheContract(t *testing.T) {
	pm := onlyPodMonitor(t, monitoringObjects(t)["cluster-podmonitor.yaml"])
	if got := pm.Spec.Selector.MatchLabels[clusterLabel]; got != sampleCluster {
		t.Errorf("selects %s=%q, want %q", clusterLabel, got, sampleCluster)
	}
	ep := pm.Spec.PodMetricsEndpoints[0]
	if ep.Port == nil || *ep.Port != "metrics" || ep.Scheme == nil || strings.ToLower(string(*ep.Scheme)) != "https" || ep.Path != "/metrics" {
		t.Errorf("endpoint %v %v %q, want port metrics, https, /metrics", ep.Port, ep.Scheme, ep.Path)
	}
	secret := sampleCluster + "-metrics"
	if a := ep.Authorization; a == nil || a.Credentials == nil || a.Credentials.Name != secret || a.Credentials.Key != "token" ||
		(a.Type != "" && a.Type != "Bearer") {
		t.Errorf("authorization %+v, want the bearer token of key token of Secret %s", a, secret)
	}
	tls := ep.TLSConfig
	if tls == nil || tls.CA.Secret == nil || tls.CA.Secret.Name != secret || tls.CA.Secret.Key != "ca.crt" {
		t.Fatalf("tlsConfig %+v, want the CA of key ca.crt of Secret %s", tls, secret)
	}
	if tls.ServerName == nil || *tls.ServerName != sampleCluster+"-r" {
		t.Errorf("serverName %v, want %s-r", tls.ServerName, sampleCluster)
	}
	if tls.InsecureSkipVerify != nil && *tls.InsecureSkipVerify {
		t.Error("the instances' certificates are verifiable: no insecureSkipVerify")
	}
	targets := relabelTargets(ep.RelabelConfigs)
	for label, src := range map[string]string{"namespace": "__meta_kubernetes_namespace", "pod": "__meta_kubernetes_pod_name", "cluster": clusterMetaKey} {
		if !slices.Equal(targets[label], []string{src}) {
			t.Errorf("label %s from %v, want from %s", label, targets[label], src)
		}
	}
}

// TestOperatorPodMonitorFollowsTheContract: HTTPS with the token of a ServiceAccount bound to the
// metrics-reader ClusterRole, the operator's own namespace and cluster labels kept, and the job the
// rules read controller-runtime's series under.
func TestOperatorPodMonitorFollowsTheContract(t *testing.T) {
	objs := monitoringObjects(t)
	pm := onlyPodMonitor(t, objs["operator-podmonitor.yaml"])
	ep := pm.Spec.PodMetricsEndpoints[0]
	if ep.Port == nil || *ep.Port != "metrics" || ep.Scheme == nil || strings.ToLower(string(*ep.Scheme)) != "https" {
		t.Errorf("endpoint %v %v, want port metrics over https", ep.Port, ep.Scheme)
	}
	if !ep.HonorLabels {
		t.Error("the operator's series carry namespace and cluster themselves: honorLabels must be true")
	}
	var job []string
	for _, r := range ep.RelabelConfigs {
		if r.TargetLabel == "job" && r.Replacement != nil {
			job = append(job, *r.Replacement)
		}
	}
	if !slices.Equal(job, []string{operatorJob}) {
		t.Errorf("job relabelled to %v, want %s (the rules read it)", job, operatorJob)
	}
	rules, err := os.ReadFile(rulesPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(rules), `job="`+operatorJob+`"`) {
		t.Errorf("rules.yaml does not read the job %s", operatorJob)
	}
	var sa *corev1.ServiceAccount
	var token *corev1.Secret
	var binding *rbacv1.ClusterRoleBinding
	for _, o := range objs["operator-scraper.yaml"] {
		switch o := o.(type) {
		case *corev1.ServiceAccount:
			sa = o
		case *corev1.Secret:
			token = o
		case *rbacv1.ClusterRoleBinding:
			binding = o
		}
	}
	if sa == nil || token == nil || binding == nil {
		t.Fatal("operator-scraper.yaml needs a ServiceAccount, its token Secret and a ClusterRoleBinding")
	}
	if token.Type != corev1.SecretTypeServiceAccountToken || token.Annotations[corev1.ServiceAccountNameKey] != sa.Name {
		t.Errorf("Secret %s is not a token of ServiceAccount %s", token.Name, sa.Name)
	}
	if a := ep.Authorization; a == nil || a.Credentials == nil || a.Credentials.Name != token.Name || a.Credentials.Key != corev1.ServiceAccountTokenKey {
		t.Errorf("authorization %+v, want key token of Secret %s", a, token.Name)
	}
	if binding.RoleRef.Kind != "ClusterRole" || binding.RoleRef.Name != metricsReader ||
		len(binding.Subjects) != 1 || binding.Subjects[0].Kind != "ServiceAccount" || binding.Subjects[0].Name != sa.Name {
		t.Errorf("binding %+v, want ClusterRole %s for ServiceAccount %s", binding, metricsReader, sa.Name)
	}
	reader, err := os.ReadFile(filepath.Join("..", "..", "config", "rbac", "metrics_reader_role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(reader), "name: "+metricsReader) {
		t.Errorf("config/rbac/metrics_reader_role.yaml does not define %s", metricsReader)
	}
}

// scrapeJob is the part of a Prometheus scrape configuration this package reads.
type scrapeJob struct {
	JobName       string `json:"job_name"`
	Scheme        string `json:"scheme"`
	HonorLabels   bool   `json:"honor_labels"`
	Authorization struct {
		CredentialsFile string `json:"credentials_file"`
	} `json:"authorization"`
	TLSConfig struct {
		CAFile     string `json:"ca_file"`
		ServerName string `json:"server_name"`
	} `json:"tls_config"`
	KubernetesSD []struct {
		Role      string `json:"role"`
		Selectors []struct {
			Label string `json:"label"`
		} `json:"selectors"`
	} `json:"kubernetes_sd_configs"`
	RelabelConfigs []struct {
		SourceLabels []string `json:"source_labels"`
		Regex        string   `json:"regex"`
		Action       string   `json:"action"`
		TargetLabel  string   `json:"target_label"`
	} `json:"relabel_configs"`
}

// TestScrapeExampleFollowsTheContract: the plain configuration scrapes what the PodMonitors do.
func TestScrapeExampleFollowsTheContract(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(monitoringDir, "prometheus-scrape.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		ScrapeConfigs []scrapeJob `json:"scrape_configs"`
	}
	if err := yaml.Unmarshal(src, &cfg); err != nil {
		t.Fatal(err)
	}
	jobs := map[string]scrapeJob{}
	for _, j := range cfg.ScrapeConfigs {
		jobs[j.JobName] = j
	}
	inst, ok := jobs["cloudnative-mysql/default/"+sampleCluster]
	if !ok {
		t.Fatalf("no job for the sample Cluster among %v", cfg.ScrapeConfigs)
	}
	secretDir := "/" + sampleCluster + "-metrics/"
	if inst.Scheme != "https" || !strings.HasSuffix(inst.Authorization.CredentialsFile, secretDir+"token") ||
		!strings.HasSuffix(inst.TLSConfig.CAFile, secretDir+"ca.crt") || inst.TLSConfig.ServerName != sampleCluster+"-r" {
		t.Errorf("instance job %+v does not use https, Secret %s-metrics and server name %s-r", inst, sampleCluster, sampleCluster)
	}
	if len(inst.KubernetesSD) != 1 || inst.KubernetesSD[0].Role != "pod" || len(inst.KubernetesSD[0].Selectors) != 1 ||
		inst.KubernetesSD[0].Selectors[0].Label != clusterLabel+"="+sampleCluster {
		t.Errorf("instance job discovers %+v, want the Pods labelled %s=%s", inst.KubernetesSD, clusterLabel, sampleCluster)
	}
	targets := map[string]string{}
	keepsMetricsPort := false
	for _, r := range inst.RelabelConfigs {
		if r.TargetLabel != "" && len(r.SourceLabels) == 1 {
			targets[r.TargetLabel] = r.SourceLabels[0]
		}
		if r.Action == "keep" && slices.Equal(r.SourceLabels, []string{"__meta_kubernetes_pod_container_port_name"}) && r.Regex == "metrics" {
			keepsMetricsPort = true
		}
	}
	if !keepsMetricsPort {
		t.Error("instance job does not keep only the container port named metrics")
	}
	for label, want := range map[string]string{"namespace": "__meta_kubernetes_namespace", "pod": "__meta_kubernetes_pod_name", "cluster": clusterMetaKey} {
		if targets[label] != want {
			t.Errorf("instance job sets %s from %q, want %s", label, targets[label], want)
		}
	}
	op, ok := jobs[operatorJob]
	if !ok {
		t.Fatalf("no job %s (the rules read controller-runtime's series under it)", operatorJob)
	}
	if op.Scheme != "https" || !op.HonorLabels || op.Authorization.CredentialsFile == "" {
		t.Errorf("operator job %+v, want https, honor_labels and a token", op)
	}
}

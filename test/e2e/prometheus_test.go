//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/proc"
	"github.com/cloudnative-mysql/cloudnative-mysql/test/chaos"
)

// nodePrometheus is Debian's Prometheus running in the node's network namespace, where it reaches
// every Pod, with the shipped scrape configuration (config/monitoring/prometheus-scrape.yaml) and
// the shipped rules (config/monitoring/rules.yaml) as they are. Two things differ from a
// Prometheus in the cluster, and only these: the credentials files are written by the test from
// the Secrets a Prometheus Pod would mount, and the Pods are discovered by the test (Debian's
// build has no Kubernetes discovery) and handed over through file_sd with the very labels
// kubernetes_sd gives, so the shipped relabelling runs unchanged.
type nodePrometheus struct {
	t    *testing.T
	dir  string
	addr string
	// jobs maps a job of the shipped configuration to what the test discovers for it.
	jobs []promJob
}

// promJob is a scrape job and the Pods it discovers: those of namespace with the label selector.
type promJob struct {
	name      string
	namespace string
	selector  client.MatchingLabels
	file      string
}

// prometheusOptions name the Cluster the per-Cluster job scrapes and the files of the
// credentials a Prometheus Pod would mount.
type prometheusOptions struct {
	namespace, cluster string
}

// startPrometheus starts Prometheus for the Cluster of o and the operator, the scraper's token
// made as config/monitoring/operator-scraper.yaml makes it.
func startPrometheus(t *testing.T, o prometheusOptions) *nodePrometheus {
	t.Helper()
	bin := os.Getenv("CNM_PROMETHEUS")
	if bin == "" {
		t.Fatal("CNM_PROMETHEUS is not set: run with eval \"$(bash hack/substrate.sh env)\" (make e2e does)")
	}
	p := &nodePrometheus{t: t, dir: t.TempDir(), addr: nodeIP + ":" + strconv.Itoa(19500+os.Getpid()%400)}
	secrets := filepath.Join(p.dir, "secrets")
	// The Cluster's metrics Secret, as mounted at /etc/prometheus/secrets/<cluster>-metrics.
	var metrics corev1.Secret
	WaitFor(t, 2*time.Minute, "the Secret "+o.cluster+"-metrics", func() (bool, error) {
		err := env.c.Get(context.Background(), client.ObjectKey{Namespace: o.namespace, Name: o.cluster + "-metrics"}, &metrics)
		return err == nil && len(metrics.Data["token"]) > 0 && len(metrics.Data["ca.crt"]) > 0, err
	})
	writeFiles(t, filepath.Join(secrets, o.cluster+"-metrics"), metrics.Data)
	// The operator's scraper: the shipped ServiceAccount, token Secret and binding.
	raw, err := os.ReadFile(filepath.Join(env.root, "config/monitoring/operator-scraper.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	Apply(t, operatorNamespace, string(raw))
	var token corev1.Secret
	WaitFor(t, time.Minute, "the scraper's token", func() (bool, error) {
		err := env.c.Get(context.Background(), client.ObjectKey{Namespace: operatorNamespace,
			Name: "cloudnative-mysql-metrics-scraper-token"}, &token)
		return err == nil && len(token.Data["token"]) > 0, err
	})
	writeFiles(t, filepath.Join(secrets, "serviceaccount"), map[string][]byte{"token": token.Data["token"]})

	cfg := p.config(t, o, secrets)
	cfgFile := filepath.Join(p.dir, "prometheus.yml")
	if err := os.WriteFile(cfgFile, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	p.discover(t)
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Second):
				p.discover(t)
			}
		}
	}()
	// No discovery writes into the test's directory, nor logs, after the test ends.
	t.Cleanup(func() { close(stop); <-stopped })
	cmd := exec.Command("nsenter", "--net="+chaos.NodeNetns, "--", bin, "--config.file="+cfgFile,
		"--storage.tsdb.path="+filepath.Join(p.dir, "data"), "--web.listen-address="+p.addr)
	log, err := os.Create(filepath.Join(p.dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	child, err := proc.StartTied(cmd)
	if err != nil {
		t.Fatalf("starting Prometheus on the node: %v", err)
	}
	t.Cleanup(func() {
		_ = child.Stop(5 * time.Second)
		log.Close()
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			t.Logf("Prometheus log:\n%s", tail(string(b), 40))
		}
	})
	WaitFor(t, time.Minute, "Prometheus ready", func() (bool, error) {
		resp, err := http.Get("http://" + p.addr + "/-/ready")
		if err != nil {
			return false, err
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, fmt.Errorf("ready: %s", resp.Status)
	})
	return p
}

// config is the shipped scrape configuration for o: its per-Cluster job made for o's Cluster as
// its comments say (the sample's names replaced), the credentials at the files written here,
// kubernetes_sd replaced by file_sd, and the shipped rules loaded.
func (p *nodePrometheus) config(t *testing.T, o prometheusOptions, secrets string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(env.root, "config/monitoring/prometheus-scrape.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.NewReplacer("cloudnative-mysql/default/cluster-sample", "cloudnative-mysql/"+o.namespace+"/"+o.cluster,
		"cluster-sample", o.cluster, "/etc/prometheus/secrets/", secrets+"/",
		"/var/run/secrets/kubernetes.io/serviceaccount/", secrets+"/serviceaccount/").Replace(string(raw))
	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(text), &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["rule_files"] = []any{filepath.Join(env.root, "config/monitoring/rules.yaml")}
	// Rules are evaluated every 15 s (Prometheus' default is 1 m): how soon an alert whose
	// condition holds is seen, not how long the rule waits (its for:, as shipped).
	cfg["global"] = map[string]any{"evaluation_interval": "15s"}
	jobs, _ := cfg["scrape_configs"].([]any)
	if len(jobs) != 2 {
		t.Fatalf("the shipped scrape configuration has %d jobs, want the Cluster's and the operator's", len(jobs))
	}
	for _, j := range jobs {
		job := j.(map[string]any)
		name := job["name"]
		if name == nil {
			name = job["job_name"]
		}
		sd, _ := job["kubernetes_sd_configs"].([]any)
		if len(sd) != 1 {
			t.Fatalf("job %v: %d kubernetes_sd_configs, want 1", name, len(sd))
		}
		one := sd[0].(map[string]any)
		pj := promJob{name: fmt.Sprint(name), file: filepath.Join(p.dir, "targets-"+strconv.Itoa(len(p.jobs))+".json")}
		if sel, _ := one["selectors"].([]any); len(sel) == 1 {
			label := fmt.Sprint(sel[0].(map[string]any)["label"])
			k, v, _ := strings.Cut(label, "=")
			pj.selector = client.MatchingLabels{k: v}
			// The per-Cluster job, made for the Cluster's namespace as its comment says.
			pj.namespace = o.namespace
		}
		if ns, ok := one["namespaces"].(map[string]any); ok && pj.namespace == "" {
			if names, _ := ns["names"].([]any); len(names) == 1 {
				pj.namespace = fmt.Sprint(names[0])
			}
		}
		if pj.namespace == "" {
			t.Fatalf("job %v discovers no one namespace: %v", name, one)
		}
		p.jobs = append(p.jobs, pj)
		delete(job, "kubernetes_sd_configs")
		job["file_sd_configs"] = []any{map[string]any{"files": []any{pj.file}, "refresh_interval": "5s"}}
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var nonLabelChars = regexp.MustCompile(`[^a-zA-Z0-9_]`)

// discover writes each job's targets: one per container port of each running Pod, labelled as
// Prometheus' kubernetes_sd (role pod) labels them.
func (p *nodePrometheus) discover(t *testing.T) {
	for _, j := range p.jobs {
		var pods corev1.PodList
		if err := env.c.List(context.Background(), &pods, client.InNamespace(j.namespace), j.selector); err != nil {
			t.Logf("discovering the Pods of job %s: %v", j.name, err)
			continue
		}
		var groups []map[string]any
		for _, pod := range pods.Items {
			if pod.Status.PodIP == "" || pod.Status.Phase != corev1.PodRunning {
				continue
			}
			for _, c := range pod.Spec.Containers {
				for _, port := range c.Ports {
					labels := map[string]string{
						"__meta_kubernetes_namespace":                 pod.Namespace,
						"__meta_kubernetes_pod_name":                  pod.Name,
						"__meta_kubernetes_pod_container_name":        c.Name,
						"__meta_kubernetes_pod_container_port_name":   port.Name,
						"__meta_kubernetes_pod_container_port_number": strconv.Itoa(int(port.ContainerPort)),
						"__meta_kubernetes_pod_ip":                    pod.Status.PodIP,
					}
					for k, v := range pod.Labels {
						labels["__meta_kubernetes_pod_label_"+nonLabelChars.ReplaceAllString(k, "_")] = v
					}
					groups = append(groups, map[string]any{
						"targets": []string{pod.Status.PodIP + ":" + strconv.Itoa(int(port.ContainerPort))}, "labels": labels})
				}
			}
		}
		b, _ := json.Marshal(groups)
		tmp := j.file + ".tmp"
		if err := os.WriteFile(tmp, b, 0o600); err == nil {
			_ = os.Rename(tmp, j.file)
		}
	}
}

func writeFiles(t *testing.T, dir string, data map[string][]byte) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for k, v := range data {
		if err := os.WriteFile(filepath.Join(dir, k), v, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// promSample is one series of a query's instant vector.
type promSample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

// value is the sample's value.
func (s promSample) value() float64 {
	v, _ := strconv.ParseFloat(fmt.Sprint(s.Value[1]), 64)
	return v
}

// query evaluates expr now; an error is Prometheus refusing it or not answering.
func (p *nodePrometheus) query(expr string) ([]promSample, error) {
	resp, err := http.Get("http://" + p.addr + "/api/v1/query?query=" + url.QueryEscape(expr))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Status    string `json:"status"`
		Error     string `json:"error"`
		ErrorType string `json:"errorType"`
		Data      struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("query %q: %s: %w", expr, resp.Status, err)
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("query %q: %s: %s", expr, body.ErrorType, body.Error)
	}
	switch body.Data.ResultType {
	case "vector":
		var out []promSample
		err := json.Unmarshal(body.Data.Result, &out)
		return out, err
	case "scalar":
		var v [2]any
		err := json.Unmarshal(body.Data.Result, &v)
		return []promSample{{Value: v}}, err
	}
	return nil, fmt.Errorf("query %q: result type %s", expr, body.Data.ResultType)
}

// waitQuery waits until expr returns a sample for which cond holds.
func (p *nodePrometheus) waitQuery(t *testing.T, timeout time.Duration, what, expr string, cond func(promSample) bool) promSample {
	t.Helper()
	var found promSample
	WaitFor(t, timeout, what, func() (bool, error) {
		got, err := p.query(expr)
		if err != nil {
			return false, err
		}
		for _, s := range got {
			if cond == nil || cond(s) {
				found = s
				return true, nil
			}
		}
		return false, fmt.Errorf("%s returned %v; targets: %s", expr, got, p.targets())
	})
	return found
}

// targets summarises Prometheus' active targets: job, address, health and last error.
func (p *nodePrometheus) targets() string {
	resp, err := http.Get("http://" + p.addr + "/api/v1/targets?state=active")
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	var body struct {
		Data struct {
			ActiveTargets []struct {
				ScrapePool string            `json:"scrapePool"`
				Labels     map[string]string `json:"labels"`
				Health     string            `json:"health"`
				LastError  string            `json:"lastError"`
			} `json:"activeTargets"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return err.Error()
	}
	var out []string
	for _, t := range body.Data.ActiveTargets {
		out = append(out, fmt.Sprintf("%s %s %s %s", t.ScrapePool, t.Labels["instance"], t.Health, t.LastError))
	}
	return fmt.Sprintf("%d: %s", len(out), strings.Join(out, "; "))
}

// alertState is the state of the named alert for the labels, "" when it is neither pending nor
// firing.
func (p *nodePrometheus) alertState(alert, namespace string) (string, error) {
	got, err := p.query(`ALERTS{alertname="` + alert + `",namespace="` + namespace + `"}`)
	if err != nil {
		return "", err
	}
	state := ""
	for _, s := range got {
		if s.Metric["alertstate"] == "firing" {
			return "firing", nil
		}
		state = s.Metric["alertstate"]
	}
	return state, nil
}

package monitoring

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// EnvPromtool names the environment variable that points at promtool (hack/substrate.sh env).
const EnvPromtool = "CNM_PROMTOOL"

// Paths in the repository, from this package's directory.
var (
	monitoringDir = filepath.Join("..", "..", "config", "monitoring")
	rulesPath     = filepath.Join(monitoringDir, "rules.yaml")
	ruleTestsGlob = filepath.Join(monitoringDir, "tests", "*.yaml")
	docPath       = filepath.Join("..", "..", "docs", "monitoring.md")
)

// promtool returns the promtool binary, failing with a hint on how to get it when it is missing:
// the rules are never left untested for want of the tool.
func promtool(t *testing.T) string {
	t.Helper()
	path := os.Getenv(EnvPromtool)
	if path == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			t.Fatalf("locating promtool (set %s): %v", EnvPromtool, err)
		}
		path = filepath.Join(cache, "cloudnative-mysql", "prometheus", "v1", "usr", "bin", "promtool")
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatalf("no promtool at %s (set %s, or unpack it with `make test` or `bash hack/substrate.sh prometheus`): %v",
			path, EnvPromtool, err)
	}
	if info.IsDir() || info.Mode().Perm()&0o111 == 0 {
		t.Fatalf("promtool at %s is not an executable file", path)
	}
	return path
}

func runPromtool(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, err := exec.Command(promtool(t), args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("promtool %s: %w", strings.Join(args, " "), err)
	}
	return string(out), nil
}

func TestPromtoolChecksTheRules(t *testing.T) {
	out, err := runPromtool(t, "check", "rules", rulesPath)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "SUCCESS") {
		t.Fatalf("promtool check rules did not report success:\n%s", out)
	}
}

func TestPromtoolUnitTestsOfTheRules(t *testing.T) {
	files, err := filepath.Glob(ruleTestsGlob)
	if err != nil || len(files) == 0 {
		t.Fatalf("no rule test files match %s (%v)", ruleTestsGlob, err)
	}
	out, err := runPromtool(t, append([]string{"test", "rules"}, files...)...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got := strings.Count(out, "SUCCESS"); got != len(files) {
		t.Fatalf("%d of %d rule test files succeeded:\n%s", got, len(files), out)
	}
}

// TestPromtoolFailsAWrongExpectation proves the unit tests can fail: the same tests against rules
// whose critical backup alert never fires must not pass.
func TestPromtoolFailsAWrongExpectation(t *testing.T) {
	rules, err := os.ReadFile(rulesPath)
	if err != nil {
		t.Fatal(err)
	}
	const from = "expr: max by (namespace, cluster) (cnm_backups_no_success_critical) == 1"
	if !strings.Contains(string(rules), from) {
		t.Fatalf("rules.yaml has no %q to break", from)
	}
	dir := t.TempDir()
	broken := strings.Replace(string(rules), from, "expr: max by (namespace, cluster) (cnm_backups_no_success_critical) == 2", 1)
	if err := os.MkdirAll(filepath.Join(dir, "tests"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rules.yaml"), []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile(filepath.Join(monitoringDir, "tests", "backups.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tests", "backups.yaml"), tests, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runPromtool(t, "test", "rules", filepath.Join(dir, "tests", "backups.yaml"))
	if err == nil {
		t.Fatalf("the backup tests passed against rules whose critical alert cannot fire:\n%s", out)
	}
	if !strings.Contains(out, "CNMBackupsNoRecentSuccess") {
		t.Fatalf("the failure does not name the broken alert:\n%s", out)
	}
}

// TestPromtoolChecksTheScrapeExample loads prometheus-scrape.yaml as Prometheus would, its
// credential files and rule file pointed at real files. Debian builds Prometheus without the
// Kubernetes service discovery, so its kubernetes_sd_configs are swapped for a static target
// (TestScrapeExampleFollowsTheContract checks what they select).
func TestPromtoolChecksTheScrapeExample(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(monitoringDir, "prometheus-scrape.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range []string{"secrets/cluster-sample-metrics/token", "secrets/cluster-sample-metrics/ca.crt", "sa/token"} {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	rules, err := filepath.Abs(rulesPath)
	if err != nil {
		t.Fatal(err)
	}
	replaced := strings.NewReplacer(
		"/etc/prometheus/secrets/", dir+"/secrets/",
		"/var/run/secrets/kubernetes.io/serviceaccount/token", dir+"/sa/token",
		"/etc/prometheus/rules/cloudnative-mysql/rules.yaml", rules,
	).Replace(string(src))
	if replaced == string(src) {
		t.Fatal("prometheus-scrape.yaml no longer names the files this test replaces")
	}
	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(replaced), &cfg); err != nil {
		t.Fatal(err)
	}
	jobs, _ := cfg["scrape_configs"].([]any)
	if len(jobs) == 0 {
		t.Fatal("prometheus-scrape.yaml has no scrape_configs")
	}
	for _, j := range jobs {
		job := j.(map[string]any)
		if _, ok := job["kubernetes_sd_configs"]; !ok {
			t.Fatalf("job %v does not discover its targets with kubernetes_sd_configs", job["job_name"])
		}
		delete(job, "kubernetes_sd_configs")
		job["static_configs"] = []any{map[string]any{"targets": []any{"127.0.0.1:9104"}}}
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := runPromtool(t, "check", "config", path)
	if err != nil {
		t.Fatalf("%v\n%s", err, res)
	}
	if !strings.Contains(res, "SUCCESS: 1 rule files found") {
		t.Fatalf("promtool did not load the rule file through the example:\n%s", res)
	}
}

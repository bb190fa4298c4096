package helm

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/cmd/controller"
)

// notValues are the flags of `manager controller` a value does not set: where the kubeconfig is
// (the in-cluster configuration instead), and help.
var notValues = []string{"kubeconfig", "help"}

// notAValue tells the flags no value sets: those of notValues, and the test binary's own (test.*),
// which the command takes from the process's flag set.
func notAValue(name string) bool {
	return slices.Contains(notValues, name) || strings.HasPrefix(name, "test.")
}

// valueKey is the key of a flag in values.yaml: operator.<camelCase> (--watch-namespaces is the
// top-level watchNamespaces).
func valueKey(flag string) string {
	if flag == "watch-namespaces" {
		return "watchNamespaces"
	}
	parts := strings.Split(flag, "-")
	for i := 1; i < len(parts); i++ {
		parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
	}
	return "operator." + strings.Join(parts, "")
}

// deployment returns the rendered operator Deployment.
func deployment(t *testing.T, flags ...string) *appsv1.Deployment {
	t.Helper()
	u := find(t, template(t, chartPath, operatorNamespace, flags...), "Deployment", "cloudnative-mysql-manager")
	var d appsv1.Deployment
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &d); err != nil {
		t.Fatal(err)
	}
	return &d
}

// parse parses args with the operator's own `manager controller` command, failing on a flag it
// does not have, and returns its flags.
func parse(t *testing.T, args []string) *pflag.FlagSet {
	t.Helper()
	cmd := controller.NewCommand()
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatalf("manager controller refuses the chart's arguments %v: %v", args, err)
	}
	return cmd.Flags()
}

// TestEveryFlagIsAValueAtTheOperatorsDefault: every flag of `manager controller` has its key in
// values.yaml, and the default values render arguments that leave every flag at its default (those
// the environment sets, --leader-election-namespace and --watch-namespaces, unset).
func TestEveryFlagIsAValueAtTheOperatorsDefault(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root(t), chartPath, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(b, &values); err != nil {
		t.Fatal(err)
	}
	operatorValues, _ := values["operator"].(map[string]any)
	args := deployment(t).Spec.Template.Spec.Containers[0].Args
	parsed := parse(t, args)
	n := 0
	parsed.VisitAll(func(f *pflag.Flag) {
		if notAValue(f.Name) {
			return
		}
		n++
		k := valueKey(f.Name)
		_, isOperator := operatorValues[strings.TrimPrefix(k, "operator.")]
		if _, isTop := values[k]; !isOperator && !isTop {
			t.Errorf("--%s has no value %s in values.yaml", f.Name, k)
		}
		if f.Changed && f.Value.String() != f.DefValue {
			t.Errorf("the default values set --%s=%s, the operator's default is %s", f.Name, f.Value, f.DefValue)
		}
	})
	if n < 15 {
		t.Errorf("only %d flags visited: the command's flags were not all seen", n)
	}
	for _, a := range args {
		if strings.HasPrefix(a, "--leader-election-namespace") || strings.HasPrefix(a, "--watch-namespaces") {
			t.Errorf("the default values set %s, which the environment decides", a)
		}
	}
}

// TestCustomImageAndFlagsReachTheDeployment: an image by digest, resources and every flag changed
// end up in the Deployment (the operator's command parses each to the value given), the image
// also as OPERATOR_IMAGE_NAME, the ports follow the bind addresses.
func TestCustomImageAndFlagsReachTheDeployment(t *testing.T) {
	digest := "sha256:" + strings.Repeat("ab", 32)
	want := map[string]string{
		"leader-elect": "false", "leader-election-namespace": "elections", "metrics-bind-address": ":9443",
		"metrics-insecure": "true", "metrics-cert-dir": "/certs", "health-probe-bind-address": ":9081",
		"min-schedule-interval": "5m0s", "schedule-skip-immediately": "true", "scheduled-backup-workers": "7",
		"backup-workers": "9", "object-store-allowed-cidrs": "[10.0.0.0/8,127.0.0.1]", "update-instance-managers": "false",
		"zap-devel": "true", "zap-encoder": "console", "zap-log-level": "debug", "zap-stacktrace-level": "panic",
		"zap-time-encoding": "rfc3339", "watch-namespaces": "[apps,billing]",
	}
	sets := []string{
		"image.repository=registry.example:5000/dbteam/operator", "image.digest=" + digest, "image.pullPolicy=Always",
		"resources.limits.memory=1Gi", "operator.leaderElect=false", "operator.leaderElectionNamespace=elections",
		"operator.metricsBindAddress=:9443", "operator.metricsInsecure=true", "operator.metricsCertDir=/certs",
		"operator.healthProbeBindAddress=:9081", "operator.minScheduleInterval=5m", "operator.scheduleSkipImmediately=true",
		"operator.scheduledBackupWorkers=7", "operator.backupWorkers=9", "operator.objectStoreAllowedCidrs={10.0.0.0/8,127.0.0.1}",
		"operator.updateInstanceManagers=false", "operator.zapDevel=true", "operator.zapEncoder=console",
		"operator.zapLogLevel=debug", "operator.zapStacktraceLevel=panic", "operator.zapTimeEncoding=rfc3339",
		"watchNamespaces={apps,billing}",
	}
	var flags []string
	for _, s := range sets {
		flags = append(flags, "--set", s)
	}
	d := deployment(t, flags...)
	c := d.Spec.Template.Spec.Containers[0]
	parsed := parse(t, c.Args)
	for name, v := range want {
		f := parsed.Lookup(name)
		if f == nil || !f.Changed || f.Value.String() != v {
			t.Errorf("--%s: %v, want %s (arguments %v)", name, f, v, c.Args)
		}
	}
	parsed.VisitAll(func(f *pflag.Flag) {
		if _, ok := want[f.Name]; !ok && !notAValue(f.Name) {
			t.Errorf("--%s is not changed by the test: add it to want", f.Name)
		}
	})
	image := "registry.example:5000/dbteam/operator@" + digest
	if c.Image != image || c.ImagePullPolicy != corev1.PullAlways {
		t.Errorf("image %s (%s), want %s (Always)", c.Image, c.ImagePullPolicy, image)
	}
	if env := envValue(c.Env, "OPERATOR_IMAGE_NAME"); env != image {
		t.Errorf("OPERATOR_IMAGE_NAME %q, want %s", env, image)
	}
	if got := c.Resources.Limits.Memory().String(); got != "1Gi" {
		t.Errorf("memory limit %s", got)
	}
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	if ports["metrics"] != 9443 || ports["probes"] != 9081 {
		t.Errorf("container ports %v, want metrics 9443 and probes 9081", ports)
	}
	svc := find(t, template(t, chartPath, operatorNamespace, flags...), "Service", "cloudnative-mysql-manager-metrics")
	if got := fmt.Sprint(svc.Object["spec"].(map[string]any)["ports"]); !strings.Contains(got, "port:9443") {
		t.Errorf("the metrics Service's ports %s, want 9443", got)
	}
}

// TestMetricsOff: --metrics-bind-address=0 turns the endpoint off, and with it the container port
// and the Service.
func TestMetricsOff(t *testing.T) {
	objs := template(t, chartPath, operatorNamespace, "--set", "operator.metricsBindAddress=0")
	for _, o := range objs {
		if o.GetKind() == "Service" {
			t.Errorf("%s rendered with the metrics endpoint off", key(o))
		}
	}
	d := deployment(t, "--set", "operator.metricsBindAddress=0")
	for _, p := range d.Spec.Template.Spec.Containers[0].Ports {
		if p.Name == "metrics" {
			t.Error("a metrics container port with the endpoint off")
		}
	}
	if f := parse(t, d.Spec.Template.Spec.Containers[0].Args).Lookup("metrics-bind-address"); f.Value.String() != "0" {
		t.Errorf("--metrics-bind-address=%s", f.Value)
	}
}

func envValue(env []corev1.EnvVar, name string) string {
	for _, e := range env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

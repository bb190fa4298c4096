//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mysqlv1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

const (
	operatorNamespace  = "cloudnative-mysql-system"
	operatorDeployment = "cloudnative-mysql-manager"
	// operatorImage is the image config/default installs, built by hack/localcluster.sh.
	operatorImage = "cloudnative-mysql/operator:dev"
)

// env is the cluster the tests run against, set up once by TestMain.
var env struct {
	root       string // the repository
	kubeconfig string
	kubectl    string
	ctrSocket  string
	c          client.Client
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	_, file, _, _ := runtime.Caller(0)
	env.root = filepath.Clean(filepath.Join(filepath.Dir(file), "../.."))
	script := filepath.Join(env.root, "hack/localcluster.sh")

	wasUp := exec.Command("bash", script, "status").Run() == nil && nodeReadyQuick(script)
	start := time.Now()
	if out, err := exec.Command("bash", script, "up").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "local cluster up: %v\n%s", err, out)
		return 1
	}
	fmt.Fprintf(os.Stderr, "local cluster up in %s\n", time.Since(start).Round(time.Millisecond))
	if !wasUp && os.Getenv("CNM_E2E_KEEP") != "1" {
		defer func() {
			if out, err := exec.Command("bash", script, "down").CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "local cluster down: %v\n%s", err, out)
			}
		}()
	}

	kc, err := exec.Command("bash", script, "kubeconfig").Output()
	if err != nil {
		fmt.Fprintf(os.Stderr, "kubeconfig: %v\n", err)
		return 1
	}
	env.kubeconfig = strings.TrimSpace(string(kc))
	cache := filepath.Dir(filepath.Dir(env.kubeconfig)) // .../cloudnative-mysql
	env.kubectl = filepath.Join(cache, "k8s", "v1.34.10", "kubectl")
	env.ctrSocket = filepath.Join(cache, "localcluster", "containerd", "containerd.sock")

	cfg, err := clientcmd.BuildConfigFromFlags("", env.kubeconfig)
	if err != nil {
		fmt.Fprintf(os.Stderr, "rest config: %v\n", err)
		return 1
	}
	scheme := clientgoscheme.Scheme
	if err := mysqlv1.AddToScheme(scheme); err != nil {
		fmt.Fprintf(os.Stderr, "scheme: %v\n", err)
		return 1
	}
	if env.c, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		fmt.Fprintf(os.Stderr, "client: %v\n", err)
		return 1
	}

	start = time.Now()
	if out, err := kubectl("apply", "--server-side", "--force-conflicts", "-k", filepath.Join(env.root, "config/default")); err != nil {
		fmt.Fprintf(os.Stderr, "installing the operator: %v\n%s", err, out)
		return 1
	}
	if err := restartOnNewImage(filepath.Join(cache, "localcluster")); err != nil {
		fmt.Fprintf(os.Stderr, "restarting the operator on its new image: %v\n", err)
		return 1
	}
	if out, err := kubectl("-n", operatorNamespace, "rollout", "status", "deploy/"+operatorDeployment, "--timeout=180s"); err != nil {
		fmt.Fprintf(os.Stderr, "operator rollout: %v\n%s", err, out)
		out, _ = kubectl("-n", operatorNamespace, "describe", "pods")
		fmt.Fprintln(os.Stderr, out)
		return 1
	}
	fmt.Fprintf(os.Stderr, "operator installed and ready in %s\n", time.Since(start).Round(time.Millisecond))
	return m.Run()
}

func nodeReadyQuick(script string) bool {
	out, err := exec.Command("bash", script, "status").Output()
	return err == nil && strings.Contains(string(out), " Ready ")
}

// kubectl runs the local cluster's kubectl and returns its combined output.
func kubectl(args ...string) (string, error) {
	var out bytes.Buffer
	cmd := exec.Command(env.kubectl, append([]string{"--kubeconfig", env.kubeconfig}, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// RestrictedLabels put a namespace under the Pod Security "restricted" profile: the API server
// refuses any Pod that runs as root, keeps a capability, may escalate privileges or has no
// seccomp profile.
var RestrictedLabels = map[string]string{
	"pod-security.kubernetes.io/enforce":         "restricted",
	"pod-security.kubernetes.io/enforce-version": "latest",
}

// Namespace creates a namespace for the test under the "restricted" Pod Security profile,
// deleted at its end; on failure the namespace's Pods, their logs and its Events are written to
// the test log first.
func Namespace(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("e2e-%s-%04x", strings.ToLower(sanitize(t.Name())), rand.IntN(1<<16))
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: RestrictedLabels}}
	if err := env.c.Create(context.Background(), ns); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			DumpNamespace(t, name)
			DumpNamespace(t, operatorNamespace)
		}
		if os.Getenv("CNM_E2E_KEEP") == "1" {
			return
		}
		_ = env.c.Delete(context.Background(), ns)
	})
	return name
}

func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteRune('-')
		}
	}
	out := strings.Trim(b.String(), "-")
	if len(out) > 40 {
		out = out[:40]
	}
	return out
}

// DumpNamespace logs the namespace's objects, Events and every container's log.
func DumpNamespace(t *testing.T, ns string) {
	t.Helper()
	out, _ := kubectl("-n", ns, "get", "all,pvc,events,clusters,backups,scheduledbackups", "-o", "wide")
	t.Logf("namespace %s:\n%s", ns, out)
	var pods corev1.PodList
	if err := env.c.List(context.Background(), &pods, client.InNamespace(ns)); err != nil {
		return
	}
	for _, p := range pods.Items {
		for _, c := range append(p.Spec.InitContainers, p.Spec.Containers...) {
			logs, _ := Logs(ns, p.Name, c.Name, false)
			t.Logf("logs of %s/%s[%s]:\n%s", ns, p.Name, c.Name, tail(logs, 30))
		}
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Apply applies YAML manifests in a namespace with kubectl, as a user would.
func Apply(t *testing.T, ns, manifests string) {
	t.Helper()
	cmd := exec.Command(env.kubectl, "--kubeconfig", env.kubeconfig, "-n", ns, "apply", "-f", "-")
	cmd.Stdin = strings.NewReader(manifests)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
}

// Logs returns a container's log (previous: of its last terminated run).
func Logs(ns, pod, container string, previous bool) (string, error) {
	args := []string{"-n", ns, "logs", pod, "-c", container}
	if previous {
		args = append(args, "--previous")
	}
	return kubectl(args...)
}

// Exec runs a command in a container and returns its stdout and stderr.
func Exec(ns, pod, container string, command ...string) (string, string, error) {
	var stdout, stderr bytes.Buffer
	args := append([]string{"--kubeconfig", env.kubeconfig, "-n", ns, "exec", pod, "-c", container, "--"}, command...)
	cmd := exec.Command(env.kubectl, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// RootSQL runs stmts as root@localhost over the local socket in pod's mysql container. The
// password goes on standard input, never on a command line: a shell reads it into MYSQL_PWD and
// hands the rest of its input, the statements, to the client.
func RootSQL(ns, pod, password, stmts string) (string, string, error) {
	var stdout, stderr bytes.Buffer
	args := []string{"--kubeconfig", env.kubeconfig, "-n", ns, "exec", "-i", pod, "-c", "mysql", "--",
		"sh", "-c", `IFS= read -r MYSQL_PWD && export MYSQL_PWD && exec mysql -uroot -S /controller/run/mysqld.sock -N -B`}
	cmd := exec.Command(env.kubectl, args...)
	cmd.Stdin = strings.NewReader(password + "\n" + stmts + "\n")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// WaitFor polls cond every 500 ms until it returns true, failing the test after timeout with the
// last error cond returned.
func WaitFor(t *testing.T, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last error
	for {
		ok, err := cond()
		if ok {
			return
		}
		last = err
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s (last error: %v)", timeout, what, last)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// DeploymentAvailable waits for a Deployment to have all its replicas updated and available.
func DeploymentAvailable(t *testing.T, ns, name string, timeout time.Duration) *appsv1.Deployment {
	t.Helper()
	var d appsv1.Deployment
	WaitFor(t, timeout, "Deployment "+ns+"/"+name+" available", func() (bool, error) {
		if err := env.c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &d); err != nil {
			return false, err
		}
		want := int32(1)
		if d.Spec.Replicas != nil {
			want = *d.Spec.Replicas
		}
		return d.Status.ObservedGeneration >= d.Generation && d.Status.UpdatedReplicas == want &&
			d.Status.AvailableReplicas == want, nil
	})
	return &d
}

// ConditionTrue waits for the object's status condition of type cond to be True.
func ConditionTrue(t *testing.T, obj client.Object, cond string, timeout time.Duration, conds func() []metav1.Condition) {
	t.Helper()
	WaitFor(t, timeout, fmt.Sprintf("%s %s/%s condition %s", obj.GetObjectKind().GroupVersionKind().Kind,
		obj.GetNamespace(), obj.GetName(), cond), func() (bool, error) {
		if err := env.c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err
		}
		for _, c := range conds() {
			if c.Type == cond {
				return c.Status == metav1.ConditionTrue, fmt.Errorf("%s=%s: %s", c.Type, c.Status, c.Message)
			}
		}
		return false, fmt.Errorf("no %s condition yet", cond)
	})
}

// ContainerID returns the runtime ID of a running container of a Pod.
func ContainerID(t *testing.T, ns, pod, container string) string {
	t.Helper()
	var p corev1.Pod
	if err := env.c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: pod}, &p); err != nil {
		t.Fatalf("get pod %s/%s: %v", ns, pod, err)
	}
	for _, s := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
		if s.Name == container && s.ContainerID != "" {
			_, id, _ := strings.Cut(s.ContainerID, "://")
			return id
		}
	}
	t.Fatalf("pod %s/%s has no container %s with an ID", ns, pod, container)
	return ""
}

// KillContainer kills a container's processes with SIGKILL through the node's containerd, the way
// the kernel's OOM killer or a crash would; the kubelet then restarts it.
func KillContainer(t *testing.T, ns, pod, container string) {
	t.Helper()
	id := ContainerID(t, ns, pod, container)
	out, err := exec.Command("ctr", "--address", env.ctrSocket, "-n", "k8s.io", "tasks", "kill", "-a", "-s", "SIGKILL", id).CombinedOutput()
	if err != nil {
		t.Fatalf("kill container %s of %s/%s: %v\n%s", container, ns, pod, err, out)
	}
}

// DeletePod deletes a Pod with the given grace period (0: at once) and waits until it is gone or
// replaced by a Pod of the same name with another UID.
func DeletePod(t *testing.T, ns, name string, grace int64) {
	t.Helper()
	var p corev1.Pod
	if err := env.c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &p); err != nil {
		t.Fatalf("get pod %s/%s: %v", ns, name, err)
	}
	uid := p.UID
	if err := env.c.Delete(context.Background(), &p, client.GracePeriodSeconds(grace)); err != nil && !apierrors.IsNotFound(err) {
		t.Fatalf("delete pod %s/%s: %v", ns, name, err)
	}
	WaitFor(t, 2*time.Minute, "pod "+ns+"/"+name+" gone", func() (bool, error) {
		var now corev1.Pod
		err := env.c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &now)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return err == nil && now.UID != uid, err
	})
}

// restartOnNewImage restarts the operator's Deployment when the operator image imported into the
// node (hack/localcluster.sh records its checksum in imported-operator) is not the one the last
// run installed: the image keeps its tag, so a running operator would otherwise go on with the
// binary of an earlier build.
func restartOnNewImage(lcDir string) error {
	imported, err := os.ReadFile(filepath.Join(lcDir, "imported-operator"))
	if err != nil {
		return err
	}
	stamp := filepath.Join(lcDir, "e2e-operator-installed")
	if installed, _ := os.ReadFile(stamp); string(installed) == string(imported) {
		return nil
	}
	if out, err := kubectl("-n", operatorNamespace, "rollout", "restart", "deploy/"+operatorDeployment); err != nil {
		return fmt.Errorf("%w: %s", err, out)
	}
	return os.WriteFile(stamp, imported, 0o644)
}

// WarningEvent waits until ns holds a Warning Event reason whose message contains text, about
// Cluster cluster (any object when cluster is empty), and returns its message.
func WarningEvent(t *testing.T, ns, cluster, reason, text string, timeout time.Duration) string {
	t.Helper()
	var msg string
	WaitFor(t, timeout, "a Warning Event "+reason, func() (bool, error) {
		var evs corev1.EventList
		if err := env.c.List(context.Background(), &evs, client.InNamespace(ns)); err != nil {
			return false, err
		}
		for _, ev := range evs.Items {
			if ev.Reason == reason && ev.Type == corev1.EventTypeWarning && strings.Contains(ev.Message, text) &&
				(cluster == "" || ev.InvolvedObject.Kind == "Cluster" && ev.InvolvedObject.Name == cluster) {
				msg = ev.Message
				return true, nil
			}
		}
		return false, fmt.Errorf("no Warning %s containing %q yet", reason, text)
	})
	return msg
}

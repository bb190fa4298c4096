package chaos

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sretry "k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mysqlv1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// Env is how the checker reaches the local node: the API server (Client, and kubectl for exec),
// the node's containerd socket, and a dialer whose sockets live in the node's network namespace.
type Env struct {
	Client     client.Client
	Kubectl    string
	Kubeconfig string
	CtrSocket  string
	Dialer     *NetnsDialer
	// Operator is the operator's Deployment, for OperatorUpgrade.
	Operator Operator
	// Logf, when set, receives progress lines.
	Logf func(format string, args ...any)
}

func (e *Env) logf(format string, args ...any) {
	if e.Logf != nil {
		e.Logf(format, args...)
	}
}

// Target names the Cluster under test.
type Target struct{ Namespace, Name string }

// Cluster reads the Cluster.
func (e *Env) Cluster(ctx context.Context, t Target) (*mysqlv1.Cluster, error) {
	var c mysqlv1.Cluster
	if err := e.Client.Get(ctx, client.ObjectKey{Namespace: t.Namespace, Name: t.Name}, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// EditCluster changes the Cluster's spec as a person would: it reads the Cluster, lets edit change
// it, and patches the difference with optimistic locking, reading again and re-applying edit when
// the operator wrote the Cluster (its status) in between. It returns the Cluster as written, so its
// Generation is the one the edit produced.
func (e *Env) EditCluster(ctx context.Context, t Target, edit func(c *mysqlv1.Cluster)) (*mysqlv1.Cluster, error) {
	var out *mysqlv1.Cluster
	err := k8sretry.RetryOnConflict(k8sretry.DefaultRetry, func() error {
		c, err := e.Cluster(ctx, t)
		if err != nil {
			return err
		}
		old := c.DeepCopy()
		edit(c)
		if err := e.Client.Patch(ctx, c, client.MergeFromWithOptions(old, client.MergeFromWithOptimisticLock{})); err != nil {
			return err
		}
		out = c
		return nil
	})
	return out, err
}

// Pods lists the Cluster's instance Pods, by name.
func (e *Env) Pods(ctx context.Context, t Target) ([]corev1.Pod, error) {
	var pods corev1.PodList
	if err := e.Client.List(ctx, &pods, client.InNamespace(t.Namespace),
		client.MatchingLabels{mysqlv1.ClusterLabel: t.Name}, client.HasLabels{mysqlv1.InstanceLabel}); err != nil {
		return nil, err
	}
	slices.SortFunc(pods.Items, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return pods.Items, nil
}

// Pod reads one Pod.
func (e *Env) Pod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	var p corev1.Pod
	if err := e.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// ServiceAddr is host:port of a Service's ClusterIP and its mysql port.
func (e *Env) ServiceAddr(ctx context.Context, ns, name string) (string, error) {
	var s corev1.Service
	if err := e.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &s); err != nil {
		return "", err
	}
	if s.Spec.ClusterIP == "" || s.Spec.ClusterIP == corev1.ClusterIPNone {
		return "", fmt.Errorf("service %s/%s has no cluster IP", ns, name)
	}
	return fmt.Sprintf("%s:%d", s.Spec.ClusterIP, specs.MySQLPort), nil
}

// Exec runs a command in a container with kubectl exec -i, stdin on its standard input,
// returning its stdout.
func (e *Env) Exec(ctx context.Context, ns, pod, container, stdin string, command ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	args := append([]string{"--kubeconfig", e.Kubeconfig, "-n", ns, "exec", "-i", pod, "-c", container, "--"}, command...)
	cmd := exec.CommandContext(ctx, e.Kubectl, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(stdin), &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("exec in %s/%s: %w: %s", ns, pod, err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// RootSQL runs statements as root@localhost over the instance's local socket (the only place
// that account matches), inside the instance's container, with root's password from the Secret
// <cluster>-root. The password and the statements go on standard input, so neither shows on a
// command line.
func (e *Env) RootSQL(ctx context.Context, ns, pod, stmts string) (string, error) {
	var p corev1.Pod
	if err := e.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: pod}, &p); err != nil {
		return "", fmt.Errorf("reading Pod %s/%s: %w", ns, pod, err)
	}
	var secret corev1.Secret
	key := client.ObjectKey{Namespace: ns, Name: specs.UserSecretName(p.Labels[mysqlv1.ClusterLabel], specs.UserRoot)}
	if err := e.Client.Get(ctx, key, &secret); err != nil {
		return "", fmt.Errorf("reading root's password from %s: %w", key.Name, err)
	}
	password := string(secret.Data[corev1.BasicAuthPasswordKey])
	return e.Exec(ctx, ns, pod, specs.MySQLContainerName, password+"\n"+stmts, "sh", "-c",
		"IFS= read -r MYSQL_PWD && export MYSQL_PWD && exec mysql -uroot -S "+specs.ControllerDir+"/run/mysqld.sock -N -B")
}

// Ready says whether the Cluster has settled: condition Ready True, no switchover or failover in
// progress, every instance ready; otherwise why not.
func Ready(c *mysqlv1.Cluster, pods []corev1.Pod) (bool, string) {
	st := c.Status
	ready := false
	for _, cond := range st.Conditions {
		if cond.Type == "Ready" {
			if cond.Status != metav1.ConditionTrue {
				return false, fmt.Sprintf("Ready=%s: %s", cond.Status, cond.Message)
			}
			ready = true
		}
	}
	switch {
	case !ready:
		return false, "no Ready condition"
	case st.CurrentPrimary == "" || st.CurrentPrimary != st.TargetPrimary:
		return false, fmt.Sprintf("primary %q, target %q", st.CurrentPrimary, st.TargetPrimary)
	case int32(len(pods)) != c.Spec.Instances:
		return false, fmt.Sprintf("%d Pods of %d", len(pods), c.Spec.Instances)
	}
	for _, p := range pods {
		if p.DeletionTimestamp != nil || !podReady(&p) {
			return false, "Pod " + p.Name + " not ready"
		}
	}
	return true, ""
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// WaitReady polls until Ready or the timeout, returning the Cluster and its Pods.
func (e *Env) WaitReady(ctx context.Context, t Target, timeout time.Duration) (*mysqlv1.Cluster, []corev1.Pod, error) {
	c, pods, _, err := e.waitSettled(ctx, t, timeout, false)
	return c, pods, err
}

// waitSettled polls until the Cluster is Ready or, with acceptDiverged, settled but for diverged
// instances, which it then returns.
func (e *Env) waitSettled(ctx context.Context, t Target, timeout time.Duration, acceptDiverged bool) (*mysqlv1.Cluster, []corev1.Pod, []string, error) {
	deadline := time.Now().Add(timeout)
	why := ""
	for {
		c, err := e.Cluster(ctx, t)
		if err == nil {
			var pods []corev1.Pod
			if pods, err = e.Pods(ctx, t); err == nil {
				var ok bool
				if ok, why = Ready(c, pods); ok {
					return c, pods, nil, nil
				}
				if d := settledButDiverged(c, pods); acceptDiverged && len(d) > 0 {
					return c, pods, d, nil
				}
			}
		}
		if err != nil {
			why = err.Error()
		}
		if time.Now().After(deadline) {
			return nil, nil, nil, fmt.Errorf("cluster %s/%s not ready after %s: %s", t.Namespace, t.Name, timeout, why)
		}
		select {
		case <-ctx.Done():
			return nil, nil, nil, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

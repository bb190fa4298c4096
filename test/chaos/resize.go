package chaos

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	mysqlv1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// injectResize raises the Cluster's CPU and memory requests (keeping the QoS class) under the load
// and waits until every instance's MySQL container runs them (its spec and the resources the
// kubelet reports) with the Cluster settled. The fault is the whole resize: f.At is the patch,
// f.Healed its end. It fails unless every instance was resized in place: the same Pod, no
// container restart, no mysqld start or shutdown in its log.
func (e *Env) injectResize(ctx context.Context, t Target, f *Fault) error {
	before, err := e.Pods(ctx, t)
	if err != nil {
		return err
	}
	watch, err := e.watchShutdowns(ctx, t)
	if err != nil {
		return err
	}
	defer watch.stop()
	var next mysqlv1.ResourceRequirements
	c, err := e.EditCluster(ctx, t, func(c *mysqlv1.Cluster) {
		next = *c.Spec.Resources.DeepCopy()
		if next.Requests == nil {
			next.Requests = corev1.ResourceList{}
		}
		cpu, mem := next.Requests[corev1.ResourceCPU], next.Requests[corev1.ResourceMemory]
		cpu.Add(resource.MustParse("50m"))
		mem.Add(resource.MustParse("64Mi"))
		next.Requests[corev1.ResourceCPU], next.Requests[corev1.ResourceMemory] = cpu, mem
		c.Spec.Resources = next
	})
	if err != nil {
		return fmt.Errorf("changing the resources of %s: %w", t.Name, err)
	}
	f.At = time.Now()
	want := specs.ResizableOf(next.Container())
	f.Detail = fmt.Sprintf("requests cpu %s, memory %s", want.Requests.Cpu(), want.Requests.Memory())
	if err := e.untilEveryPod(ctx, t, c.Generation, func(_ *mysqlv1.Cluster, p *corev1.Pod) string { return resizedTo(p, want) }); err != nil {
		return fmt.Errorf("the resize of %s: %w", t.Name, err)
	}
	now := time.Now()
	f.Healed = &now
	f.Detail += fmt.Sprintf("; every instance resized in %s", now.Sub(f.At).Round(100*time.Millisecond))
	_, err = e.finishKeptRunning(ctx, t, f, watch, before)
	return err
}

// untilEveryPod waits, up to RolloutTimeout, until podDone says nothing ("") of every instance
// Pod and the Cluster is settled at generation (0: the generation it has when read).
func (e *Env) untilEveryPod(ctx context.Context, t Target, generation int64, podDone func(*mysqlv1.Cluster, *corev1.Pod) string) error {
	return pollUntil(ctx, RolloutTimeout, func() (bool, string, error) {
		c, err := e.Cluster(ctx, t)
		if err != nil {
			return false, "", err
		}
		pods, err := e.Pods(ctx, t)
		if err != nil {
			return false, "", err
		}
		for i := range pods {
			if why := podDone(c, &pods[i]); why != "" {
				return false, why, nil
			}
		}
		gen := generation
		if gen == 0 {
			gen = c.Generation
		}
		ok, why := settledAt(c, pods, gen)
		return ok, why, nil
	})
}

// finishKeptRunning ends watch, records the shutdowns it saw in f, and is an error unless every
// Pod of before kept running (keptRunning); it returns the shutdowns.
func (e *Env) finishKeptRunning(ctx context.Context, t Target, f *Fault, watch *shutdownWatch, before []corev1.Pod) ([]Shutdown, error) {
	shutdowns, err := e.finishShutdownWatch(ctx, t, watch)
	if err := f.recordShutdowns(shutdowns, err); err != nil {
		return shutdowns, err
	}
	after, err := e.Pods(ctx, t)
	if err != nil {
		return shutdowns, err
	}
	return shutdowns, keptRunning(before, after, shutdowns)
}

// resizedTo says why p's MySQL container does not run want yet, "" once it does: its spec asks
// it, the kubelet reports it, and no resize is pending or in progress.
func resizedTo(p *corev1.Pod, want corev1.ResourceRequirements) string {
	for _, cond := range p.Status.Conditions {
		if (cond.Type == corev1.PodResizePending || cond.Type == corev1.PodResizeInProgress) && cond.Status == corev1.ConditionTrue {
			return fmt.Sprintf("%s: %s %s %s", p.Name, cond.Type, cond.Reason, cond.Message)
		}
	}
	for _, c := range p.Spec.Containers {
		if c.Name == specs.MySQLContainerName && !specs.SameResizable(c.Resources, want) {
			return p.Name + " asks other resources"
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name != specs.MySQLContainerName {
			continue
		}
		if cs.Resources == nil || !specs.SameResizable(*cs.Resources, want) {
			return p.Name + ": the kubelet does not report the new resources yet"
		}
	}
	return ""
}

// keptRunning is an error unless every Pod of before is in after with the same UID and no
// container restart, and its log showed no mysqld start or shutdown.
func keptRunning(before, after []corev1.Pod, shutdowns []Shutdown) error {
	now := map[string]*corev1.Pod{}
	for i := range after {
		now[after[i].Name] = &after[i]
	}
	logs := map[string]Shutdown{}
	for _, s := range shutdowns {
		logs[s.Pod] = s
	}
	var bad []string
	for i := range before {
		b := &before[i]
		a, s := now[b.Name], logs[b.Name]
		switch {
		case a == nil || a.UID != b.UID:
			bad = append(bad, b.Name+" was replaced")
		case containerRestarts(a) != containerRestarts(b):
			bad = append(bad, fmt.Sprintf("%s: a container restarted (%d restarts, %d before)", b.Name, containerRestarts(a), containerRestarts(b)))
		case s.Started || s.Seen:
			bad = append(bad, b.Name+": mysqld was shut down or started again")
		case s.TurnedReadOnly:
			bad = append(bad, b.Name+": the primary was turned read-only to take its Lease again")
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("not every instance kept running: %s", strings.Join(bad, "; "))
	}
	return nil
}

func containerRestarts(p *corev1.Pod) int32 {
	var n int32
	for _, cs := range p.Status.ContainerStatuses {
		n += cs.RestartCount
	}
	return n
}

package chaos

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	mysqlv1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// RolloutTimeout bounds a rolling update of a three-instance Cluster: three Pods replaced one at a
// time (each about 20 s on the local node) and a switchover.
const RolloutTimeout = 6 * time.Minute

// rolledAnnotation is the Pod annotation (spec.podMetadata) the rolling-update faults change: a
// change every instance's Pod spec hash covers and that no Pod can take in place.
const rolledAnnotation = "chaos.cloudnative-mysql.io/rolled-at"

// injectRollingUpdate changes the Cluster's Pod annotations (spec.podMetadata, which every
// instance's Pod spec hash covers), as a person editing the Cluster would, with
// primaryUpdateMethod method, and waits until every instance runs the new spec and the Cluster
// reports it converged. The fault is the whole update: f.At is the patch, f.Healed the end of the
// rollout.
func (e *Env) injectRollingUpdate(ctx context.Context, t Target, f *Fault, method mysqlv1.PrimaryUpdateMethod) error {
	watch, err := e.watchShutdowns(ctx, t)
	if err != nil {
		return err
	}
	defer watch.stop()
	stamp := time.Now().UTC().Format(time.RFC3339Nano)
	c, err := e.EditCluster(ctx, t, func(c *mysqlv1.Cluster) {
		if c.Spec.PodMetadata == nil {
			c.Spec.PodMetadata = &mysqlv1.PodMetadata{}
		}
		if c.Spec.PodMetadata.Annotations == nil {
			c.Spec.PodMetadata.Annotations = map[string]string{}
		}
		c.Spec.PodMetadata.Annotations[rolledAnnotation] = stamp
		c.Spec.PrimaryUpdateStrategy, c.Spec.PrimaryUpdateMethod = mysqlv1.PrimaryUpdateUnsupervised, method
	})
	if err != nil {
		return fmt.Errorf("changing the Pod annotations of %s: %w", t.Name, err)
	}
	f.At = time.Now()
	f.Detail = fmt.Sprintf("podMetadata annotation %s=%s, primaryUpdateMethod %s", rolledAnnotation, stamp, method)
	if err := pollUntil(ctx, RolloutTimeout, func() (bool, string, error) { return e.rolledOut(ctx, t, c.Generation) }); err != nil {
		return fmt.Errorf("the rolling update of %s: %w", t.Name, err)
	}
	now := time.Now()
	f.Healed = &now
	f.Detail += fmt.Sprintf("; rolled out in %s", now.Sub(f.At).Round(100*time.Millisecond))
	return f.recordShutdowns(e.finishShutdownWatch(ctx, t, watch))
}

// rolledOut: the Cluster is settled at generation and every instance's Pod, ready, carries the
// spec hash of the Cluster's current spec.
func (e *Env) rolledOut(ctx context.Context, t Target, generation int64) (bool, string, error) {
	c, err := e.Cluster(ctx, t)
	if err != nil {
		return false, "", err
	}
	pods, err := e.Pods(ctx, t)
	if err != nil {
		return false, "", err
	}
	if ok, why := settledAt(c, pods, generation); !ok {
		return false, why, nil
	}
	for _, pod := range pods {
		serial, ok := specs.InstanceSerial(c.Name, pod.Name)
		if !ok {
			return false, "", fmt.Errorf("pod %s is not named as an instance of %s", pod.Name, c.Name)
		}
		// The operator image is the one the Pod already runs: only the Cluster's spec changed.
		want := specs.BuildPod(c, serial, specs.PodOptions{OperatorImage: operatorImageOf(&pod)})
		if pod.Annotations[specs.PodSpecHashAnnotation] != want.Annotations[specs.PodSpecHashAnnotation] {
			return false, pod.Name + " runs an older spec", nil
		}
	}
	return true, "", nil
}

// operatorImageOf is the image of the Pod's bootstrap init container: the operator's image.
func operatorImageOf(p *corev1.Pod) string {
	for _, c := range p.Spec.InitContainers {
		if c.Name == specs.BootstrapContainerName {
			return c.Image
		}
	}
	return ""
}

package chaos

import (
	"context"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	k8sretry "k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mysqlv1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// OperatorUpgrade moves the operator's Deployment to another operator image under the load, as an
// upgrade does: the new operator updates every instance manager in place (it sends its binary,
// the instance replaces its program), so no Pod is replaced, mysqld never restarts and the
// primary stays where it is.
const OperatorUpgrade Kind = "operator-upgrade"

// Operator names the operator's Deployment and the image an upgrade moves it to.
type Operator struct {
	Namespace, Deployment string
	// ManagerContainer is the Deployment's container, ImageEnv its variable naming the image
	// instance Pods copy the manager from.
	ManagerContainer, ImageEnv string
	// NextImage is the image OperatorUpgrade moves to, NextVersion the version its binary reports.
	NextImage, NextVersion string
}

// LocalOperator is the operator as config/default installs it on the local node, and the image
// `bash hack/localcluster.sh next-operator` builds for an upgrade.
var LocalOperator = Operator{Namespace: "cloudnative-mysql-system", Deployment: "cloudnative-mysql-manager",
	ManagerContainer: "manager", ImageEnv: "OPERATOR_IMAGE_NAME", NextImage: "cloudnative-mysql/operator:next",
	NextVersion: "next"}

// SetOperatorImage points the operator's Deployment (its container image and the image instance
// Pods copy the manager from) at image, and waits until the Deployment runs it.
func (e *Env) SetOperatorImage(ctx context.Context, image string) error {
	o := e.Operator
	key := client.ObjectKey{Namespace: o.Namespace, Name: o.Deployment}
	var d appsv1.Deployment
	err := k8sretry.RetryOnConflict(k8sretry.DefaultRetry, func() error {
		if err := e.Client.Get(ctx, key, &d); err != nil {
			return err
		}
		found := false
		for i := range d.Spec.Template.Spec.Containers {
			ctr := &d.Spec.Template.Spec.Containers[i]
			if ctr.Name != o.ManagerContainer {
				continue
			}
			found, ctr.Image = true, image
			for j := range ctr.Env {
				if ctr.Env[j].Name == o.ImageEnv {
					ctr.Env[j].Value = image
				}
			}
		}
		if !found {
			return fmt.Errorf("deployment %s has no container %s", key, o.ManagerContainer)
		}
		return e.Client.Update(ctx, &d)
	})
	if err != nil {
		return fmt.Errorf("setting the operator image to %s: %w", image, err)
	}
	generation := d.Generation
	return pollUntil(ctx, 3*time.Minute, func() (bool, string, error) {
		if err := e.Client.Get(ctx, key, &d); err != nil {
			return false, "", err
		}
		want := int32(1)
		if d.Spec.Replicas != nil {
			want = *d.Spec.Replicas
		}
		st := d.Status
		return st.ObservedGeneration >= generation && st.UpdatedReplicas == want && st.AvailableReplicas == want &&
				st.Replicas == want,
			fmt.Sprintf("deployment %s: %d updated, %d available, %d in all", key, st.UpdatedReplicas, st.AvailableReplicas, st.Replicas), nil
	})
}

// injectOperatorUpgrade moves the operator to e.Operator.NextImage and waits until every instance
// reports the manager of that image (status.instanceManagers) with the Cluster settled. The fault
// is the whole upgrade: f.At is the Deployment's update, f.Healed the end of the instances'
// update. It fails unless every instance was updated in place: the same Pod, its container not
// restarted, its log showing the new program taking the running mysqld back and no mysqld start
// or shutdown.
func (e *Env) injectOperatorUpgrade(ctx context.Context, t Target, f *Fault) error {
	next, version := e.Operator.NextImage, e.Operator.NextVersion
	if next == "" || version == "" {
		return fmt.Errorf("no operator image to upgrade to (Env.Operator.NextImage, NextVersion)")
	}
	before, err := e.Pods(ctx, t)
	if err != nil {
		return err
	}
	watch, err := e.watchShutdowns(ctx, t)
	if err != nil {
		return err
	}
	defer watch.stop()
	f.At = time.Now()
	if err := e.SetOperatorImage(ctx, next); err != nil {
		return err
	}
	operatorReady := time.Since(f.At)
	runsNext := func(c *mysqlv1.Cluster, p *corev1.Pod) string {
		if m := c.Status.InstanceManagers[p.Name]; m.Version != version {
			return fmt.Sprintf("%s runs instance manager %q", p.Name, m.Version)
		}
		return ""
	}
	if err := e.untilEveryPod(ctx, t, 0, runsNext); err != nil {
		return fmt.Errorf("the instance managers' update to %s: %w", next, err)
	}
	now := time.Now()
	f.Healed = &now
	f.Detail = fmt.Sprintf("operator image %s: the operator ran it after %s, every instance manager after %s", next,
		operatorReady.Round(100*time.Millisecond), now.Sub(f.At).Round(100*time.Millisecond))
	shutdowns, err := e.finishKeptRunning(ctx, t, f, watch, before)
	if err != nil {
		return err
	}
	return updatedInPlace(shutdowns)
}

// updatedInPlace is an error unless every Pod's log showed the instance manager replaced in place.
func updatedInPlace(shutdowns []Shutdown) error {
	var bad []string
	for _, s := range shutdowns {
		if !s.InPlace {
			bad = append(bad, s.Pod)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("no in-place update of the instance manager in the log of %s", strings.Join(bad, ", "))
	}
	return nil
}

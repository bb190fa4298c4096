package cluster

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// reasonResizing is the Progressing reason while instances' CPU and memory are resized in place.
const reasonResizing = "Resizing"

// resizeRefusedAnnotation records, on a Pod, the resize the API server refused it: the resources
// asked (resizeKey) and its message. A Pod refused the resources the Cluster asks now is
// replaced instead, as a rolling update does.
const resizeRefusedAnnotation = "mysql.cloudnative-mysql.io/resize-refused"

// resizeRefusedAtAnnotation records when (RFC 3339) the resize was refused; one a ResourceQuota
// refused is asked again resizeQuotaRetry later.
const resizeRefusedAtAnnotation = "mysql.cloudnative-mysql.io/resize-refused-at"

// resizeQuotaRetry is how long a resize a ResourceQuota refused waits before it is asked again.
const resizeQuotaRetry = 5 * time.Minute

// podResize is one Pod's in-place resize: the MySQL container's new CPU and memory.
type podResize struct {
	Pod       string
	Resources corev1.ResourceRequirements
}

// planResize brings the MySQL container's CPU and memory of every instance to spec.resources in
// place, on a settled Cluster (planRollout calls it once no Pod needs replacing): one instance
// per reconcile, replicas first (highest serial first), the primary last, each through the Pod's
// resize subresource, which the kubelet applies without restarting mysqld. It waits for each
// resize to be done before the next (the Pod's PodResizePending and PodResizeInProgress
// conditions, and the resources the container reports). A resize the kubelet finds infeasible
// (the node lacks the room) waits with a Warning, for the spec or the node to change; a Pod whose
// resize the API server refused is replaced instead (the primary as primaryUpdateStrategy and
// primaryUpdateMethod say). It reports whether it decided anything.
func (d *Decision) planResize(c *v1.Cluster, o Observation, active []observedInstance) bool {
	want := specs.ResizableOf(c.Spec.Resources.Container())
	key := specs.ResizableKey(want)
	// asked: the Pod was given want (at creation or by a resize). What the API server then stored
	// may differ (a LimitRange's defaults): it is not asked again.
	asked := func(p *corev1.Pod, ctr *corev1.Container) bool {
		if k, ok := p.Annotations[specs.ResourcesAnnotation]; ok {
			return k == key
		}
		return specs.SameResizable(ctr.Resources, want)
	}
	resized := func(name string) bool {
		for _, in := range active {
			if in.Name == name {
				ctr := mysqlContainer(in.Pod)
				return ctr != nil && asked(in.Pod, ctr) && resizeState(in.Pod) == ""
			}
		}
		return false
	}
	for _, in := range updateOrder(active, c.Status.CurrentPrimary) {
		ctr := mysqlContainer(in.Pod)
		if ctr == nil {
			continue
		}
		if msg, ok := strings.CutPrefix(in.Pod.Annotations[resizeRefusedAnnotation], key+"|"); ok && !asked(in.Pod, ctr) {
			if strings.Contains(msg, "exceeded quota") {
				// A new Pod would be refused by the same quota: nothing is replaced, and the resize
				// is asked again every resizeQuotaRetry, for the quota may have grown.
				at, err := time.Parse(time.RFC3339, in.Pod.Annotations[resizeRefusedAtAnnotation])
				if err == nil && o.Now.Before(at.Add(resizeQuotaRetry)) {
					d.Rollout = &rolloutWait{reasonResizing, "resizing " + in.Name + " in place waits: a ResourceQuota refuses it: " + msg}
					return true
				}
				d.ResizePods = append(d.ResizePods, podResize{Pod: in.Name, Resources: want})
				d.Rollout = &rolloutWait{reasonResizing, fmt.Sprintf("resizing %s in place to %s; mysqld keeps running", in.Name, key)}
				return true
			}
			d.replaceForResize(c, o, active, in, msg, resized)
			return true
		}
		if !asked(in.Pod, ctr) {
			d.ResizePods = append(d.ResizePods, podResize{Pod: in.Name, Resources: want})
			d.Rollout = &rolloutWait{reasonResizing, fmt.Sprintf("resizing %s in place to %s; mysqld keeps running", in.Name, key)}
			d.event(stepResize, evInstanceResizing.With(in.Name, key))
			return true
		}
		state := resizeState(in.Pod)
		if state == "" {
			continue
		}
		msg := "resizing " + in.Name + " in place: " + state
		if prev := meta.FindStatusCondition(o.Cluster.Status.Conditions, v1.ConditionProgressing); strings.HasPrefix(state, "infeasible") &&
			(prev == nil || prev.Message != msg) {
			d.event(stepStatus, evResizeInfeasible.With(in.Name, state))
		}
		d.Rollout = &rolloutWait{reasonResizing, msg}
		return true
	}
	return false
}

// replaceForResize replaces the Pod of in, whose resize the API server refused: its new Pod has
// the new resources. A replica goes as in a rolling update; the primary as the primary of a
// rolling update does, once every replica has the new resources.
func (d *Decision) replaceForResize(c *v1.Cluster, o Observation, active []observedInstance, in observedInstance, why string,
	resized func(string) bool) {
	if in.Name == c.Status.CurrentPrimary {
		if len(active) > 1 {
			d.planPrimaryUpdate(c, o, in, resized)
		} else {
			d.planPrimaryRestart(c, o, in)
		}
		return
	}
	if d.replaceReplica(c, o, active, in) {
		d.event(stepDeletePods, evResizeReplacing.With(in.Name, why))
	}
}

// resizeState says where the kubelet is with a Pod's last resize, "" when it is done (or the
// kubelet reports nothing of it).
func resizeState(p *corev1.Pod) string {
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodResizePending && cond.Status == corev1.ConditionTrue {
			if cond.Reason == corev1.PodReasonInfeasible {
				return "infeasible on its node: " + cond.Message
			}
			return "deferred by the kubelet: " + cond.Message
		}
	}
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodResizeInProgress && cond.Status == corev1.ConditionTrue {
			if cond.Reason != "" {
				return "in progress (" + cond.Reason + ": " + cond.Message + ")"
			}
			return "in progress"
		}
	}
	ctr := mysqlContainer(p)
	for _, cs := range p.Status.ContainerStatuses {
		if ctr != nil && cs.Name == ctr.Name && cs.Resources != nil && !specs.SameResizable(*cs.Resources, ctr.Resources) {
			return "the container does not run the new resources yet"
		}
	}
	return ""
}

// mysqlContainer is the Pod's MySQL container, nil when it has none.
func mysqlContainer(p *corev1.Pod) *corev1.Container {
	if p == nil {
		return nil
	}
	for i := range p.Spec.Containers {
		if p.Spec.Containers[i].Name == specs.MySQLContainerName {
			return &p.Spec.Containers[i]
		}
	}
	return nil
}

// updateOrder is the order in which instances are updated in place: replicas first, highest
// serial first, the primary last.
func updateOrder(active []observedInstance, primary string) []observedInstance {
	order := make([]observedInstance, 0, len(active))
	for i := len(active) - 1; i >= 0; i-- {
		if active[i].Name != primary {
			order = append(order, active[i])
		}
	}
	for _, in := range active {
		if in.Name == primary {
			order = append(order, in)
		}
	}
	return order
}

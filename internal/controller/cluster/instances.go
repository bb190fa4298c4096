package cluster

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/instances"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// observedInstance is one instance as observed: its serial, its PVC and its Pod (either may be
// missing).
type observedInstance struct {
	Name   string
	Serial int32
	PVC    *corev1.PersistentVolumeClaim
	Pod    *corev1.Pod
}

// indexInstances groups the Cluster's PVCs and Pods by instance. Active instances are those with
// a PVC not detached by a scale-down, in ascending serial order; maxSerial is the highest serial
// any PVC or Pod carries, detached ones included, so a serial is never handed out twice.
func indexInstances(c *v1.Cluster, pvcs []corev1.PersistentVolumeClaim, pods []corev1.Pod) (active []observedInstance, maxSerial int32) {
	bySerial := map[int32]*observedInstance{}
	get := func(name string) *observedInstance {
		serial, ok := specs.InstanceSerial(c.Name, name)
		if !ok {
			return nil
		}
		maxSerial = max(maxSerial, serial)
		if bySerial[serial] == nil {
			bySerial[serial] = &observedInstance{Name: name, Serial: serial}
		}
		return bySerial[serial]
	}
	for i := range pvcs {
		if in := get(pvcs[i].Name); in != nil {
			in.PVC = &pvcs[i]
		}
	}
	for i := range pods {
		if in := get(pods[i].Name); in != nil {
			in.Pod = &pods[i]
		}
	}
	for _, in := range bySerial {
		if in.PVC != nil && in.PVC.Annotations[specs.DetachedAnnotation] == "" {
			active = append(active, *in)
		}
	}
	slices.SortFunc(active, func(a, b observedInstance) int { return int(a.Serial - b.Serial) })
	return active, maxSerial
}

// allPodsReady reports whether every active instance has a ready Pod.
func allPodsReady(active []observedInstance) bool {
	for _, in := range active {
		if !instances.PodReady(in.Pod) {
			return false
		}
	}
	return true
}

// scaleDownVictim is the instance a scale-down removes: the highest serial that is neither the
// current nor the target primary. ok is false when none qualifies.
func scaleDownVictim(c *v1.Cluster, active []observedInstance) (victim observedInstance, ok bool) {
	for i := len(active) - 1; i >= 0; i-- {
		name := active[i].Name
		if name != c.Status.CurrentPrimary && name != c.Status.TargetPrimary {
			return active[i], true
		}
	}
	return observedInstance{}, false
}

// podsOnDetachedPVCs lists the live Pods whose PVC carries the detached annotation.
func podsOnDetachedPVCs(pvcs []corev1.PersistentVolumeClaim, pods []corev1.Pod) []string {
	var out []string
	for _, pvc := range pvcs {
		if pvc.Annotations[specs.DetachedAnnotation] == "" {
			continue
		}
		for _, p := range pods {
			if p.Name == pvc.Name && p.DeletionTimestamp == nil {
				out = append(out, p.Name)
			}
		}
	}
	return out
}

// detachedPVCsToDelete lists, under storage.whenScaledDown Delete, the PVCs a scale-down detached
// under that policy too, whose Pod is gone and that are not being deleted already.
func detachedPVCsToDelete(c *v1.Cluster, pvcs []corev1.PersistentVolumeClaim, pods []corev1.Pod) []string {
	if c.Spec.Storage.WhenScaledDown != v1.PVCDelete {
		return nil
	}
	var out []string
	for _, pvc := range pvcs {
		if pvc.Annotations[specs.DetachedAnnotation] == "" || pvc.Annotations[specs.DeleteWhenDetachedAnnotation] != "true" ||
			pvc.DeletionTimestamp != nil ||
			slices.ContainsFunc(pods, func(p corev1.Pod) bool { return p.Name == pvc.Name }) {
			continue
		}
		out = append(out, pvc.Name)
	}
	return out
}

// planScaleUp recreates the Pods of active instances that lost theirs, and adds one new instance
// when fewer exist than asked and every existing one is ready (replicas join one at a time).
func (d *Decision) planScaleUp(c *v1.Cluster, o Observation, active []observedInstance) []observedInstance {
	missing := false
	for _, in := range active {
		if in.Pod == nil && in.PVC.DeletionTimestamp == nil && in.Name != d.Failover.HoldPod {
			if d.refuseForeignInstance(c, o, in.Name) {
				continue
			}
			d.CreatePods = append(d.CreatePods, specs.BuildPod(c, in.Serial, specs.PodOptions{OperatorImage: o.OperatorImage}))
			d.event(stepCreate, evPodRecreated.With(in.Name))
			missing = true
		}
	}
	noPrimary := len(active) > 0 && c.Status.TargetPrimary == ""
	if missing || noPrimary || int32(len(active)) >= c.Spec.Instances || !allPodsReady(active) {
		return active
	}
	serial := c.Status.LatestGeneratedNode + 1
	if d.refuseForeignInstance(c, o, specs.InstanceName(c.Name, serial)) {
		return active // the serial stays free until the foreign objects are gone
	}
	c.Status.LatestGeneratedNode = serial
	pvc := specs.BuildPVC(c, serial)
	d.CreatePVCs = append(d.CreatePVCs, pvc)
	d.CreatePods = append(d.CreatePods, specs.BuildPod(c, serial, specs.PodOptions{OperatorImage: o.OperatorImage}))
	d.event(stepCreate, evInstanceCreated.With(pvc.Name))
	return append(active, observedInstance{Name: pvc.Name, Serial: serial, PVC: pvc})
}

// planScaleDown removes one instance per reconcile while more exist than asked, never the current
// or target primary. Its PVC is kept. A replica that acknowledges commits hands that over first,
// and goes only while the others acknowledge the primary, as in a rolling update.
func (d *Decision) planScaleDown(c *v1.Cluster, o Observation, active []observedInstance) []observedInstance {
	if int32(len(active)) <= c.Spec.Instances {
		return active
	}
	victim, ok := scaleDownVictim(c, active)
	if !ok {
		return active // reported by the Degraded condition and its Event
	}
	d.leaving = victim.Name
	if to := d.acknowledgementsToHandOver(o); to != "" {
		d.ScaleDownWait = "handing the semi-sync acknowledgements of " + victim.Name + " over to " + to + " before removing it"
		return active
	}
	if why := semiSyncUncoveredWithout(c, o, active, victim.Name); why != "" {
		d.ScaleDownWait = "removing " + victim.Name + " once commits do not need it: " + why
		return active
	}
	d.Detach = victim.Name
	d.event(stepDetach, evInstanceRemoved.With(victim.Name))
	out := make([]observedInstance, 0, len(active)-1)
	for _, in := range active {
		if in.Name != victim.Name {
			out = append(out, in)
		}
	}
	return out
}

// setPodRole labels a new Pod with the role and routability the status gives its instance.
func setPodRole(c *v1.Cluster, pod *corev1.Pod) {
	role, routable := specs.InstanceRole(c, pod.Name), specs.InstanceRoutable(c, pod.Name)
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	// The Pod's other labels (the Cluster's podMetadata) stay.
	delete(pod.Labels, v1.RoleLabel)
	delete(pod.Labels, v1.RoutableLabel)
	maps.Copy(pod.Labels, specs.InstanceLabels(c.Name, pod.Name, role, routable))
}

package cluster

import (
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

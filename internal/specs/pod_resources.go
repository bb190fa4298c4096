package specs

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// ResourcesAnnotation records, on an instance Pod, the CPU and memory the operator last asked for
// its MySQL container (ResizableKey): at creation, then at each resize. The Pod's own resources
// may differ from them (a LimitRange's defaults), and are not asked again.
const ResourcesAnnotation = "mysql.cloudnative-mysql.io/resources"

// ResizableKey writes the CPU and memory of r (as ResizableOf gives them) as a stable, readable
// key: "requests cpu=1, memory=1Gi; limits memory=2Gi".
func ResizableKey(r corev1.ResourceRequirements) string {
	list := func(l corev1.ResourceList) string {
		var parts []string
		for name, q := range l {
			parts = append(parts, string(name)+"="+q.String())
		}
		sort.Strings(parts)
		if len(parts) == 0 {
			return "none"
		}
		return strings.Join(parts, ", ")
	}
	r = ResizableOf(r)
	return "requests " + list(r.Requests) + "; limits " + list(r.Limits)
}

// KeyAsks reports whether key (ResizableKey) asks for resource name in section ("requests" or
// "limits").
func KeyAsks(key, section string, name corev1.ResourceName) bool {
	for _, part := range strings.Split(key, "; ") {
		list, ok := strings.CutPrefix(part, section+" ")
		if !ok {
			continue
		}
		for _, item := range strings.Split(list, ", ") {
			if k, _, _ := strings.Cut(item, "="); k == string(name) {
				return true
			}
		}
	}
	return false
}

// ResizableResources are the MySQL container's resources that a running Pod takes in place (the
// pods/resize subresource), mysqld left running: a change of them replaces no Pod.
var ResizableResources = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}

// mysqlResizePolicy lets the kubelet resize the MySQL container's CPU and memory without
// restarting it (mysqld takes a new cgroup limit as it runs; innodb_buffer_pool_size is a
// parameter of its own).
func mysqlResizePolicy() []corev1.ContainerResizePolicy {
	out := make([]corev1.ContainerResizePolicy, 0, len(ResizableResources))
	for _, r := range ResizableResources {
		out = append(out, corev1.ContainerResizePolicy{ResourceName: r, RestartPolicy: corev1.NotRequired})
	}
	return out
}

// withoutResizable is r without the ResizableResources.
func withoutResizable(r corev1.ResourceRequirements) corev1.ResourceRequirements {
	out := corev1.ResourceRequirements{Claims: r.Claims}
	for _, pair := range []struct{ from, to *corev1.ResourceList }{{&r.Requests, &out.Requests}, {&r.Limits, &out.Limits}} {
		for name, q := range *pair.from {
			if !isResizable(name) {
				if *pair.to == nil {
					*pair.to = corev1.ResourceList{}
				}
				(*pair.to)[name] = q
			}
		}
	}
	return out
}

func isResizable(name corev1.ResourceName) bool {
	for _, r := range ResizableResources {
		if r == name {
			return true
		}
	}
	return false
}

// ResizableOf is the ResizableResources part of r as the API server stores it in a Pod (a request
// left out defaults to its limit): what a resize patch sets, and what a resized Pod then asks.
func ResizableOf(r corev1.ResourceRequirements) corev1.ResourceRequirements {
	out := corev1.ResourceRequirements{}
	defer func() {
		for name, q := range out.Limits {
			if _, ok := out.Requests[name]; !ok {
				if out.Requests == nil {
					out.Requests = corev1.ResourceList{}
				}
				out.Requests[name] = q
			}
		}
	}()
	for _, pair := range []struct{ from, to *corev1.ResourceList }{{&r.Requests, &out.Requests}, {&r.Limits, &out.Limits}} {
		for name, q := range *pair.from {
			if isResizable(name) {
				if *pair.to == nil {
					*pair.to = corev1.ResourceList{}
				}
				(*pair.to)[name] = q
			}
		}
	}
	return out
}

// SameResizable reports whether a and b ask the same CPU and memory (requests and limits).
func SameResizable(a, b corev1.ResourceRequirements) bool {
	same := func(x, y corev1.ResourceList) bool {
		for _, name := range ResizableResources {
			qx, okx := x[name]
			qy, oky := y[name]
			if okx != oky || (okx && qx.Cmp(qy) != 0) {
				return false
			}
		}
		return true
	}
	return same(a.Requests, b.Requests) && same(a.Limits, b.Limits)
}

// PodQOSClass is the QoS class Kubernetes gives a Pod of spec: Guaranteed when every container
// (init containers too) sets CPU and memory limits and its requests equal them, BestEffort when
// none sets a CPU or memory request or limit, Burstable otherwise. A request left out defaults to
// the limit, as the API server defaults it.
func PodQOSClass(spec *corev1.PodSpec) corev1.PodQOSClass {
	guaranteed, any := true, false
	for _, c := range append(append([]corev1.Container(nil), spec.InitContainers...), spec.Containers...) {
		for _, name := range ResizableResources {
			// Zero quantities count as unset, as Kubernetes counts them.
			limit, hasLimit := c.Resources.Limits[name]
			hasLimit = hasLimit && !limit.IsZero()
			request, hasRequest := c.Resources.Requests[name]
			hasRequest = hasRequest && !request.IsZero()
			if hasLimit || hasRequest {
				any = true
			}
			if !hasRequest {
				request = limit
			}
			if !hasLimit || limit.IsZero() || request.Cmp(limit) != 0 {
				guaranteed = false
			}
		}
	}
	switch {
	case !any:
		return corev1.PodQOSBestEffort
	case guaranteed:
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}

package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// resizePods asks the resize subresource of each Pod of resizes for its MySQL container's new
// CPU and memory (stepResize). A resize the API server refuses (invalid, forbidden: a change the
// kubelet cannot make in place) is recorded on the Pod (resizeRefusedAnnotation), so that the
// next reconcile replaces it instead; any other failure is logged and tried again. It never fails
// act.
func (r *Reconciler) resizePods(ctx context.Context, o *Observation, resizes []podResize) []kit.Event {
	var events []kit.Event
	for _, rz := range resizes {
		var pod *corev1.Pod
		for i := range o.Pods {
			if o.Pods[i].Name == rz.Pod {
				pod = &o.Pods[i]
			}
		}
		ctr := mysqlContainer(pod)
		if ctr == nil {
			continue
		}
		patch, err := resizePatch(ctr.Resources, rz.Resources, pod.Annotations[specs.ResourcesAnnotation])
		if err != nil {
			continue
		}
		err = r.Client.SubResource("resize").Patch(ctx, pod.DeepCopy(), client.RawPatch(types.StrategicMergePatchType, patch))
		key := specs.ResizableKey(rz.Resources)
		switch {
		case err == nil:
			// What the API server stored may differ from what was asked (a LimitRange's
			// defaults): the Pod records what was asked, so it is not asked again.
			// A refusal recorded before (a quota since raised) is over.
			if err := r.annotatePod(ctx, pod, map[string]string{specs.ResourcesAnnotation: key,
				resizeRefusedAnnotation: "", resizeRefusedAtAnnotation: ""}); err != nil {
				log.FromContext(ctx).Info("recording a resize on its Pod failed; it is asked again", "pod", rz.Pod, "error", err.Error())
			}
		case apierrors.IsNotFound(err) && r.podGone(ctx, pod):
			// Deleted meanwhile: its replacement is built with the new resources.
		case apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err) ||
			apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err):
			// Refused, or no resize subresource (a Kubernetes without in-place resize): the Pod
			// is replaced instead.
			msg := clipMessage(err.Error())
			events = append(events, evResizeRefused.With(rz.Pod, msg))
			if err := r.annotatePod(ctx, pod, map[string]string{resizeRefusedAnnotation: key + "|" + msg,
				resizeRefusedAtAnnotation: r.Clock.Now().UTC().Format(time.RFC3339)}); err != nil {
				log.FromContext(ctx).Info("recording a refused resize on its Pod failed; it is asked again", "pod", rz.Pod, "error", err.Error())
			}
		default:
			log.FromContext(ctx).Info("resizing an instance in place failed; it is asked again", "pod", rz.Pod, "error", err.Error())
		}
	}
	return events
}

// resizePatch is the strategic merge patch that gives the MySQL container the CPU and memory of
// want: each of them set, or removed (null) when want leaves out one cur has that the operator
// asked for before (askedKey, the Pod's specs.ResourcesAnnotation; without it, any): one the API
// server added (a LimitRange's default) is left as it is.
func resizePatch(cur, want corev1.ResourceRequirements, askedKey string) ([]byte, error) {
	list := func(section string, cur, want corev1.ResourceList) map[string]any {
		out := map[string]any{}
		for _, name := range specs.ResizableResources {
			if q, ok := want[name]; ok {
				out[string(name)] = q.String()
			} else if _, had := cur[name]; had && (askedKey == "" || specs.KeyAsks(askedKey, section, name)) {
				out[string(name)] = nil
			}
		}
		return out
	}
	patch := map[string]any{"spec": map[string]any{"containers": []any{map[string]any{
		"name": specs.MySQLContainerName,
		"resources": map[string]any{
			"requests": list("requests", cur.Requests, want.Requests),
			"limits":   list("limits", cur.Limits, want.Limits),
		},
	}}}}
	data, err := json.Marshal(patch)
	if err != nil {
		return nil, fmt.Errorf("encoding the resize: %w", err)
	}
	return data, nil
}

// podGone reports whether pod no longer exists (read from the API server).
func (r *Reconciler) podGone(ctx context.Context, pod *corev1.Pod) bool {
	reader := client.Reader(r.Client)
	if r.APIReader != nil {
		reader = r.APIReader
	}
	var cur corev1.Pod
	err := reader.Get(ctx, client.ObjectKeyFromObject(pod), &cur)
	return apierrors.IsNotFound(err) || (err == nil && cur.UID != pod.UID)
}

// annotatePod sets annotations of pod; an empty value removes the annotation.
func (r *Reconciler) annotatePod(ctx context.Context, pod *corev1.Pod, annotations map[string]string) error {
	base := client.MergeFrom(pod.DeepCopy())
	next := pod.DeepCopy()
	if next.Annotations == nil {
		next.Annotations = map[string]string{}
	}
	for k, v := range annotations {
		if v == "" {
			delete(next.Annotations, k)
		} else {
			next.Annotations[k] = v
		}
	}
	return r.Client.Patch(ctx, next, base)
}

package cluster

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// Storage growth: raising spec.storage.size expands every instance's PVC when its StorageClass
// allows it (allowVolumeExpansion), all of them or none. The external resizer and the kubelet do
// the growing; the StorageResized condition follows each PVC's status until its capacity reaches
// the size. A size below the volumes' is not applied (a volume cannot be made smaller): the
// condition says so, and new instances get the volumes' size (largestRequest). It is not refused at
// admission, so that a growth the StorageClass refused can be taken back.

// Reasons of the StorageResized condition.
const (
	reasonStorageResized         = "Resized"
	reasonStorageResizing        = "Resizing"
	reasonExpansionNotSupported  = "ExpansionNotSupported"
	reasonStorageExpansionFailed = "ExpansionFailed"
	reasonShrinkNotSupported     = "ShrinkNotSupported"
)

// storagePlan is what storage growth does in one reconcile: the PVCs whose request to raise to
// storage.size, and the condition that says how far the growth is.
type storagePlan struct {
	Expand    []string
	Condition metav1.Condition
}

// planStorage decides storage growth from the instances' PVCs and the StorageClasses of those
// below size (classes: by name; a nil value is a class that does not exist). Every PVC is grown,
// or none: one whose class cannot expand stops the growth of all, so the instances never end
// with volumes of different sizes because of a half-applied change.
func planStorage(size resource.Quantity, active []observedInstance, classes map[string]*storagev1.StorageClass, now time.Time) storagePlan {
	largest := largestRequest(active)
	if largest.Cmp(size) > 0 {
		return storagePlan{Condition: metav1.Condition{Type: v1.ConditionStorageResized, Status: metav1.ConditionFalse,
			Reason: reasonShrinkNotSupported, Message: fmt.Sprintf("storage.size %s is below %s, the largest volume's: a volume "+
				"cannot be made smaller, so no volume changes and new instances get %s; set storage.size to %s or more",
				size.String(), largest.String(), largest.String(), largest.String())}}
	}
	var expand, refused, failed, growing, unbound []string
	for _, in := range active {
		pvc := in.PVC
		if pvc == nil || pvc.DeletionTimestamp != nil {
			continue
		}
		requested := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
		bound := pvc.Status.Phase == corev1.ClaimBound
		if requested.Cmp(size) < 0 {
			switch why, refusal := cannotExpand(pvc, classes), recentlyRefused(pvc, size, now); {
			case why != "":
				refused = append(refused, why)
			case refusal != "":
				failed = append(failed, pvc.Name+": "+refusal)
			case !bound:
				// The API server lets a claim's request grow only once it is bound.
				unbound = append(unbound, pvc.Name+" waits to be bound before it grows")
			default:
				expand = append(expand, pvc.Name)
			}
			continue
		}
		if !bound {
			continue // provisioned at the size it asks for
		}
		capacity := pvc.Status.Capacity[corev1.ResourceStorage]
		if capacity.Cmp(size) >= 0 {
			continue
		}
		if why := resizeFailure(pvc); why != "" {
			failed = append(failed, fmt.Sprintf("%s: %s", pvc.Name, why))
		} else {
			growing = append(growing, fmt.Sprintf("%s %s of %s%s", pvc.Name, capacity.String(), size.String(), resizeStep(pvc)))
		}
	}
	cond := metav1.Condition{Type: v1.ConditionStorageResized, Status: metav1.ConditionTrue, Reason: reasonStorageResized,
		Message: "every instance's volume has storage.size " + size.String()}
	switch {
	case len(refused) > 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, reasonExpansionNotSupported
		cond.Message = fmt.Sprintf("storage.size %s is not applied to the existing volumes, none was asked to grow: %s. "+
			"Set allowVolumeExpansion: true on the StorageClass, or set storage.size back to the volumes' %s",
			size.String(), strings.Join(refused, "; "), largest.String())
		expand = nil
	case len(failed) > 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, reasonStorageExpansionFailed
		cond.Message = "the volume expansion failed: " + strings.Join(failed, "; ")
	case len(expand) > 0 || len(growing) > 0 || len(unbound) > 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, reasonStorageResizing
		parts := append(slices.Clone(growing), unbound...)
		for _, name := range expand {
			parts = append(parts, name+" to be asked to grow to "+size.String())
		}
		cond.Message = "growing the volumes to " + size.String() + ": " + strings.Join(parts, "; ") +
			" (a PVC the API server refuses to grow is reported as VolumeExpansionFailed)"
	}
	return storagePlan{Expand: expand, Condition: cond}
}

// ExpansionRefusedAnnotation records on a PVC that the API server refused to grow it (a quota,
// say): "<size>|<time>|<reason>". The PVC is not asked again for that size until
// expansionRetryDelay has passed, so that a lasting refusal is one Warning, not one per reconcile.
const ExpansionRefusedAnnotation = "mysql.cloudnative-mysql.io/expansion-refused"

// expansionRetryDelay is how long a refused growth waits before it is asked again.
const expansionRetryDelay = 5 * time.Minute

// recentlyRefused is the reason the API server gave, less than expansionRetryDelay ago, for not
// growing pvc to size; empty when it did not.
func recentlyRefused(pvc *corev1.PersistentVolumeClaim, size resource.Quantity, now time.Time) string {
	parts := strings.SplitN(pvc.Annotations[ExpansionRefusedAnnotation], "|", 3)
	if len(parts) != 3 {
		return ""
	}
	at, err := time.Parse(time.RFC3339, parts[1])
	if q, qerr := resource.ParseQuantity(parts[0]); qerr != nil || err != nil || q.Cmp(size) != 0 || now.Sub(at) >= expansionRetryDelay {
		return ""
	}
	return fmt.Sprintf("the API server refused to grow it to %s: %s (asked again at %s)", size.String(), parts[2],
		at.Add(expansionRetryDelay).UTC().Format(time.RFC3339))
}

// largestRequest is the largest storage request of the active instances' PVCs (zero when none).
func largestRequest(active []observedInstance) resource.Quantity {
	var out resource.Quantity
	for _, in := range active {
		if in.PVC == nil || in.PVC.DeletionTimestamp != nil {
			continue
		}
		if q := in.PVC.Spec.Resources.Requests[corev1.ResourceStorage]; q.Cmp(out) > 0 {
			out = q.DeepCopy()
		}
	}
	return out
}

// cannotExpand says why pvc's StorageClass cannot grow it, empty when it can.
func cannotExpand(pvc *corev1.PersistentVolumeClaim, classes map[string]*storagev1.StorageClass) string {
	name := ""
	if pvc.Spec.StorageClassName != nil {
		name = *pvc.Spec.StorageClassName
	}
	if name == "" {
		return fmt.Sprintf("PVC %s has no StorageClass, so nothing can expand it", pvc.Name)
	}
	sc, ok := classes[name]
	switch {
	case !ok:
		return fmt.Sprintf("StorageClass %s of PVC %s could not be read (the operator needs get on storageclasses)", name, pvc.Name)
	case sc == nil:
		return fmt.Sprintf("StorageClass %s of PVC %s does not exist", name, pvc.Name)
	case sc.AllowVolumeExpansion == nil || !*sc.AllowVolumeExpansion:
		return fmt.Sprintf("StorageClass %s of PVC %s does not allow volume expansion (allowVolumeExpansion is not true)", name, pvc.Name)
	}
	return ""
}

// resizeFailure is what a PVC's status says about an expansion that cannot finish: the
// resizer's or the kubelet's infeasible state, empty when none.
func resizeFailure(pvc *corev1.PersistentVolumeClaim) string {
	switch pvc.Status.AllocatedResourceStatuses[corev1.ResourceStorage] {
	case corev1.PersistentVolumeClaimControllerResizeInfeasible:
		return "the storage provider refused the new size" + conditionMessage(pvc, corev1.PersistentVolumeClaimControllerResizeError)
	case corev1.PersistentVolumeClaimNodeResizeInfeasible:
		return "the node could not grow the file system" + conditionMessage(pvc, corev1.PersistentVolumeClaimNodeResizeError)
	}
	return ""
}

// resizeStep names the step of a running expansion, from the PVC's status.
func resizeStep(pvc *corev1.PersistentVolumeClaim) string {
	switch pvc.Status.AllocatedResourceStatuses[corev1.ResourceStorage] {
	case corev1.PersistentVolumeClaimNodeResizePending, corev1.PersistentVolumeClaimNodeResizeInProgress:
		return " (the node grows the file system)"
	}
	for _, c := range pvc.Status.Conditions {
		if c.Type == corev1.PersistentVolumeClaimFileSystemResizePending && c.Status == corev1.ConditionTrue {
			return " (the node grows the file system)"
		}
	}
	return " (the storage provider grows the volume)"
}

func conditionMessage(pvc *corev1.PersistentVolumeClaim, t corev1.PersistentVolumeClaimConditionType) string {
	for _, c := range pvc.Status.Conditions {
		if c.Type == t && c.Message != "" {
			return ": " + c.Message
		}
	}
	return ""
}

// storageEvent is the Event of StorageResized changing reason: a Warning when the growth is
// refused or failed, Normal when every volume reached the size after a growth.
func storageEvent(old []metav1.Condition, st v1.ClusterStatus) (kit.Event, bool) {
	n := meta.FindStatusCondition(st.Conditions, v1.ConditionStorageResized)
	o := meta.FindStatusCondition(old, v1.ConditionStorageResized)
	// By reason only: a failure's message carries the provider's error text, which may change at
	// every retry (request IDs), and one Warning per failure is enough.
	if n == nil || (o != nil && o.Reason == n.Reason) {
		return kit.Event{}, false
	}
	switch n.Reason {
	case reasonExpansionNotSupported, reasonStorageExpansionFailed, reasonShrinkNotSupported:
		return evStorageNotResized.With(n.Message), true
	case reasonStorageResized:
		if o != nil && o.Reason != reasonStorageResized {
			return evStorageResized.With(n.Message), true
		}
	}
	return kit.Event{}, false
}

// classesToRead are the StorageClasses of the active PVCs asking for less than storage.size.
func classesToRead(c *v1.Cluster, pvcs []corev1.PersistentVolumeClaim) []string {
	var out []string
	for _, pvc := range pvcs {
		requested := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
		if pvc.Annotations[specs.DetachedAnnotation] != "" || requested.Cmp(c.Spec.Storage.Size) >= 0 ||
			pvc.Spec.StorageClassName == nil || *pvc.Spec.StorageClassName == "" {
			continue
		}
		if !slices.Contains(out, *pvc.Spec.StorageClassName) {
			out = append(out, *pvc.Spec.StorageClassName)
		}
	}
	return out
}

// readStorageClasses reads the StorageClasses classesToRead names, from the API server (the
// operator reads a class only while a growth is pending; it keeps no cache of them).
func (r *Reconciler) readStorageClasses(ctx context.Context, c *v1.Cluster, pvcs []corev1.PersistentVolumeClaim) (map[string]*storagev1.StorageClass, error) {
	names := classesToRead(c, pvcs)
	if len(names) == 0 {
		return nil, nil
	}
	out := make(map[string]*storagev1.StorageClass, len(names))
	for _, name := range names {
		sc := &storagev1.StorageClass{}
		err := r.APIReader.Get(ctx, client.ObjectKey{Name: name}, sc)
		switch {
		case apierrors.IsNotFound(err):
			out[name] = nil
		case apierrors.IsForbidden(err):
			// An operator installed for some namespaces only may not read cluster-scoped
			// objects: the growth is refused with that reason (cannotExpand).
			log.FromContext(ctx).Info("may not read StorageClass", "storageClass", name, "error", err.Error())
		case err != nil:
			return nil, fmt.Errorf("reading StorageClass %s: %w", name, err)
		default:
			out[name] = sc
		}
	}
	return out, nil
}

// expandPVCs raises the storage request of each PVC named to storage.size. It is the last step of
// act and never fails it: a PVC the API server refuses to grow (a quota, say) is reported as a
// Warning, and the next reconcile asks again. The patch carries no optimistic lock: it changes
// only the storage request, which nobody else writes.
func (r *Reconciler) expandPVCs(ctx context.Context, o *Observation, names []string) ([]kit.Event, error) {
	size := o.Cluster.Spec.Storage.Size
	var events []kit.Event
	for _, name := range names {
		i := slices.IndexFunc(o.PVCs, func(p corev1.PersistentVolumeClaim) bool { return p.Name == name })
		if i < 0 {
			continue
		}
		pvc := o.PVCs[i].DeepCopy()
		old := pvc.DeepCopy()
		from := old.Spec.Resources.Requests[corev1.ResourceStorage]
		if pvc.Spec.Resources.Requests == nil {
			pvc.Spec.Resources.Requests = corev1.ResourceList{}
		}
		pvc.Spec.Resources.Requests[corev1.ResourceStorage] = size.DeepCopy()
		if err := r.Client.Patch(ctx, pvc, client.MergeFrom(old)); err != nil {
			log.FromContext(ctx).Error(err, "expanding PVC", "pvc", name, "to", size.String())
			events = append(events, evVolumeExpansionFailed.With(name, size.String(), err.Error()))
			r.recordExpansionRefused(ctx, old, size, o.Now, err)
			continue
		}
		log.FromContext(ctx).Info("expanding PVC", "pvc", name, "from", from.String(), "to", size.String())
		events = append(events, evVolumeExpanding.With(name, from.String(), size.String()))
	}
	return events, nil
}

// recordExpansionRefused annotates pvc with the API server's refusal to grow it
// (ExpansionRefusedAnnotation); best effort: without it the next reconcile asks again.
func (r *Reconciler) recordExpansionRefused(ctx context.Context, pvc *corev1.PersistentVolumeClaim, size resource.Quantity, now time.Time, refusal error) {
	next := pvc.DeepCopy()
	if next.Annotations == nil {
		next.Annotations = map[string]string{}
	}
	msg := strings.ReplaceAll(refusal.Error(), "|", "/")
	if len(msg) > 512 {
		msg = msg[:512] + "…"
	}
	next.Annotations[ExpansionRefusedAnnotation] = size.String() + "|" + now.UTC().Format(time.RFC3339) + "|" + msg
	if err := r.Client.Patch(ctx, next, client.MergeFrom(pvc)); err != nil {
		log.FromContext(ctx).Error(err, "recording a refused growth on the PVC", "pvc", pvc.Name)
	}
}

package cluster

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// storagePVC is an instance PVC of class asking for requested, bound with capacity (unbound when
// capacity is empty).
func storagePVC(name, class, requested, capacity string) *corev1.PersistentVolumeClaim {
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if class != "" {
		pvc.Spec.StorageClassName = &class
	}
	pvc.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(requested)}
	if capacity != "" {
		pvc.Status.Phase = corev1.ClaimBound
		pvc.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(capacity)}
	}
	return pvc
}

// refusedAt records on p that the API server refused to grow it to size at.
func refusedAt(p *corev1.PersistentVolumeClaim, size string, at time.Time) *corev1.PersistentVolumeClaim {
	p.Annotations = map[string]string{ExpansionRefusedAnnotation: size + "|" + at.UTC().Format(time.RFC3339) + "|exceeded quota"}
	return p
}

func TestPlanStorage(t *testing.T) {
	yes, no := true, false
	classes := map[string]*storagev1.StorageClass{
		"expandable": {ObjectMeta: metav1.ObjectMeta{Name: "expandable"}, AllowVolumeExpansion: &yes},
		"fixed":      {ObjectMeta: metav1.ObjectMeta{Name: "fixed"}, AllowVolumeExpansion: &no},
		"unset":      {ObjectMeta: metav1.ObjectMeta{Name: "unset"}},
		"gone":       nil,
	}
	inst := func(pvcs ...*corev1.PersistentVolumeClaim) []observedInstance {
		out := make([]observedInstance, len(pvcs))
		for i, p := range pvcs {
			out[i] = observedInstance{Name: p.Name, PVC: p}
		}
		return out
	}
	withStatus := func(p *corev1.PersistentVolumeClaim, f func(*corev1.PersistentVolumeClaimStatus)) *corev1.PersistentVolumeClaim {
		f(&p.Status)
		return p
	}
	for _, tc := range []struct {
		rule       string
		size       string
		active     []observedInstance
		wantExpand []string
		reason     string
		message    string
	}{
		{"volumes at the size are resized", "1Gi",
			inst(storagePVC("db-1", "fixed", "1Gi", "1Gi"), storagePVC("db-2", "fixed", "1Gi", "1Gi")),
			nil, reasonStorageResized, "every instance's volume has storage.size 1Gi"},
		{"a provider that gave more than asked counts as resized", "1Gi",
			inst(storagePVC("db-1", "fixed", "1Gi", "2Gi")), nil, reasonStorageResized, ""},
		{"a raised size grows every PVC of an expandable class", "2Gi",
			inst(storagePVC("db-1", "expandable", "1Gi", "1Gi"), storagePVC("db-2", "expandable", "1Gi", "1Gi")),
			[]string{"db-1", "db-2"}, reasonStorageResizing, "db-1 to be asked to grow to 2Gi; db-2 to be asked to grow to 2Gi"},
		{"a PVC the API server refused to grow is not asked again for a while, and the refusal is shown", "2Gi",
			inst(refusedAt(storagePVC("db-1", "expandable", "1Gi", "1Gi"), "2Gi", testNow.Add(-time.Minute))),
			nil, reasonStorageExpansionFailed, "db-1: the API server refused to grow it to 2Gi: exceeded quota"},
		{"a refusal older than the retry delay is asked again", "2Gi",
			inst(refusedAt(storagePVC("db-1", "expandable", "1Gi", "1Gi"), "2Gi", testNow.Add(-expansionRetryDelay))),
			[]string{"db-1"}, reasonStorageResizing, "db-1 to be asked to grow to 2Gi"},
		{"a refusal of another size does not hold a new one", "3Gi",
			inst(refusedAt(storagePVC("db-1", "expandable", "1Gi", "1Gi"), "2Gi", testNow.Add(-time.Minute))),
			[]string{"db-1"}, reasonStorageResizing, "db-1 to be asked to grow to 3Gi"},
		{"a class that does not allow expansion refuses the growth of all, and none is asked", "2Gi",
			inst(storagePVC("db-1", "expandable", "1Gi", "1Gi"), storagePVC("db-2", "fixed", "1Gi", "1Gi")),
			nil, reasonExpansionNotSupported, "StorageClass fixed of PVC db-2 does not allow volume expansion"},
		{"allowVolumeExpansion unset refuses", "2Gi", inst(storagePVC("db-1", "unset", "1Gi", "1Gi")),
			nil, reasonExpansionNotSupported, "StorageClass unset of PVC db-1 does not allow volume expansion"},
		{"a class that does not exist refuses", "2Gi", inst(storagePVC("db-1", "gone", "1Gi", "1Gi")),
			nil, reasonExpansionNotSupported, "StorageClass gone of PVC db-1 does not exist"},
		{"a class the operator could not read refuses, saying so", "2Gi", inst(storagePVC("db-1", "secret", "1Gi", "1Gi")),
			nil, reasonExpansionNotSupported, "could not be read"},
		{"a PVC without a class refuses", "2Gi", inst(storagePVC("db-1", "", "1Gi", "1Gi")),
			nil, reasonExpansionNotSupported, "PVC db-1 has no StorageClass"},
		{"a refusal names the ways out", "2Gi", inst(storagePVC("db-1", "fixed", "1Gi", "1Gi")),
			nil, reasonExpansionNotSupported, "Set allowVolumeExpansion: true on the StorageClass, or set storage.size back to the volumes' 1Gi"},
		{"a PVC not bound yet is not asked to grow (the API server would refuse it) and waits", "2Gi",
			inst(storagePVC("db-1", "expandable", "1Gi", "1Gi"), storagePVC("db-2", "expandable", "1Gi", "")),
			[]string{"db-1"}, reasonStorageResizing, "db-2 waits to be bound before it grows"},
		{"a size below the volumes' is not applied, and says what they keep", "1Gi",
			inst(storagePVC("db-1", "fixed", "2Gi", "2Gi"), storagePVC("db-2", "fixed", "2Gi", "2Gi")),
			nil, reasonShrinkNotSupported, "storage.size 1Gi is below 2Gi, the largest volume's"},
		{"a PVC asked to grow and not there yet is resizing, at the provider", "2Gi",
			inst(storagePVC("db-1", "expandable", "2Gi", "1Gi")),
			nil, reasonStorageResizing, "db-1 1Gi of 2Gi (the storage provider grows the volume)"},
		{"a PVC waiting for its file system is resizing, at the node", "2Gi",
			inst(withStatus(storagePVC("db-1", "expandable", "2Gi", "1Gi"), func(s *corev1.PersistentVolumeClaimStatus) {
				s.Conditions = []corev1.PersistentVolumeClaimCondition{{Type: corev1.PersistentVolumeClaimFileSystemResizePending, Status: corev1.ConditionTrue}}
			})), nil, reasonStorageResizing, "(the node grows the file system)"},
		{"an infeasible resize at the provider fails, with its message", "2Gi",
			inst(withStatus(storagePVC("db-1", "expandable", "2Gi", "1Gi"), func(s *corev1.PersistentVolumeClaimStatus) {
				s.AllocatedResourceStatuses = map[corev1.ResourceName]corev1.ClaimResourceStatus{
					corev1.ResourceStorage: corev1.PersistentVolumeClaimControllerResizeInfeasible}
				s.Conditions = []corev1.PersistentVolumeClaimCondition{{Type: corev1.PersistentVolumeClaimControllerResizeError,
					Status: corev1.ConditionTrue, Message: "quota exceeded"}}
			})), nil, reasonStorageExpansionFailed, "db-1: the storage provider refused the new size: quota exceeded"},
		{"an unbound PVC is provisioned at its size and counts as resized", "2Gi",
			inst(storagePVC("db-3", "fixed", "2Gi", "")), nil, reasonStorageResized, ""},
		{"a PVC being deleted is left alone", "2Gi",
			inst(func() *corev1.PersistentVolumeClaim {
				p := storagePVC("db-1", "fixed", "1Gi", "1Gi")
				p.DeletionTimestamp = &metav1.Time{}
				return p
			}()), nil, reasonStorageResized, ""},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			got := planStorage(resource.MustParse(tc.size), tc.active, classes, testNow)
			if strings.Join(got.Expand, ",") != strings.Join(tc.wantExpand, ",") {
				t.Errorf("expand %v, want %v", got.Expand, tc.wantExpand)
			}
			if got.Condition.Type != v1.ConditionStorageResized || got.Condition.Reason != tc.reason ||
				(got.Condition.Status == metav1.ConditionTrue) != (tc.reason == reasonStorageResized) ||
				!strings.Contains(got.Condition.Message, tc.message) {
				t.Errorf("condition %s=%s %s %q; want reason %s, message with %q", got.Condition.Type, got.Condition.Status,
					got.Condition.Reason, got.Condition.Message, tc.reason, tc.message)
			}
		})
	}
}

func TestStorageEvent(t *testing.T) {
	cond := func(reason, msg string) []metav1.Condition {
		s := metav1.ConditionFalse
		if reason == reasonStorageResized {
			s = metav1.ConditionTrue
		}
		return []metav1.Condition{{Type: v1.ConditionStorageResized, Status: s, Reason: reason, Message: msg}}
	}
	for _, tc := range []struct {
		rule     string
		old, new []metav1.Condition
		reason   string
	}{
		{"a refusal is a Warning", cond(reasonStorageResized, "a"), cond(reasonExpansionNotSupported, "b"), "StorageNotResized"},
		{"a failure is a Warning", cond(reasonStorageResizing, "a"), cond(reasonStorageExpansionFailed, "b"), "StorageNotResized"},
		{"the end of a growth is Normal", cond(reasonStorageResizing, "a"), cond(reasonStorageResized, "b"), "StorageResized"},
		{"the first resized condition of a new Cluster says nothing", nil, cond(reasonStorageResized, "b"), ""},
		{"an unchanged refusal says nothing again", cond(reasonExpansionNotSupported, "b"), cond(reasonExpansionNotSupported, "b"), ""},
		{"a failure whose message changes (a provider's request id) says nothing again",
			cond(reasonStorageExpansionFailed, "id 1"), cond(reasonStorageExpansionFailed, "id 2"), ""},
		{"a size below the volumes' is a Warning", cond(reasonStorageResized, "a"), cond(reasonShrinkNotSupported, "b"), "StorageNotResized"},
		{"growing says nothing (VolumeExpanding does)", cond(reasonStorageResized, "a"), cond(reasonStorageResizing, "b"), ""},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			e, ok := storageEvent(tc.old, v1.ClusterStatus{Conditions: tc.new})
			if got := map[bool]string{true: e.Kind.Reason, false: ""}[ok]; got != tc.reason {
				t.Errorf("event %q, want %q", got, tc.reason)
			}
		})
	}
}

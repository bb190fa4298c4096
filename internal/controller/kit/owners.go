package kit

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ControlledBy keeps the objects whose controller is owner: children are found by label, but only
// ones the owner controls are ever changed or deleted.
func ControlledBy[T any, P interface {
	*T
	client.Object
}](owner metav1.Object, items []T) []T {
	var out []T
	for i := range items {
		ref := metav1.GetControllerOf(P(&items[i]))
		if ref != nil && ref.UID == owner.GetUID() {
			out = append(out, items[i])
		}
	}
	return out
}

package kit

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// PatchStatus sends the difference between old and obj as a merge patch of the status
// subresource, guarded by old's resourceVersion: a write based on a stale read fails with a
// conflict instead of overwriting someone else's change.
func PatchStatus(ctx context.Context, c client.Client, obj, old client.Object) error {
	if err := c.Status().Patch(ctx, obj, client.MergeFromWithOptions(old, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("patching the status of %s: %w", client.ObjectKeyFromObject(obj), err)
	}
	return nil
}

// PatchSpec is PatchStatus for the main resource.
func PatchSpec(ctx context.Context, c client.Client, obj, old client.Object) error {
	if err := c.Patch(ctx, obj, client.MergeFromWithOptions(old, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("patching %s: %w", client.ObjectKeyFromObject(obj), err)
	}
	return nil
}

package controller

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// patchStatus sends the difference between old and obj as a merge patch of the status
// subresource, guarded by old's resourceVersion: a write based on a stale read fails with a
// conflict instead of overwriting someone else's change.
func patchStatus(ctx context.Context, c client.Client, obj, old client.Object) error {
	if err := c.Status().Patch(ctx, obj, client.MergeFromWithOptions(old, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("patching the status of %s: %w", client.ObjectKeyFromObject(obj), err)
	}
	return nil
}

// patchSpec is patchStatus for the main resource.
func patchSpec(ctx context.Context, c client.Client, obj, old client.Object) error {
	if err := c.Patch(ctx, obj, client.MergeFromWithOptions(old, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("patching %s: %w", client.ObjectKeyFromObject(obj), err)
	}
	return nil
}

package retention

import (
	"fmt"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// PolicyFromSpec reads a Cluster's retention settings. A nil configuration, or one without
// retention fields, is the zero Policy. Values the schema rejects (a malformed window, a count
// below one, a size not above zero) are errors rather than silently unconfigured policies.
func PolicyFromSpec(b *v1alpha1.BackupConfiguration) (Policy, error) {
	var p Policy
	if b == nil {
		return p, nil
	}
	if b.RetentionPolicy != "" {
		w, err := v1alpha1.ParseRetentionWindow(b.RetentionPolicy)
		if err != nil {
			return Policy{}, fmt.Errorf("retentionPolicy: %w", err)
		}
		p.Window = w
	}
	if b.RetentionCount != nil {
		if *b.RetentionCount < 1 {
			return Policy{}, fmt.Errorf("retentionCount %d: must be at least 1", *b.RetentionCount)
		}
		p.Count = int(*b.RetentionCount)
	}
	if b.RetentionSize != nil {
		n := b.RetentionSize.Value()
		if n <= 0 {
			return Policy{}, fmt.Errorf("retentionSize %s: must be greater than zero", b.RetentionSize.String())
		}
		p.Size = n
	}
	return p, nil
}

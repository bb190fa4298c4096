package retention

import (
	"fmt"
	"math"

	"k8s.io/apimachinery/pkg/api/resource"

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
		q := b.RetentionSize
		switch {
		case q.Sign() <= 0:
			return Policy{}, fmt.Errorf("retentionSize %s: must be greater than zero", q.String())
		case q.Cmp(*resource.NewQuantity(math.MaxInt64, resource.DecimalSI)) >= 0:
			// Value would wrap (a size just above 2^64 bytes reads as a few bytes) or read as zero.
			p.Size = math.MaxInt64
		default:
			p.Size = q.Value()
		}
	}
	return p, nil
}

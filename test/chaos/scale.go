package chaos

import (
	"context"
	"fmt"
	"strings"
	"time"

	mysqlv1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// Scale changes spec.instances 3 -> 5 -> 2 -> 3 under the load, each step once the previous one
// has settled: new replicas are cloned, the highest-numbered replicas removed (never the
// primary), and the Cluster ends as it began, so the checks see three instances.
const Scale Kind = "scale"

// scaleSteps are the instance counts Scale goes through.
var scaleSteps = []int32{5, 2, 3}

func (e *Env) injectScale(ctx context.Context, t Target, f *Fault) error {
	var steps []string
	for i, n := range scaleSteps {
		c, err := e.EditCluster(ctx, t, func(c *mysqlv1.Cluster) { c.Spec.Instances = n })
		if err != nil {
			return fmt.Errorf("scaling %s to %d: %w", t.Name, n, err)
		}
		start := time.Now()
		if i == 0 {
			f.At = start
		}
		generation := c.Generation
		if err := pollUntil(ctx, RolloutTimeout, func() (bool, string, error) {
			c, err := e.Cluster(ctx, t)
			if err != nil {
				return false, "", err
			}
			pods, err := e.Pods(ctx, t)
			if err != nil {
				return false, "", err
			}
			ok, why := settledAt(c, pods, generation)
			return ok, why, nil
		}); err != nil {
			return fmt.Errorf("scaling to %d: %w", n, err)
		}
		steps = append(steps, fmt.Sprintf("%d in %s", n, time.Since(start).Round(100*time.Millisecond)))
	}
	now := time.Now()
	f.Healed = &now
	f.Detail = "instances " + strings.Join(steps, ", then ")
	return nil
}

package chaos

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
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
		c, err := e.Cluster(ctx, t)
		if err != nil {
			return err
		}
		old := c.DeepCopy()
		c.Spec.Instances = n
		if err := e.Client.Patch(ctx, c, client.MergeFromWithOptions(old, client.MergeFromWithOptimisticLock{})); err != nil {
			return fmt.Errorf("scaling %s to %d: %w", t.Name, n, err)
		}
		start := time.Now()
		if i == 0 {
			f.At = start
		}
		if err := e.waitSettledAt(ctx, t, c.Generation, RolloutTimeout); err != nil {
			return fmt.Errorf("scaling to %d: %w", n, err)
		}
		steps = append(steps, fmt.Sprintf("%d in %s", n, time.Since(start).Round(100*time.Millisecond)))
	}
	now := time.Now()
	f.Healed = &now
	f.Detail = "instances " + strings.Join(steps, ", then ")
	return nil
}

// waitSettledAt waits until the status describes generation, Progressing False and Ready.
func (e *Env) waitSettledAt(ctx context.Context, t Target, generation int64, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	why := ""
	for {
		c, err := e.Cluster(ctx, t)
		if err == nil {
			pods, perr := e.Pods(ctx, t)
			p := meta.FindStatusCondition(c.Status.Conditions, "Progressing")
			switch ok, w := Ready(c, pods); {
			case perr != nil:
				why = perr.Error()
			case p == nil || p.ObservedGeneration < generation || p.Status != metav1.ConditionFalse:
				why = fmt.Sprintf("Progressing %+v", p)
			case !ok:
				why = w
			default:
				return nil
			}
		} else {
			why = err.Error()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not settled within %s: %s", timeout, why)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

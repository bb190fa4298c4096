package plugin

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// OperatorGrace is how long the operator may take to write a Cluster's status after the Cluster
// is created or its spec changed; it does so within a reconcile, seconds when it runs.
const OperatorGrace = 2 * time.Minute

// OperatorSilence says, at now, when the Cluster's status shows that the operator has not acted
// on it for longer than OperatorGrace: no status written since the Cluster was created, or a
// status that describes an older generation of the spec than the last write of the Cluster. ""
// when the status is current, or too recent to tell.
func OperatorSilence(c *v1.Cluster, now time.Time) string {
	gen, observed := c.Generation, c.Status.ObservedGeneration
	if observed >= gen && observed > 0 {
		return ""
	}
	since := c.CreationTimestamp.Time
	for _, m := range c.ManagedFields {
		if m.Subresource == "" && m.Time != nil && m.Time.After(since) {
			since = m.Time.Time
		}
	}
	if since.IsZero() {
		return ""
	}
	age := now.Sub(since)
	if age <= OperatorGrace {
		return ""
	}
	what := fmt.Sprintf("it has not written the status of Cluster %s, created %s ago", c.Name, age.Round(time.Second))
	if observed > 0 {
		what = fmt.Sprintf("the status of Cluster %s describes generation %d of its spec, which is at generation %d since %s ago",
			c.Name, observed, gen, age.Round(time.Second))
	}
	return "the operator seems not to be running: " + what + "; check its Pod with " +
		"kubectl get pods -A -l " + OperatorSelector + " and its log with kubectl cloudnative-mysql logs --operator"
}

// warnIfOperatorSilent prints a warning when the Cluster a verb just asked something of shows
// that the operator is not acting on it (OperatorSilence): the request is recorded, and waits for
// the operator. A Cluster it cannot read adds nothing.
func (e *env) warnIfOperatorSilent(ctx context.Context, c client.Reader, ns, name string) {
	if cluster, err := getCluster(ctx, c, ns, name); err == nil {
		e.warnOperatorSilence(cluster)
	}
}

// warnOperatorSilence prints OperatorSilence's warning for cluster, if any.
func (e *env) warnOperatorSilence(cluster *v1.Cluster) {
	if w := OperatorSilence(cluster, e.clock.Now()); w != "" {
		fmt.Fprintf(e.streams.ErrOut, "Warning: %s; the request waits for it\n", w)
	}
}

package cluster

import (
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// currentParameters is the report of an instance about spec.mysql.parameters as they are now,
// nil when it has not converged on them yet (or predates the report).
func currentParameters(c *v1.Cluster, r *instanceclient.Status) *instanceclient.ParametersReport {
	if r == nil || r.Parameters == nil || r.Parameters.Hash != specs.ParametersHash(c.Spec.MySQL.Parameters) {
		return nil
	}
	return r.Parameters
}

// pendingRestart lists the parameters instance runs without until its restart.
func pendingRestart(c *v1.Cluster, o Observation, instance string) []string {
	if p := currentParameters(c, o.Reports[instance]); p != nil {
		return p.PendingRestart
	}
	return nil
}

// aggregateParameters is status.parameters: from the instances that converged on the current
// spec, each parameter waiting for a restart with the instances it waits on, and each refused one
// with the first reason given. An instance that has not reported on the current spec adds
// nothing: a change just made is not reported pending before anyone tried it.
func aggregateParameters(c *v1.Cluster, names []string, reports map[string]*instanceclient.Status) *v1.ParametersStatus {
	pending := map[string][]string{}
	refused := map[string]string{}
	for _, name := range names {
		p := currentParameters(c, reports[name])
		if p == nil {
			continue
		}
		for _, k := range p.PendingRestart {
			pending[k] = append(pending[k], name)
		}
		for _, r := range p.Refused {
			if _, ok := refused[r.Key]; !ok {
				refused[r.Key] = r.Reason
			}
		}
	}
	if len(pending) == 0 && len(refused) == 0 {
		return nil
	}
	out := &v1.ParametersStatus{}
	for _, k := range slices.Sorted(maps.Keys(pending)) {
		out.PendingRestart = append(out.PendingRestart, v1.PendingParameter{Key: k, Instances: pending[k]})
	}
	for _, k := range slices.Sorted(maps.Keys(refused)) {
		out.Refused = append(out.Refused, v1.RefusedParameter{Key: k, Reason: refused[k]})
	}
	return out
}

// setParametersCondition sets ParametersRefused from status.parameters.
func setParametersCondition(st *v1.ClusterStatus, c *v1.Cluster, now metav1.Time) {
	cond := metav1.Condition{Type: v1.ConditionParametersRefused, Status: metav1.ConditionFalse, Reason: "Accepted",
		Message: "no parameter is refused", ObservedGeneration: c.Generation, LastTransitionTime: now}
	if p := st.Parameters; p != nil && len(p.Refused) > 0 {
		parts := make([]string, len(p.Refused))
		for i, r := range p.Refused {
			parts[i] = r.Key + ": " + r.Reason
		}
		cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, "Refused",
			"left out of my.cnf: "+strings.Join(parts, "; ")
	}
	meta.SetStatusCondition(&st.Conditions, cond)
}

// parametersRefusedEvent is the Warning of ParametersRefused turning True or changing its list.
func parametersRefusedEvent(old []metav1.Condition, st v1.ClusterStatus) (kit.Event, bool) {
	n := meta.FindStatusCondition(st.Conditions, v1.ConditionParametersRefused)
	if n == nil || n.Status != metav1.ConditionTrue {
		return kit.Event{}, false
	}
	if o := meta.FindStatusCondition(old, v1.ConditionParametersRefused); o != nil && o.Status == n.Status && o.Message == n.Message {
		return kit.Event{}, false
	}
	return evParametersRefused.With(n.Message), true
}

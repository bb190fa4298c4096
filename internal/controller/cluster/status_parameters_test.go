package cluster

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// withParameters: the spec asks for params and each instance reports report (with the hash given,
// or the spec's when "").
func (w *world) withParameters(params map[string]string, reports map[string]*instanceclient.ParametersReport) *world {
	w.o.Cluster.Spec.MySQL.Parameters = params
	for name, r := range reports {
		if r.Hash == "" {
			r.Hash = specs.ParametersHash(params)
		}
		if w.o.Reports[name] == nil {
			w.o.Reports[name] = &instanceclient.Status{}
		}
		w.o.Reports[name].Parameters = r
	}
	return w
}

// TestParametersStatus: what status.parameters and ParametersRefused say, one row per rule.
func TestParametersStatus(t *testing.T) {
	params := map[string]string{"max_connections": "500", "table_open_cache_instances": "4", "sql_mode": "NOPE"}
	base := func() *world {
		return newWorld(3).primary("db-1", "db-1").instance(1, true).instance(2, true).instance(3, true).labelled().replicasUpdated()
	}
	pendingOn := func(names ...string) []v1.PendingParameter {
		return []v1.PendingParameter{{Key: "table_open_cache_instances", Instances: names}}
	}
	for _, tc := range []struct {
		rule        string
		world       *world
		wantPending []v1.PendingParameter
		wantRefused string // a part of ParametersRefused's message; "" for False
	}{
		{"nothing reported: nothing pending, nothing refused", base().withParameters(params, nil), nil, ""},
		{"a read-only variable is pending on each instance that reported it", base().withParameters(params, map[string]*instanceclient.ParametersReport{
			"db-1": {PendingRestart: []string{"table_open_cache_instances"}},
			"db-2": {PendingRestart: []string{"table_open_cache_instances"}},
		}), pendingOn("db-1", "db-2"), ""},
		{"a report on an older spec counts for nothing", base().withParameters(params, map[string]*instanceclient.ParametersReport{
			"db-1": {Hash: "older", PendingRestart: []string{"table_open_cache_instances"},
				Refused: []instanceclient.RefusedParameter{{Key: "sql_mode", Reason: "mysqld refuses the value"}}},
		}), nil, ""},
		{"a refused parameter turns ParametersRefused True with its reason", base().withParameters(params, map[string]*instanceclient.ParametersReport{
			"db-3": {Refused: []instanceclient.RefusedParameter{{Key: "sql_mode", Reason: "mysqld refuses the value"}}},
		}), nil, "sql_mode: mysqld refuses the value"},
	} {
		d := tc.world.decide()
		var pending []v1.PendingParameter
		if d.Status.Parameters != nil {
			pending = d.Status.Parameters.PendingRestart
		}
		cond := meta.FindStatusCondition(d.Status.Conditions, v1.ConditionParametersRefused)
		refusedOK := cond != nil && ((tc.wantRefused == "" && cond.Status == "False") ||
			(tc.wantRefused != "" && cond.Status == "True" && strings.Contains(cond.Message, tc.wantRefused)))
		if !slices.EqualFunc(pending, tc.wantPending, func(a, b v1.PendingParameter) bool {
			return a.Key == b.Key && slices.Equal(a.Instances, b.Instances)
		}) || !refusedOK {
			t.Errorf("%s: pending %+v, ParametersRefused %+v", tc.rule, pending, cond)
		}
		if tc.wantRefused != "" && !slices.ContainsFunc(d.Events[stepStatus], func(e kit.Event) bool { return e.Kind.Reason == "ParametersRefused" }) {
			t.Errorf("%s: no ParametersRefused Event", tc.rule)
		}
	}
}

// TestRolloutRestartsForPendingParameters: an instance whose mysqld waits for a restart to take a
// parameter is restarted in the rolling update's order, replicas first, the primary after a
// switchover.
func TestRolloutRestartsForPendingParameters(t *testing.T) {
	params := map[string]string{"table_open_cache_instances": "4"}
	pending := &instanceclient.ParametersReport{PendingRestart: []string{"table_open_cache_instances"}}
	w := newWorld(3).primary("db-1", "db-1").instance(1, true).instance(2, true).instance(3, true).labelled().replicasUpdated()
	w.o.Cluster.Spec.ImageName = "mysql:8.4" // every Pod runs the spec
	for i := range w.o.Pods {
		w.o.Pods[i].Annotations = specs.BuildPod(w.o.Cluster, int32(i+1), specs.PodOptions{OperatorImage: "op:1"}).Annotations
	}
	w.withParameters(params, map[string]*instanceclient.ParametersReport{"db-1": pending, "db-2": pending, "db-3": pending})
	d := w.decide()
	if !slices.Equal(d.DeletePods, []string{"db-3"}) {
		t.Fatalf("deleted %v, want db-3 (the highest replica) first", d.DeletePods)
	}
	if !slices.ContainsFunc(d.Events[stepDeletePods], func(e kit.Event) bool {
		return e.Kind.Reason == "InstanceRestarting" && strings.Contains(e.Message, "table_open_cache_instances")
	}) {
		t.Errorf("no InstanceRestarting Event naming the parameter: %v", d.Events[stepDeletePods])
	}
	// The replicas restarted and no longer wait: the primary is switched over from.
	w.o.Reports["db-2"].Parameters = &instanceclient.ParametersReport{Hash: specs.ParametersHash(params)}
	w.o.Reports["db-3"].Parameters = &instanceclient.ParametersReport{Hash: specs.ParametersHash(params)}
	d = w.decide()
	if len(d.DeletePods) != 0 || d.Status.TargetPrimary != "db-3" {
		t.Errorf("deleted %v, target %q; want a switchover to db-3 before the primary restarts", d.DeletePods, d.Status.TargetPrimary)
	}
}

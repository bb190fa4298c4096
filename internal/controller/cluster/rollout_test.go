package cluster

import (
	"slices"
	"testing"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

func TestDecideRollout(t *testing.T) {
	three := func() *world {
		return newWorld(3).primary("db-1", "db-1").instance(1, true).instance(2, true).instance(3, true)
	}
	for _, tc := range []struct {
		rule          string
		world         *world
		wantDelete    []string
		wantCondition string
	}{
		{"an unchanged spec replaces nothing", three(), nil, reasonConverged},
		{"a new image replaces the highest serial replica first, one at a time", three().newImage(), []string{"db-3"}, reasonRollingUpdate},
		{"nothing is replaced while an instance is not ready", newWorld(2).primary("db-1", "db-1").instance(1, true).
			instance(2, false).newImage(), nil, reasonInstancesNotReady},
		{"nothing is replaced while a primary change is pending", three().newImage().primary("db-1", "db-2"), nil, reasonPrimaryPending},
		{"the primary of several instances waits for a switchover", func() *world {
			w := three().newImage() // the replicas already run it
			for i := range w.o.Pods {
				if w.o.Pods[i].Name != "db-1" {
					serial, _ := specs.InstanceSerial("db", w.o.Pods[i].Name)
					w.o.Pods[i].Annotations = specs.BuildPod(w.o.Cluster, serial, specs.PodOptions{OperatorImage: "op:1"}).Annotations
				}
			}
			return w
		}(), nil, reasonPrimaryUpdatePending},
		{"a single instance is restarted", newWorld(1).primary("db-1", "db-1").instance(1, true).newImage(), []string{"db-1"}, reasonRollingUpdate},
	} {
		d := tc.world.decide()
		if !slices.Equal(d.DeletePods, tc.wantDelete) || condition(d, v1.ConditionProgressing).Reason != tc.wantCondition {
			t.Errorf("%s: delete %v, Progressing %+v", tc.rule, d.DeletePods, condition(d, v1.ConditionProgressing))
		}
	}
}

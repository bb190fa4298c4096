package clustercontroller

import (
	"context"
	"testing"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

// readyCluster creates a Cluster of n instances with db-1 as its reported primary and waits until
// every instance exists.
func readyCluster(t *testing.T, n int32, mutate func(*v1.Cluster)) *v1.Cluster {
	t.Helper()
	c := newCluster(t, n, mutate)
	check.Eventually(t, waitTimeout, "targetPrimary is set", func(context.Context) (bool, error) {
		return getCluster(t, c).Status.TargetPrimary == "db-1", nil
	})
	setPrimary(t, c, "db-1")
	want := []string{"db-1", "db-2", "db-3", "db-4", "db-5"}[:n]
	waitInstances(t, c, want...)
	return c
}

// TestRoleServicesFollowLabels changes the status fields the Pod labels follow and reads, from the
// EndpointSlices, which Pods each role Service then selects.
func TestRoleServicesFollowLabels(t *testing.T) {
	c := readyCluster(t, 3, nil)
	ns := c.Namespace
	steps := []struct {
		rule   string
		change func()
		want   map[string][]string
	}{
		{"rw selects the primary, ro the replicas, r every instance", func() {},
			map[string][]string{"db-rw": {"db-1"}, "db-ro": {"db-2", "db-3"}, "db-r": {"db-1", "db-2", "db-3"}}},
		{"a switchover target stays in ro while it promotes; rw stays on the old primary until it reports",
			func() { updateCluster(t, c, true, func(c *v1.Cluster) { c.Status.TargetPrimary = "db-2" }) },
			map[string][]string{"db-rw": {"db-1"}, "db-ro": {"db-2", "db-3"}, "db-r": {"db-1", "db-2", "db-3"}}},
		{"once the new primary reports, rw follows it, it leaves ro and the old primary joins ro",
			func() { setPrimary(t, c, "db-2") },
			map[string][]string{"db-rw": {"db-2"}, "db-ro": {"db-1", "db-3"}, "db-r": {"db-1", "db-2", "db-3"}}},
		{"a fenced instance leaves every Service",
			func() { updateCluster(t, c, false, func(c *v1.Cluster) { fence(c, `["db-3"]`) }) },
			map[string][]string{"db-rw": {"db-2"}, "db-ro": {"db-1"}, "db-r": {"db-1", "db-2"}}},
		{"a fenced primary stops writes: rw has no endpoint",
			func() {
				updateCluster(t, c, false, func(c *v1.Cluster) { fence(c, `["db-2"]`) })
			},
			map[string][]string{"db-rw": {}, "db-ro": {"db-1", "db-3"}, "db-r": {"db-1", "db-3"}}},
		{"unfencing restores routing", func() { updateCluster(t, c, false, func(c *v1.Cluster) { fence(c, "") }) },
			map[string][]string{"db-rw": {"db-2"}, "db-ro": {"db-1", "db-3"}, "db-r": {"db-1", "db-2", "db-3"}}},
		{"a replica that is not ready serves no reads", func() { notReady.Store(ns+"/db-3", true) },
			map[string][]string{"db-rw": {"db-2"}, "db-ro": {"db-1"}, "db-r": {"db-1", "db-2"}}},
		{"a ready replica again serves reads", func() { notReady.Delete(ns + "/db-3") },
			map[string][]string{"db-rw": {"db-2"}, "db-ro": {"db-1", "db-3"}, "db-r": {"db-1", "db-2", "db-3"}}},
		{"a replica lagging past the bound serves no reads", func() { reports.setLag(ns, "db-3", 3600) },
			map[string][]string{"db-rw": {"db-2"}, "db-ro": {"db-1"}, "db-r": {"db-1", "db-2"}}},
		{"a replica that caught up serves reads again", func() { reports.setLag(ns, "db-3", 0) },
			map[string][]string{"db-rw": {"db-2"}, "db-ro": {"db-1", "db-3"}, "db-r": {"db-1", "db-2", "db-3"}}},
		{"a diverged instance is out of service", func() {
			updateCluster(t, c, true, func(c *v1.Cluster) { c.Status.DivergedInstances = []string{"db-1"} })
		}, map[string][]string{"db-rw": {"db-2"}, "db-ro": {"db-3"}, "db-r": {"db-2", "db-3"}}},
	}
	for _, s := range steps {
		t.Run(s.rule, func(t *testing.T) {
			s.change()
			waitEndpoints(t, ns, s.want)
		})
	}
}

// fence sets the fencing annotation as the plugin's fence verb does; "" removes it.
func fence(c *v1.Cluster, value string) {
	if value == "" {
		delete(c.Annotations, v1.FencedInstancesAnnotation)
		return
	}
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations[v1.FencedInstancesAnnotation] = value
}

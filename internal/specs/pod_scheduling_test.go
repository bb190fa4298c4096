package specs

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"

	mysqlv1alpha1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

func TestBuildPodScheduling(t *testing.T) {
	ptr := func(b bool) *bool { return &b }
	secs := int64(30)
	honor := corev1.NodeInclusionPolicyHonor
	clusterSelector := map[string]string{mysqlv1alpha1.ClusterLabel: "db"}
	for _, tc := range []struct {
		rule  string
		edit  func(c *mysqlv1alpha1.Cluster)
		check func(p *corev1.Pod) bool
	}{
		{"by default the instances prefer distinct nodes", nil, func(p *corev1.Pod) bool {
			aa := p.Spec.Affinity.PodAntiAffinity
			return aa.RequiredDuringSchedulingIgnoredDuringExecution == nil &&
				aa.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm.TopologyKey == corev1.LabelHostname &&
				reflect.DeepEqual(aa.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm.LabelSelector.MatchLabels, clusterSelector)
		}},
		{"required anti-affinity on a topology key keeps instances apart or Pending", func(c *mysqlv1alpha1.Cluster) {
			c.Spec.Affinity.PodAntiAffinityType = mysqlv1alpha1.PodAntiAffinityRequired
			c.Spec.Affinity.TopologyKey = corev1.LabelTopologyZone
		}, func(p *corev1.Pod) bool {
			aa := p.Spec.Affinity.PodAntiAffinity
			return aa.PreferredDuringSchedulingIgnoredDuringExecution == nil && len(aa.RequiredDuringSchedulingIgnoredDuringExecution) == 1 &&
				aa.RequiredDuringSchedulingIgnoredDuringExecution[0].TopologyKey == corev1.LabelTopologyZone &&
				reflect.DeepEqual(aa.RequiredDuringSchedulingIgnoredDuringExecution[0].LabelSelector.MatchLabels, clusterSelector)
		}},
		{"anti-affinity turned off leaves the Pod without affinity", func(c *mysqlv1alpha1.Cluster) {
			c.Spec.Affinity.EnablePodAntiAffinity = ptr(false)
		}, func(p *corev1.Pod) bool { return p.Spec.Affinity == nil }},
		{"the node selector is copied", func(c *mysqlv1alpha1.Cluster) {
			c.Spec.Affinity.NodeSelector = map[string]string{"pool": "db"}
		}, func(p *corev1.Pod) bool {
			return reflect.DeepEqual(p.Spec.NodeSelector, map[string]string{"pool": "db"})
		}},
		{"tolerations are copied with their seconds", func(c *mysqlv1alpha1.Cluster) {
			c.Spec.Affinity.Tolerations = []mysqlv1alpha1.Toleration{
				{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "db", Effect: corev1.TaintEffectNoSchedule},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &secs},
			}
		}, func(p *corev1.Pod) bool {
			return reflect.DeepEqual(p.Spec.Tolerations, []corev1.Toleration{
				{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "db", Effect: corev1.TaintEffectNoSchedule},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &secs},
			})
		}},
		{"topology spread counts the Cluster's own instances", func(c *mysqlv1alpha1.Cluster) {
			c.Spec.TopologySpreadConstraints = []mysqlv1alpha1.TopologySpreadConstraint{{
				MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: corev1.DoNotSchedule, NodeTaintsPolicy: &honor,
			}}
		}, func(p *corev1.Pod) bool {
			ts := p.Spec.TopologySpreadConstraints
			return len(ts) == 1 && ts[0].MaxSkew == 1 && ts[0].TopologyKey == corev1.LabelTopologyZone &&
				ts[0].WhenUnsatisfiable == corev1.DoNotSchedule && *ts[0].NodeTaintsPolicy == honor &&
				reflect.DeepEqual(ts[0].LabelSelector.MatchLabels, clusterSelector)
		}},
		{"the priority class is copied", func(c *mysqlv1alpha1.Cluster) { c.Spec.PriorityClassName = "db-critical" },
			func(p *corev1.Pod) bool { return p.Spec.PriorityClassName == "db-critical" }},
		{"podMetadata labels and annotations are added; the operator's keys win", func(c *mysqlv1alpha1.Cluster) {
			c.Spec.PodMetadata = &mysqlv1alpha1.PodMetadata{
				Labels:      map[string]string{"team": "payments", mysqlv1alpha1.ClusterLabel: "other"},
				Annotations: map[string]string{"example.com/owner": "dba", PodSpecHashAnnotation: "x"},
			}
		}, func(p *corev1.Pod) bool {
			return p.Labels["team"] == "payments" && p.Labels[mysqlv1alpha1.ClusterLabel] == "db" &&
				p.Labels[mysqlv1alpha1.InstanceLabel] == "db-1" && p.Annotations["example.com/owner"] == "dba" &&
				len(p.Annotations[PodSpecHashAnnotation]) == 16
		}},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			c := testCluster()
			if tc.edit != nil {
				tc.edit(c)
			}
			if p := BuildPod(c, 1, PodOptions{OperatorImage: "op:1"}); !tc.check(p) {
				t.Errorf("rule broken; affinity %+v, selector %v, tolerations %+v, spread %+v, priority %q, labels %v, annotations %v",
					p.Spec.Affinity, p.Spec.NodeSelector, p.Spec.Tolerations, p.Spec.TopologySpreadConstraints,
					p.Spec.PriorityClassName, p.Labels, p.Annotations)
			}
		})
	}
}

// Every scheduling field is in the Pod hash, so changing one rolls the Cluster; a Cluster that
// leaves them at their defaults keeps the hash Pods had before the fields existed.
func TestPodHashCoversScheduling(t *testing.T) {
	base := BuildPod(testCluster(), 1, PodOptions{OperatorImage: "op:1"}).Annotations[PodSpecHashAnnotation]
	for _, tc := range []struct {
		rule    string
		edit    func(c *mysqlv1alpha1.Cluster)
		changes bool
	}{
		{"the defaults written out keep the hash", func(c *mysqlv1alpha1.Cluster) {
			on := true
			c.Spec.Affinity = mysqlv1alpha1.AffinityConfiguration{EnablePodAntiAffinity: &on,
				TopologyKey: corev1.LabelHostname, PodAntiAffinityType: mysqlv1alpha1.PodAntiAffinityPreferred}
		}, false},
		{"an empty podMetadata keeps the hash", func(c *mysqlv1alpha1.Cluster) { c.Spec.PodMetadata = &mysqlv1alpha1.PodMetadata{} }, false},
		{"required anti-affinity changes it", func(c *mysqlv1alpha1.Cluster) {
			c.Spec.Affinity.PodAntiAffinityType = mysqlv1alpha1.PodAntiAffinityRequired
		}, true},
		{"a node selector changes it", func(c *mysqlv1alpha1.Cluster) { c.Spec.Affinity.NodeSelector = map[string]string{"a": "b"} }, true},
		{"a toleration changes it", func(c *mysqlv1alpha1.Cluster) {
			c.Spec.Affinity.Tolerations = []mysqlv1alpha1.Toleration{{Operator: corev1.TolerationOpExists}}
		}, true},
		{"a spread constraint changes it", func(c *mysqlv1alpha1.Cluster) {
			c.Spec.TopologySpreadConstraints = []mysqlv1alpha1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: corev1.ScheduleAnyway}}
		}, true},
		{"the defaults written out keep the hash: stopDelay", func(c *mysqlv1alpha1.Cluster) { c.Spec.StopDelay = DefaultStopDelay }, false},
		{"a stop delay changes it", func(c *mysqlv1alpha1.Cluster) { c.Spec.StopDelay = 600 }, true},
		{"a priority class changes it", func(c *mysqlv1alpha1.Cluster) { c.Spec.PriorityClassName = "high" }, true},
		{"a Pod label changes it", func(c *mysqlv1alpha1.Cluster) {
			c.Spec.PodMetadata = &mysqlv1alpha1.PodMetadata{Labels: map[string]string{"team": "a"}}
		}, true},
		{"a Pod annotation changes it", func(c *mysqlv1alpha1.Cluster) {
			c.Spec.PodMetadata = &mysqlv1alpha1.PodMetadata{Annotations: map[string]string{"example.com/a": "b"}}
		}, true},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			c := testCluster()
			tc.edit(c)
			got := BuildPod(c, 1, PodOptions{OperatorImage: "op:1"}).Annotations[PodSpecHashAnnotation]
			if (got != base) != tc.changes {
				t.Errorf("hash %s, before %s: want changed=%v", got, base, tc.changes)
			}
		})
	}
}

func TestStopBudget(t *testing.T) {
	for _, tc := range []struct {
		rule              string
		stopDelay         int32
		wantPod, wantMsql int64
	}{
		{"unset is the default, 180 s", 0, 180, 165},
		{"the Pod gets stopDelay, mysqld all but 15 s of it", 600, 600, 585},
		{"the smallest admitted stopDelay leaves mysqld 5 s", 20, 20, 5},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			c := testCluster()
			c.Spec.StopDelay = tc.stopDelay
			if pod, mysqld := stopBudget(c); pod != tc.wantPod || mysqld != tc.wantMsql {
				t.Errorf("got pod %d, mysqld %d; want %d, %d", pod, mysqld, tc.wantPod, tc.wantMsql)
			}
		})
	}
}

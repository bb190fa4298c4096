//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	mysqlv1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/instances"
)

// The real scheduler places a Cluster's instances by its scheduling fields. The local cluster has
// one node with a kubelet; the test adds Node objects without one, each of which the scheduler
// treats as any node: fakeA carries the pool label and a taint the Cluster tolerates, fakeB the
// pool label and a taint it does not tolerate, fakeC no pool label. The first instance starts on
// the real node (the fake nodes are added once it is ready); the second, kept off the real node
// by required anti-affinity, can only go to fakeA. It never starts there (no kubelet): the test
// checks only where it is bound, and that the priority class and podMetadata reach the Pods. A
// second Cluster naming a PriorityClass that does not exist is reported as InstanceRefused.
func TestSchedulingFieldsPlaceInstancesWithTheRealScheduler(t *testing.T) {
	ctx := context.Background()
	ns := Namespace(t)
	suffix := ns[strings.LastIndex(ns, "-")+1:]
	pool, taintKey := "cnm-e2e/pool-"+suffix, "cnm-e2e/dedicated-"+suffix
	priority := "cnm-e2e-" + suffix

	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: priority}, Value: 1000}
	if err := env.c.Create(ctx, pc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.c.Delete(context.Background(), pc) })

	var nodes corev1.NodeList
	if err := env.c.List(ctx, &nodes); err != nil || len(nodes.Items) != 1 {
		t.Fatalf("the local cluster should have exactly one node with a kubelet: %d nodes, %v", len(nodes.Items), err)
	}
	real := nodes.Items[0].Name
	labelNode(t, real, pool, "yes")
	t.Cleanup(func() { labelNode(t, real, pool, "") })

	Apply(t, ns, fmt.Sprintf(`
apiVersion: mysql.cloudnative-mysql.io/v1alpha1
kind: Cluster
metadata: {name: db}
spec:
  instances: 2
  imageName: %s
  storage: {size: 1Gi}
  affinity:
    podAntiAffinityType: required
    nodeSelector: {%s: "yes"}
    tolerations:
    - {key: %s, operator: Equal, value: mysql, effect: NoSchedule}
    # a Node without a kubelet is soon marked unreachable
    - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoSchedule}
    - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoSchedule}
  priorityClassName: %s
  podMetadata:
    labels: {team: payments}
    annotations: {example.com/owner: dba-team}
---
apiVersion: mysql.cloudnative-mysql.io/v1alpha1
kind: Cluster
metadata: {name: nopriority}
spec:
  instances: 1
  imageName: %s
  storage: {size: 1Gi}
  priorityClassName: %s-missing
`, mysqlImage, pool, taintKey, priority, mysqlImage, priority))

	pod := func(name string) *corev1.Pod {
		var p corev1.Pod
		if err := env.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &p); err != nil {
			return nil
		}
		return &p
	}
	WaitFor(t, 5*time.Minute, "db-1 ready on the real node", func() (bool, error) {
		p := pod("db-1")
		if p == nil {
			return false, fmt.Errorf("no Pod db-1 yet")
		}
		return p.Spec.NodeName == real && instances.PodReady(p), fmt.Errorf("db-1 on %q, ready %t", p.Spec.NodeName, instances.PodReady(p))
	})

	fakeA, fakeB, fakeC := "cnm-e2e-a-"+suffix, "cnm-e2e-b-"+suffix, "cnm-e2e-c-"+suffix
	addFakeNode(t, fakeA, map[string]string{pool: "yes"}, []corev1.Taint{{Key: taintKey, Value: "mysql", Effect: corev1.TaintEffectNoSchedule}})
	addFakeNode(t, fakeB, map[string]string{pool: "yes"}, []corev1.Taint{{Key: "cnm-e2e/other-" + suffix, Value: "x", Effect: corev1.TaintEffectNoSchedule}})
	addFakeNode(t, fakeC, nil, nil)

	var db2 *corev1.Pod
	WaitFor(t, 5*time.Minute, "db-2 bound to "+fakeA, func() (bool, error) {
		db2 = pod("db-2")
		if db2 == nil {
			return false, fmt.Errorf("no Pod db-2 yet")
		}
		return db2.Spec.NodeName == fakeA, fmt.Errorf("db-2 bound to %q", db2.Spec.NodeName)
	})
	db1 := pod("db-1")
	for _, p := range []*corev1.Pod{db1, db2} {
		if p.Spec.Priority == nil || *p.Spec.Priority != 1000 || p.Spec.PriorityClassName != priority {
			t.Errorf("%s: priority class %q, priority %v; want %s at 1000", p.Name, p.Spec.PriorityClassName, p.Spec.Priority, priority)
		}
		if p.Labels["team"] != "payments" || p.Annotations["example.com/owner"] != "dba-team" {
			t.Errorf("%s: labels %v, annotations %v; want podMetadata's team and example.com/owner", p.Name, p.Labels, p.Annotations)
		}
		if p.Labels[mysqlv1.ClusterLabel] != "db" || p.Labels[mysqlv1.InstanceLabel] != p.Name {
			t.Errorf("%s lost the operator's labels: %v", p.Name, p.Labels)
		}
	}

	t.Logf("event: InstanceRefused: %s", WarningEvent(t, ns, "nopriority", "InstanceRefused", "PriorityClass", 2*time.Minute))
}

// labelNode sets (value non-empty) or removes a label of a Node.
func labelNode(t *testing.T, node, key, value string) {
	t.Helper()
	arg := key + "=" + value
	if value == "" {
		arg = key + "-"
	}
	if out, err := kubectl("label", "--overwrite", "node", node, arg); err != nil {
		t.Errorf("labelling node %s %s: %v\n%s", node, arg, err, out)
	}
}

// addFakeNode creates a Node object without a kubelet: the scheduler sees its labels, taints,
// capacity and Ready condition like any node's. It is deleted when the test ends; the Pod garbage
// collector then deletes the Pods bound to it.
func addFakeNode(t *testing.T, name string, labels map[string]string, taints []corev1.Taint) {
	t.Helper()
	ctx := context.Background()
	l := map[string]string{corev1.LabelHostname: name, corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64"}
	for k, v := range labels {
		l[k] = v
	}
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}, Spec: corev1.NodeSpec{Taints: taints}}
	if err := env.c.Create(ctx, n); err != nil {
		t.Fatalf("creating node %s: %v", name, err)
	}
	t.Cleanup(func() { _ = env.c.Delete(context.Background(), n) })
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("4"),
		corev1.ResourceMemory: resource.MustParse("8Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	// The node controllers write a new Node at once (its taints, its CIDR): read it again on a
	// conflict.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := &corev1.Node{}
		if err := env.c.Get(ctx, client.ObjectKeyFromObject(n), cur); err != nil {
			return err
		}
		cur.Status.Capacity, cur.Status.Allocatable = capacity, capacity
		cur.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
		return env.c.Status().Update(ctx, cur)
	})
	if err != nil {
		t.Fatalf("setting the status of node %s: %v", name, err)
	}
}

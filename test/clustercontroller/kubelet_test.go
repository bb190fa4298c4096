package clustercontroller

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const nodeName = "node-1"

// notReady holds the Pods (namespace/name) the fake kubelet reports not ready.
var notReady sync.Map

// ipSeq hands out Pod IPs.
var ipSeq atomic.Int32

// startKubelet runs a fake kubelet for ns until the test ends: it binds new Pods to the Node,
// reports them Running and Ready (or not ready when listed in notReady) with an IP, and finishes
// the deletion of Pods being deleted, as a kubelet would once the containers stopped.
func startKubelet(t *testing.T, ns string) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			var pods corev1.PodList
			if err := kc.List(ctx, &pods, client.InNamespace(ns)); err == nil {
				for i := range pods.Items {
					kubeletSync(ctx, &pods.Items[i])
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
}

func kubeletSync(ctx context.Context, pod *corev1.Pod) {
	if pod.DeletionTimestamp != nil {
		_ = kc.Delete(ctx, pod, client.GracePeriodSeconds(0))
		return
	}
	if pod.Spec.NodeName == "" {
		binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace},
			Target: corev1.ObjectReference{Kind: "Node", Name: nodeName}}
		_ = kc.SubResource("binding").Create(ctx, pod, binding)
		return
	}
	_, hold := notReady.Load(pod.Namespace + "/" + pod.Name)
	ready := corev1.ConditionTrue
	if hold {
		ready = corev1.ConditionFalse
	}
	if pod.Status.Phase == corev1.PodRunning && len(pod.Status.Conditions) == 1 && pod.Status.Conditions[0].Status == ready {
		return
	}
	ip := pod.Status.PodIP
	if ip == "" {
		n := ipSeq.Add(1)
		ip = fmt.Sprintf("10.0.%d.%d", n/250, n%250+1)
	}
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}},
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: ready}}}
	_ = kc.Status().Update(ctx, pod)
}

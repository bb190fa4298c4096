package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
)

// unrelatedPod looks like an application's Pod: a few labels, two containers with environment
// variables and resources, the size of what a real cluster holds.
func unrelatedPod(ns string, i int) *corev1.Pod {
	container := func(name string) corev1.Container {
		c := corev1.Container{Name: name, Image: "app/" + name + ":1.2.3",
			Args: []string{"--listen=:8080", "--log-level=info", "--config=/etc/app/config.yaml"},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")}},
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}}
		for j := range 8 {
			c.Env = append(c.Env, corev1.EnvVar{Name: fmt.Sprintf("SETTING_%d", j), Value: fmt.Sprintf("value-%d-of-pod-%d", j, i)})
		}
		return c
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("app-%05d", i),
			Labels:      map[string]string{"app": "web", "tier": "frontend", "pod-index": fmt.Sprint(i)},
			Annotations: map[string]string{"example.com/revision": "3f2a9c1d", "example.com/owner": "team-web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{container("web"), container("sidecar")}},
	}
}

func unrelatedSecret(ns string, i int) *corev1.Secret {
	data := make([]byte, 1024)
	for j := range data {
		data[j] = byte('a' + (i+j)%26)
	}
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("app-secret-%05d", i)},
		Data: map[string][]byte{"token": data}}
}

// createObjects creates the namespaces, the Pods and Secrets spread over them, and one Cluster,
// with o.workers creations at a time.
func createObjects(ctx context.Context, env *kubetest.Env, o options) error {
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = 2000, 4000
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		return err
	}
	namespaces := make([]string, o.namespaces)
	for i := range namespaces {
		namespaces[i] = fmt.Sprintf("unrelated-%d", i)
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespaces[i]}}); err != nil {
			return err
		}
	}
	cluster := &v1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: namespaces[0], Name: "db"},
		Spec: v1.ClusterSpec{Instances: 3, MaxSwitchoverDelay: 3600, ImageName: "mysql:bench",
			Storage: v1.StorageConfiguration{Size: resource.MustParse("1Gi")}}}
	if err := c.Create(ctx, cluster); err != nil {
		return err
	}
	var next atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	total := o.pods + o.secrets
	for range o.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= total {
					return
				}
				var obj client.Object
				if i < o.pods {
					obj = unrelatedPod(namespaces[i%len(namespaces)], i)
				} else {
					obj = unrelatedSecret(namespaces[i%len(namespaces)], i-o.pods)
				}
				if err := c.Create(ctx, obj); err != nil {
					once.Do(func() { firstErr = fmt.Errorf("creating %s: %w", obj.GetName(), err) })
					return
				}
			}
		}()
	}
	wg.Wait()
	return firstErr
}

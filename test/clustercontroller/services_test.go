package clustercontroller

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
)

func getService(ctx context.Context, ns, name string) (*corev1.Service, error) {
	var s corev1.Service
	err := kc.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &s)
	return &s, err
}

// TestTemplateAdditionalAndDisabledServices applies the shared template, additional Services with
// both update strategies and a disabled default, then changes them.
func TestTemplateAdditionalAndDisabledServices(t *testing.T) {
	c := readyCluster(t, 2, func(c *v1.Cluster) {
		c.Spec.Managed = &v1.ManagedConfiguration{Services: &v1.ManagedServices{
			DisabledDefaultServices: []v1.ServiceSelectorType{v1.ServiceSelectorTypeR},
			Template: &v1.ServiceTemplateSpec{
				Metadata: v1.ServiceTemplateMetadata{Labels: map[string]string{"app.kubernetes.io/part-of": "my-app"},
					Annotations: map[string]string{"example.com/scheme": "internal"}},
				Spec: v1.ServiceTemplateServiceSpec{Type: corev1.ServiceTypeNodePort, SessionAffinity: corev1.ServiceAffinityClientIP},
			},
			Additional: []v1.ManagedService{
				{Name: "mysql-lb", SelectorType: v1.ServiceSelectorTypeRW, UpdateStrategy: v1.ServiceUpdateStrategyPatch,
					ServiceTemplate: v1.ServiceTemplateSpec{Spec: v1.ServiceTemplateServiceSpec{Type: corev1.ServiceTypeLoadBalancer}}},
				{Name: "reporting", SelectorType: v1.ServiceSelectorTypeRO, UpdateStrategy: v1.ServiceUpdateStrategyReplace,
					ServiceTemplate: v1.ServiceTemplateSpec{Metadata: v1.ServiceTemplateMetadata{Labels: map[string]string{"pool": "reporting"}}}},
			},
		}}
	})
	ns := c.Namespace
	check.Eventually(t, waitTimeout, "the Services exist", func(context.Context) (bool, error) {
		return slices.Equal(names(t, ns, &corev1.ServiceList{}),
			[]string{"db-1", "db-2", "db-mysql-lb", "db-reporting", "db-ro", "db-rw"}), nil
	})
	ctx := context.Background()
	expectService := func(name, rule string, ok func(*corev1.Service) bool) {
		t.Helper()
		s, err := getService(ctx, ns, name)
		if err != nil || !ok(s) {
			t.Errorf("%s: %s: %v %+v", name, rule, err, s)
		}
	}
	expectService("db-rw", "the template sets type, sessionAffinity, labels and annotations", func(s *corev1.Service) bool {
		return s.Spec.Type == corev1.ServiceTypeNodePort && s.Spec.SessionAffinity == corev1.ServiceAffinityClientIP &&
			s.Labels["app.kubernetes.io/part-of"] == "my-app" && s.Annotations["example.com/scheme"] == "internal" &&
			s.Labels[v1.ClusterLabel] == "db" && len(s.Spec.Ports) == 1 && s.Spec.Ports[0].Port == 3306 && s.Spec.ClusterIP != ""
	})
	expectService("db-mysql-lb", "patch merges its template onto the role defaults", func(s *corev1.Service) bool {
		return s.Spec.Type == corev1.ServiceTypeLoadBalancer && s.Spec.SessionAffinity == corev1.ServiceAffinityClientIP &&
			s.Labels["app.kubernetes.io/part-of"] == "my-app"
	})
	expectService("db-reporting", "replace uses its own template alone", func(s *corev1.Service) bool {
		return s.Spec.Type == corev1.ServiceTypeClusterIP && s.Spec.SessionAffinity == corev1.ServiceAffinityNone &&
			s.Labels["pool"] == "reporting" && s.Labels["app.kubernetes.io/part-of"] == "" && s.Labels[v1.ClusterLabel] == "db"
	})
	waitEndpoints(t, ns, map[string][]string{"db-mysql-lb": {"db-1"}, "db-reporting": {"db-2"}, "db-rw": {"db-1"}, "db-ro": {"db-2"}})

	t.Run("removing an additional Service and re-enabling a default converge", func(t *testing.T) {
		updateCluster(t, c, false, func(c *v1.Cluster) {
			c.Spec.Managed.Services.DisabledDefaultServices = nil
			c.Spec.Managed.Services.Additional = c.Spec.Managed.Services.Additional[1:]
			c.Spec.Managed.Services.Template.Metadata.Labels = nil
		})
		check.Eventually(t, waitTimeout, "the Services converge", func(context.Context) (bool, error) {
			return slices.Equal(names(t, ns, &corev1.ServiceList{}),
				[]string{"db-1", "db-2", "db-r", "db-reporting", "db-ro", "db-rw"}), nil
		})
		check.Eventually(t, waitTimeout, "a label dropped from the template is removed", func(ctx context.Context) (bool, error) {
			s, err := getService(ctx, ns, "db-rw")
			return err == nil && s.Labels["app.kubernetes.io/part-of"] == "", err
		})
		waitEndpoints(t, ns, map[string][]string{"db-r": {"db-1", "db-2"}})
		assertEvents(t, ns, "ServiceDeleted", "ServiceUpdated")
	})
	t.Run("a selector changed by hand is put back", func(t *testing.T) {
		s, err := getService(ctx, ns, "db-rw")
		if err != nil {
			t.Fatal(err)
		}
		old := s.DeepCopy()
		s.Spec.Selector = map[string]string{"hijack": "yes"}
		if err := kc.Patch(ctx, s, client.MergeFrom(old)); err != nil {
			t.Fatal(err)
		}
		waitEndpoints(t, ns, map[string][]string{"db-rw": {"db-1"}})
		check.Eventually(t, waitTimeout, "the operator's selector is restored", func(ctx context.Context) (bool, error) {
			s, err := getService(ctx, ns, "db-rw")
			return err == nil && s.Spec.Selector["hijack"] == "" && s.Spec.Selector[v1.InstanceLabel] == "db-1", err
		})
	})
}

package specs

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"

	mysqlv1alpha1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

const (
	rw = mysqlv1alpha1.ServiceSelectorTypeRW
	ro = mysqlv1alpha1.ServiceSelectorTypeRO
	r  = mysqlv1alpha1.ServiceSelectorTypeR
)

func TestRoleSelectors(t *testing.T) {
	for _, tc := range []struct {
		rule string
		role mysqlv1alpha1.ServiceSelectorType
		want map[string]string
	}{
		{"rw selects the current primary's Pod by name while it is routable", rw, map[string]string{mysqlv1alpha1.ClusterLabel: "db",
			mysqlv1alpha1.InstanceLabel: "db-2", mysqlv1alpha1.RoutableLabel: "true"}},
		{"ro selects routable replicas", ro, map[string]string{mysqlv1alpha1.ClusterLabel: "db",
			mysqlv1alpha1.RoleLabel: "replica", mysqlv1alpha1.RoutableLabel: "true"}},
		{"r selects any routable instance", r, map[string]string{mysqlv1alpha1.ClusterLabel: "db",
			mysqlv1alpha1.RoutableLabel: "true"}},
	} {
		if got := RoleSelector("db", tc.role, "db-2"); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v", tc.rule, got)
		}
	}
}

func TestBuildDefaultServices(t *testing.T) {
	lbTemplate := &mysqlv1alpha1.ServiceTemplateSpec{
		Metadata: mysqlv1alpha1.ServiceTemplateMetadata{
			Labels:      map[string]string{"app.kubernetes.io/part-of": "my-app", mysqlv1alpha1.ClusterLabel: "hijack"},
			Annotations: map[string]string{"lb/scheme": "internal"},
		},
		Spec: mysqlv1alpha1.ServiceTemplateServiceSpec{
			Type: corev1.ServiceTypeLoadBalancer, ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal,
			SessionAffinity: corev1.ServiceAffinityClientIP, LoadBalancerSourceRanges: []string{"10.0.0.0/8"},
			HealthCheckNodePort: 31000,
		},
	}
	for _, tc := range []struct {
		rule    string
		cluster *mysqlv1alpha1.Cluster
		check   func([]*corev1.Service) bool
	}{
		{"three default Services rw, ro, r", testCluster(), func(s []*corev1.Service) bool {
			return reflect.DeepEqual(serviceNames(s), []string{"db-rw", "db-ro", "db-r"})
		}},
		{"defaults are ClusterIP on mysql:3306, owned, labelled", testCluster(), func(s []*corev1.Service) bool {
			for _, svc := range s {
				if svc.Spec.Type != corev1.ServiceTypeClusterIP || !mysqlPortOnly(svc) || !ownedByCluster(svc.ObjectMeta) ||
					svc.Labels[mysqlv1alpha1.ClusterLabel] != "db" {
					return false
				}
			}
			return true
		}},
		{"each default Service selects its role", testCluster(), func(s []*corev1.Service) bool {
			return reflect.DeepEqual(s[0].Spec.Selector, RoleSelector("db", rw, "")) &&
				reflect.DeepEqual(s[1].Spec.Selector, RoleSelector("db", ro, "")) &&
				reflect.DeepEqual(s[2].Spec.Selector, RoleSelector("db", r, ""))
		}},
		{"disabledDefaultServices removes ro", withServices(testCluster(), mysqlv1alpha1.ManagedServices{
			DisabledDefaultServices: []mysqlv1alpha1.ServiceSelectorType{ro}}), func(s []*corev1.Service) bool {
			return reflect.DeepEqual(serviceNames(s), []string{"db-rw", "db-r"})
		}},
		{"rw can never be disabled", withServices(testCluster(), mysqlv1alpha1.ManagedServices{
			DisabledDefaultServices: []mysqlv1alpha1.ServiceSelectorType{rw, ro, r}}), func(s []*corev1.Service) bool {
			return reflect.DeepEqual(serviceNames(s), []string{"db-rw"})
		}},
		{"the template's whitelisted fields are merged on", withServices(testCluster(), mysqlv1alpha1.ManagedServices{
			Template: lbTemplate}), func(s []*corev1.Service) bool {
			sp := s[0].Spec
			return sp.Type == corev1.ServiceTypeLoadBalancer && sp.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal &&
				sp.SessionAffinity == corev1.ServiceAffinityClientIP && reflect.DeepEqual(sp.LoadBalancerSourceRanges, []string{"10.0.0.0/8"}) &&
				sp.HealthCheckNodePort == 31000 && s[0].Annotations["lb/scheme"] == "internal" &&
				s[0].Labels["app.kubernetes.io/part-of"] == "my-app"
		}},
		{"operator labels win over template labels", withServices(testCluster(), mysqlv1alpha1.ManagedServices{
			Template: lbTemplate}), func(s []*corev1.Service) bool {
			return s[0].Labels[mysqlv1alpha1.ClusterLabel] == "db"
		}},
		{"the template never changes selector or ports", withServices(testCluster(), mysqlv1alpha1.ManagedServices{
			Template: lbTemplate}), func(s []*corev1.Service) bool {
			return mysqlPortOnly(s[1]) && reflect.DeepEqual(s[1].Spec.Selector, RoleSelector("db", ro, "")) && s[1].Spec.ClusterIP == ""
		}},
		{"externalName is merged", withServices(testCluster(), mysqlv1alpha1.ManagedServices{
			Template: &mysqlv1alpha1.ServiceTemplateSpec{Spec: mysqlv1alpha1.ServiceTemplateServiceSpec{
				Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.com"}}}), func(s []*corev1.Service) bool {
			return s[2].Spec.Type == corev1.ServiceTypeExternalName && s[2].Spec.ExternalName == "db.example.com"
		}},
	} {
		if !tc.check(BuildDefaultServices(tc.cluster)) {
			t.Errorf("rule broken: %s", tc.rule)
		}
	}
}

func mysqlPortOnly(svc *corev1.Service) bool {
	return len(svc.Spec.Ports) == 1 && svc.Spec.Ports[0].Name == "mysql" && svc.Spec.Ports[0].Port == 3306 &&
		svc.Spec.Ports[0].TargetPort.StrVal == "mysql"
}

func TestBuildAdditionalServices(t *testing.T) {
	shared := &mysqlv1alpha1.ServiceTemplateSpec{
		Metadata: mysqlv1alpha1.ServiceTemplateMetadata{Labels: map[string]string{"shared": "yes"}},
		Spec:     mysqlv1alpha1.ServiceTemplateServiceSpec{Type: corev1.ServiceTypeNodePort, SessionAffinity: corev1.ServiceAffinityClientIP},
	}
	own := mysqlv1alpha1.ServiceTemplateSpec{
		Metadata: mysqlv1alpha1.ServiceTemplateMetadata{Labels: map[string]string{"pool": "reporting", mysqlv1alpha1.ClusterLabel: "x"}},
		Spec:     mysqlv1alpha1.ServiceTemplateServiceSpec{Type: corev1.ServiceTypeLoadBalancer},
	}
	build := func(strategy mysqlv1alpha1.ServiceUpdateStrategy, sel mysqlv1alpha1.ServiceSelectorType) *corev1.Service {
		c := withServices(testCluster(), mysqlv1alpha1.ManagedServices{Template: shared, Additional: []mysqlv1alpha1.ManagedService{
			{Name: "extra", SelectorType: sel, UpdateStrategy: strategy, ServiceTemplate: own}}})
		return BuildAdditionalServices(c)[0]
	}
	for _, tc := range []struct {
		rule string
		svc  *corev1.Service
		ok   func(*corev1.Service) bool
	}{
		{"named <cluster>-<name> and owned", build("patch", ro), func(s *corev1.Service) bool {
			return s.Name == "db-extra" && ownedByCluster(s.ObjectMeta)
		}},
		{"selectorType ro selects replicas", build("patch", ro), func(s *corev1.Service) bool {
			return reflect.DeepEqual(s.Spec.Selector, RoleSelector("db", ro, ""))
		}},
		{"selectorType rw selects the primary", build("replace", rw), func(s *corev1.Service) bool {
			return reflect.DeepEqual(s.Spec.Selector, RoleSelector("db", rw, ""))
		}},
		{"patch merges onto the role defaults, own template last", build("patch", r), func(s *corev1.Service) bool {
			return s.Labels["shared"] == "yes" && s.Labels["pool"] == "reporting" &&
				s.Spec.SessionAffinity == corev1.ServiceAffinityClientIP && s.Spec.Type == corev1.ServiceTypeLoadBalancer
		}},
		{"an empty strategy means patch", build("", r), func(s *corev1.Service) bool { return s.Labels["shared"] == "yes" }},
		{"replace uses its own template alone", build("replace", r), func(s *corev1.Service) bool {
			return s.Labels["shared"] == "" && s.Labels["pool"] == "reporting" && s.Spec.SessionAffinity == "" &&
				s.Spec.Type == corev1.ServiceTypeLoadBalancer
		}},
		{"replace keeps the operator's selector, ports and owner labels", build("replace", ro), func(s *corev1.Service) bool {
			return mysqlPortOnly(s) && s.Labels[mysqlv1alpha1.ClusterLabel] == "db" && ownedByCluster(s.ObjectMeta)
		}},
	} {
		if !tc.ok(tc.svc) {
			t.Errorf("rule broken: %s: %+v", tc.rule, tc.svc)
		}
	}
	if got := BuildAdditionalServices(testCluster()); len(got) != 0 {
		t.Errorf("no additional Services unless declared: %v", serviceNames(got))
	}
}

func TestBuildInstanceService(t *testing.T) {
	svc := BuildInstanceService(testCluster(), "db-2")
	for _, tc := range []struct {
		rule string
		ok   bool
	}{
		{"named like the instance and owned", svc.Name == "db-2" && ownedByCluster(svc.ObjectMeta)},
		{"headless", svc.Spec.ClusterIP == corev1.ClusterIPNone},
		{"publishes the Pod before it is ready", svc.Spec.PublishNotReadyAddresses},
		{"selects exactly its instance", reflect.DeepEqual(svc.Spec.Selector, map[string]string{
			mysqlv1alpha1.ClusterLabel: "db", mysqlv1alpha1.InstanceLabel: "db-2"})},
		{"mysql and manager ports", len(svc.Spec.Ports) == 2 && svc.Spec.Ports[0].Port == 3306 && svc.Spec.Ports[1].Port == ManagerPort},
	} {
		if !tc.ok {
			t.Errorf("rule broken: %s", tc.rule)
		}
	}
}

// TestWriteServiceNames: the Services that route writes are rw and the additional ones that
// select the primary, never ro or r.
func TestWriteServiceNames(t *testing.T) {
	c := withServices(testCluster(), mysqlv1alpha1.ManagedServices{Additional: []mysqlv1alpha1.ManagedService{
		{Name: "writer", SelectorType: mysqlv1alpha1.ServiceSelectorTypeRW},
		{Name: "reader", SelectorType: mysqlv1alpha1.ServiceSelectorTypeRO},
		{Name: "any", SelectorType: mysqlv1alpha1.ServiceSelectorTypeR},
	}})
	if got, want := WriteServiceNames(c), []string{"db-rw", "db-writer"}; !reflect.DeepEqual(got, want) {
		t.Errorf("write Services %v, want %v", got, want)
	}
}

// TestWriteServicesFollowTheCurrentPrimary: rw and the additional rw Services select the Pod
// status.currentPrimary names, so a new primary moves them by one update of each Service.
func TestWriteServicesFollowTheCurrentPrimary(t *testing.T) {
	c := testCluster()
	c.Spec.Managed = &mysqlv1alpha1.ManagedConfiguration{Services: &mysqlv1alpha1.ManagedServices{
		Additional: []mysqlv1alpha1.ManagedService{{Name: "writer", SelectorType: rw}}}}
	c.Status.CurrentPrimary = "db-3"
	var names []string
	for _, s := range append(BuildDefaultServices(c), BuildAdditionalServices(c)...) {
		if s.Spec.Selector[mysqlv1alpha1.InstanceLabel] == "db-3" {
			names = append(names, s.Name)
		}
	}
	if want := []string{"db-rw", "db-writer"}; !reflect.DeepEqual(names, want) || !reflect.DeepEqual(WriteServiceNames(c), want) {
		t.Errorf("Services selecting db-3: %v, write Services %v, want %v", names, WriteServiceNames(c), want)
	}
}

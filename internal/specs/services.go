package specs

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	mysqlv1alpha1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// DefaultServiceRoles lists the default role Services in a fixed order.
var DefaultServiceRoles = []mysqlv1alpha1.ServiceSelectorType{
	mysqlv1alpha1.ServiceSelectorTypeRW, mysqlv1alpha1.ServiceSelectorTypeRO, mysqlv1alpha1.ServiceSelectorTypeR,
}

// RoleSelector is the Pod selector of a role Service: rw selects the Pod of the current primary
// (primary, status.currentPrimary) by its instance label while it is routable, ro routable
// replicas, r any routable instance. Readiness is left to EndpointSlices, which list only ready
// Pods.
//
// rw names its Pod rather than selecting role=primary so that a change of primary moves rw by one
// update, of the Service, in the reconcile that sees the new primary recorded: by labels it took
// two Pod updates milliseconds apart (the old primary out, the new one in), and the EndpointSlice
// controller, whose second sync found its cache without the slice the first had just written,
// retried after its one-second back-off with rw empty meanwhile (measured on the local node: the
// new primary entered rw 1.0 s after its label), and a connection attempted while kube-proxy had
// no endpoint for rw was dropped, not refused, costing the client its SYN retransmission (1 s).
// It also makes two Pods in rw impossible by construction.
func RoleSelector(cluster string, role mysqlv1alpha1.ServiceSelectorType, primary string) map[string]string {
	sel := map[string]string{
		mysqlv1alpha1.ClusterLabel:  cluster,
		mysqlv1alpha1.RoutableLabel: RoutableTrue,
	}
	switch role {
	case mysqlv1alpha1.ServiceSelectorTypeRW:
		sel[mysqlv1alpha1.InstanceLabel] = primary
	case mysqlv1alpha1.ServiceSelectorTypeRO:
		sel[mysqlv1alpha1.RoleLabel] = mysqlv1alpha1.RoleReplica
	}
	return sel
}

// BuildInstanceService returns the headless Service of one instance. It publishes the Pod's
// address before it is ready (replicas clone from and follow an instance by this name) and is not
// user-configurable.
func BuildInstanceService(c *mysqlv1alpha1.Cluster, instance string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: objectMeta(c, instance),
		Spec: corev1.ServiceSpec{
			Type:                     corev1.ServiceTypeClusterIP,
			ClusterIP:                corev1.ClusterIPNone,
			PublishNotReadyAddresses: true,
			Selector: map[string]string{
				mysqlv1alpha1.ClusterLabel:  c.Name,
				mysqlv1alpha1.InstanceLabel: instance,
			},
			Ports: []corev1.ServicePort{
				mysqlServicePort(),
				{Name: ManagerPortName, Port: ManagerPort, TargetPort: intstr.FromString(ManagerPortName), Protocol: corev1.ProtocolTCP},
			},
		},
	}
}

// BuildDefaultServices returns the enabled default role Services (rw always) with the shared
// template merged on.
func BuildDefaultServices(c *mysqlv1alpha1.Cluster) []*corev1.Service {
	ms := managedServices(c)
	disabled := map[mysqlv1alpha1.ServiceSelectorType]bool{}
	for _, d := range ms.DisabledDefaultServices {
		disabled[d] = d != mysqlv1alpha1.ServiceSelectorTypeRW
	}
	var out []*corev1.Service
	for _, role := range DefaultServiceRoles {
		if !disabled[role] {
			out = append(out, buildDefaultService(c, role))
		}
	}
	return out
}

// BuildAdditionalServices returns the user-declared Services <cluster>-<name>. With patch their
// template is merged onto the role's default Service (shared template included); with replace it
// is used alone. Either way the operator's selector, ports and labels win.
func BuildAdditionalServices(c *mysqlv1alpha1.Cluster) []*corev1.Service {
	var out []*corev1.Service
	for i := range managedServices(c).Additional {
		a := &managedServices(c).Additional[i]
		svc := emptyService(c, AdditionalServiceName(c.Name, a.Name))
		if a.UpdateStrategy != mysqlv1alpha1.ServiceUpdateStrategyReplace {
			applyTemplate(svc, sharedTemplate(c))
		}
		applyTemplate(svc, &a.ServiceTemplate)
		ownServiceFields(svc, c, a.SelectorType)
		out = append(out, svc)
	}
	return out
}

func buildDefaultService(c *mysqlv1alpha1.Cluster, role mysqlv1alpha1.ServiceSelectorType) *corev1.Service {
	svc := emptyService(c, RoleServiceName(c.Name, role))
	applyTemplate(svc, sharedTemplate(c))
	ownServiceFields(svc, c, role)
	return svc
}

func emptyService(c *mysqlv1alpha1.Cluster, name string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: objectMeta(c, name),
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP},
	}
}

// ownServiceFields sets what the operator always owns: the selector, the mysql port, no
// clusterIP of its own choosing, and the owner-tracking labels over any template label.
func ownServiceFields(svc *corev1.Service, c *mysqlv1alpha1.Cluster, role mysqlv1alpha1.ServiceSelectorType) {
	svc.Labels = mergeLabels(svc.Labels, ClusterLabels(c.Name))
	svc.Spec.Selector = RoleSelector(c.Name, role, c.Status.CurrentPrimary)
	svc.Spec.Ports = []corev1.ServicePort{mysqlServicePort()}
	svc.Spec.ClusterIP = ""
	svc.Spec.ClusterIPs = nil
}

func mysqlServicePort() corev1.ServicePort {
	return corev1.ServicePort{Name: MySQLPortName, Port: MySQLPort, TargetPort: intstr.FromString(MySQLPortName), Protocol: corev1.ProtocolTCP}
}

func managedServices(c *mysqlv1alpha1.Cluster) *mysqlv1alpha1.ManagedServices {
	if c.Spec.Managed == nil || c.Spec.Managed.Services == nil {
		return &mysqlv1alpha1.ManagedServices{}
	}
	return c.Spec.Managed.Services
}

func sharedTemplate(c *mysqlv1alpha1.Cluster) *mysqlv1alpha1.ServiceTemplateSpec {
	return managedServices(c).Template
}

// WriteServiceNames are the names of the Cluster's Services that route writes: those that select
// the primary (rw, the default one and the additional ones).
func WriteServiceNames(c *mysqlv1alpha1.Cluster) []string {
	var out []string
	for _, svc := range append(BuildDefaultServices(c), BuildAdditionalServices(c)...) {
		if _, rw := svc.Spec.Selector[mysqlv1alpha1.InstanceLabel]; rw {
			out = append(out, svc.Name)
		}
	}
	return out
}

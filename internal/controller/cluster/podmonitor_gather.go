package cluster

import (
	"context"
	"fmt"
	"sync"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// PodMonitorRecheckInterval is how long the operator trusts that the PodMonitor kind is not
// installed before it asks the API server's discovery again: installing prometheus-operator's
// CRDs after the operator is picked up within this time, without a restart.
const PodMonitorRecheckInterval = time.Minute

// podMonitorNotInstalled is why PodMonitors cannot be kept when the kind is not installed.
const podMonitorNotInstalled = "the PodMonitor kind (monitoring.coreos.com/v1) is not installed in this Kubernetes cluster; " +
	"install prometheus-operator's CRDs (the operator looks again every minute) or turn spec.monitoring.podMonitor off"

var podMonitorKind = schema.GroupKind{Group: monitoringv1.SchemeGroupVersion.Group, Kind: monitoringv1.PodMonitorsKind}

// podMonitorMemory is what the reconciler remembers about PodMonitors between reconciles: whether
// the kind was missing when last checked, and the failed writes by PodMonitor.
type podMonitorMemory struct {
	mu      sync.Mutex
	checked time.Time
	missing string
	failed  map[client.ObjectKey]string
}

// kindUnavailable says why the PodMonitor kind cannot be used, empty when it can. mapper is asked
// each time while the kind was found (a cached answer), and at most once per
// PodMonitorRecheckInterval while it was not (each miss costs a discovery request).
func (m *podMonitorMemory) kindUnavailable(mapper meta.RESTMapper, now time.Time) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.missing != "" && now.Sub(m.checked) < PodMonitorRecheckInterval {
		return m.missing
	}
	m.checked, m.missing = now, ""
	if mapper == nil {
		m.missing = "the operator has no REST mapper to look the PodMonitor kind up with"
		return m.missing
	}
	_, err := mapper.RESTMapping(podMonitorKind, monitoringv1.SchemeGroupVersion.Version)
	switch {
	case meta.IsNoMatchError(err):
		m.missing = podMonitorNotInstalled
	case err != nil:
		m.missing = fmt.Sprintf("cannot tell whether the PodMonitor kind is installed: %v", err)
	}
	return m.missing
}

// noteWrite remembers the outcome of a write of the PodMonitor key.
func (m *podMonitorMemory) noteWrite(key client.ObjectKey, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err == nil {
		delete(m.failed, key)
		return
	}
	if m.failed == nil {
		m.failed = map[client.ObjectKey]string{}
	}
	m.failed[key] = err.Error()
}

func (m *podMonitorMemory) lastWriteError(key client.ObjectKey) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.failed[key]
}

// kindNotServed reports whether err is the API server's answer for a path it does not serve (a
// 404 without a Status body), not for a PodMonitor that does not exist: the CRD was deleted after
// the REST mapper learnt the kind, and the mapper keeps what it learnt.
func kindNotServed(err error) bool {
	return apierrors.IsNotFound(err) && apierrors.HasStatusCause(err, metav1.CauseTypeUnexpectedServerResponse)
}

// observePodMonitor reads the Cluster's PodMonitor from the API server (never through the cache:
// see podmonitor.go) while the Cluster asks for one, carries the PodMonitorReady condition, or
// the last write failed. It never fails: a kind that is not installed, or a read the API server
// refuses, is reported in Unavailable.
func (r *Reconciler) observePodMonitor(ctx context.Context, c *v1.Cluster) PodMonitorObservation {
	key := client.ObjectKey{Namespace: c.Namespace, Name: specs.PodMonitorName(c.Name)}
	o := PodMonitorObservation{LastWriteError: r.podMonitors.lastWriteError(key)}
	if !c.PodMonitorEnabled() && o.LastWriteError == "" && meta.FindStatusCondition(c.Status.Conditions, v1.ConditionPodMonitorReady) == nil {
		return o
	}
	o.Looked = true
	if o.Unavailable = r.podMonitors.kindUnavailable(r.RESTMapper, r.Clock.Now()); o.Unavailable != "" {
		return o
	}
	var pm monitoringv1.PodMonitor
	err := r.APIReader.Get(ctx, key, &pm)
	switch {
	case err == nil:
		o.Live = &pm
	case meta.IsNoMatchError(err) || kindNotServed(err):
		o.Unavailable = podMonitorNotInstalled
	case apierrors.IsNotFound(err):
	default:
		o.Unavailable = fmt.Sprintf("reading PodMonitor %s: %v", key.Name, err)
	}
	return o
}

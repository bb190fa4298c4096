package operator

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// undecodableObjects counts the operator's objects left out of a list because they do not decode
// (v1alpha1.UndecodableItem): each one is reconciled by nobody until it is fixed or deleted.
var undecodableObjects = sync.OnceValue(func() *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cnm_operator_undecodable_objects_total",
		Help: "Clusters, Backups and ScheduledBackups left out of the operator's lists because they do not decode; they are not reconciled."},
		[]string{"kind", "namespace", "name"})
	ctrlmetrics.Registry.MustRegister(c)
	return c
})

// reportUndecodable makes a list item that does not decode visible: a log line, the metric, and a
// Warning Event on the object (kubectl describe shows it), the other objects being reconciled.
func reportUndecodable(rec record.EventRecorder) {
	counter := undecodableObjects()
	log := ctrl.Log.WithName("undecodable")
	v1.UndecodableItem = func(kind, namespace, name string, err error) {
		log.Info("an object does not decode and is not reconciled; fix or delete it", "kind", kind,
			"namespace", namespace, "name", name, "error", err.Error())
		counter.WithLabelValues(kind, namespace, name).Inc()
		ref := &corev1.ObjectReference{APIVersion: v1.GroupVersion.String(), Kind: kind, Namespace: namespace, Name: name}
		rec.Eventf(ref, corev1.EventTypeWarning, "Undecodable",
			"The operator cannot decode this %s and does not reconcile it: %v", kind, err)
	}
}

package kit

import (
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// The operator's manager caches only what it owns, so that its memory follows the number of
// Clusters and Backups, not the size of the cluster it runs in.

// OwnedKinds are the kinds a Cluster or a Backup creates, every object of which carries
// v1.ClusterLabel. The cache holds only the labelled ones; a read that must also see an
// unlabelled object of these kinds (is this name taken by someone else?) goes to the APIReader.
func OwnedKinds() []client.Object {
	return []client.Object{&corev1.Pod{}, &corev1.PersistentVolumeClaim{}, &corev1.Service{}, &corev1.ServiceAccount{},
		&rbacv1.Role{}, &rbacv1.RoleBinding{}, &policyv1.PodDisruptionBudget{}, &batchv1.Job{}}
}

// OwnedSelector selects the objects carrying v1.ClusterLabel, whatever its value.
func OwnedSelector() labels.Selector {
	req, err := labels.NewRequirement(v1.ClusterLabel, selection.Exists, nil)
	if err != nil {
		panic(err) // a constant, valid label key
	}
	return labels.NewSelector().Add(*req)
}

// CacheOptions is the operator's cache: the namespaces given (every namespace when none), only the
// labelled objects of OwnedKinds, and no managedFields on any object. The operator's own kinds
// (Clusters, Backups, ScheduledBackups) and the Leases it watches are cached whole.
func CacheOptions(namespaces ...string) cache.Options {
	byObject := map[client.Object]cache.ByObject{}
	for _, o := range OwnedKinds() {
		byObject[o] = cache.ByObject{Label: OwnedSelector()}
	}
	opts := cache.Options{ByObject: byObject, DefaultTransform: cache.TransformStripManagedFields()}
	if len(namespaces) > 0 {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range namespaces {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	return opts
}

// ClientOptions makes the manager's client read Secrets and ConfigMaps from the API server: a
// cached read of one would start an informer holding every Secret the operator may see. PodMonitors
// too: their kind may not be installed, and an informer of a missing kind never syncs.
func ClientOptions() client.Options {
	return client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}, &corev1.ConfigMap{}, &monitoringv1.PodMonitor{}}}}
}

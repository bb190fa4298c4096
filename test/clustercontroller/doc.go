// Package clustercontroller runs the Cluster controller against the real API server with
// kube-controller-manager (garbage collection, EndpointSlices). A fake kubelet in the tests binds
// Pods to a Node and reports them Running and Ready, and injected instance reports stand in for
// the instance managers, so every rule is checked on real objects: which Services select which
// Pods is read from the EndpointSlices the real controller writes.
package clustercontroller

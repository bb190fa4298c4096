// Package specs builds every Kubernetes object a Cluster owns: instance Pods and their
// PersistentVolumeClaims, per-instance and role Services, the PodDisruptionBudget, and the names
// and labels that tie them together. Every function here is pure: the same Cluster always yields
// the same object, so the controller can compare what it wants with what exists and tests can
// check each rule of the spec without an API server.
package specs

// Package v1alpha1 holds the mysql.cloudnative-mysql.io/v1alpha1 API: Cluster, Backup and
// ScheduledBackup, their schema defaults and CEL validation markers, and small pure helpers that
// controllers and tests share (deterministic child names, retention windows, phase checks).
//
// +kubebuilder:object:generate=true
// +groupName=mysql.cloudnative-mysql.io
package v1alpha1

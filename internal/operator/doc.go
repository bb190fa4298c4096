// Package operator assembles the controller-runtime manager that runs the operator: the scheme,
// leader election, health probes, metrics and the reconcilers of internal/controller.
package operator

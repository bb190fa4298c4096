// Package controller is the home of the operator's reconcilers, one package each: cluster,
// backup, scheduledbackup and retention, with kit (what every reconciler does alike) and
// instances (what the operator learns of instance Pods). Each reconciler follows gather → decide
// → act: it reads what it needs, calls a pure function that returns a decision value, and
// performs exactly that decision; none imports another's package.
package controller

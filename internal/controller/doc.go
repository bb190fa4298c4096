// Package controller holds the operator's reconcilers. Each follows gather → decide → act: it
// reads what it needs, calls a pure function that returns a decision value, and performs exactly
// that decision. Time comes from an injected clock, Events from each reconciler's table
// (cluster_events.go, backup_events.go, of the eventKind of event_kinds.go).
package controller

// Package controller holds the operator's reconcilers. Each follows gather → decide → act: it
// reads what it needs, calls a pure function that returns a decision value, and performs exactly
// that decision. Time comes from an injected clock, Events from the table in events.go.
package controller

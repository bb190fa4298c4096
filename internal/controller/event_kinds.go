package controller

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
)

// eventKind is one row of a reconciler's table of Events (cluster_events.go, backup_events.go):
// its type, its reason (what `kubectl describe` and `kubectl get events` show) and the format of
// its message. It is kit.EventKind for the reconcilers not yet in their own package.
type eventKind struct {
	Type   string
	Reason string
	Format string
}

// eventRecord is one Event to emit: a row of the table and its rendered message.
type eventRecord struct {
	Kind    eventKind
	Message string
}

// with renders the message of k with args.
func (k eventKind) with(args ...any) eventRecord {
	return eventRecord{Kind: k, Message: fmt.Sprintf(k.Format, args...)}
}

// emit records events on obj in order.
func emit(rec record.EventRecorder, obj runtime.Object, events []eventRecord) {
	for _, e := range events {
		rec.Event(obj, e.Kind.Type, e.Kind.Reason, e.Message)
	}
}

package kit

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
)

// EventKind is one row of a reconciler's table of Events: its type, its reason (what
// `kubectl describe` and `kubectl get events` show) and the format of its message. Each
// reconciler package keeps its table in its events.go.
type EventKind struct {
	Type   string
	Reason string
	Format string
}

// Event is one Event to emit: a row of a table and its rendered message.
type Event struct {
	Kind    EventKind
	Message string
}

// With renders the message of k with args.
func (k EventKind) With(args ...any) Event {
	return Event{Kind: k, Message: fmt.Sprintf(k.Format, args...)}
}

// Emit records events on obj in order.
func Emit(rec record.EventRecorder, obj runtime.Object, events []Event) {
	for _, e := range events {
		rec.Event(obj, e.Kind.Type, e.Kind.Reason, e.Message)
	}
}

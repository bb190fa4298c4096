package ctrlworld

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/kubetest"
)

// EventuallyTimeout is how long World.Eventually waits.
const EventuallyTimeout = time.Minute

// World is one test's namespace on the shared API server.
type World struct {
	T        *testing.T
	Ctx      context.Context
	Env      *kubetest.Env
	Client   client.Client
	NS       string
	Clock    *clocktesting.FakeClock
	Recorder *record.FakeRecorder
}

// Option changes a World being built.
type Option func(*World)

// ClockAt starts the fake clock at t instead of the wall clock.
func ClockAt(t time.Time) Option { return func(w *World) { w.Clock.SetTime(t) } }

// New builds a World in a new namespace of shared's API server.
func New(t *testing.T, shared *kubetest.Shared, opts ...Option) *World {
	t.Helper()
	e := shared.Get(t)
	w := &World{T: t, Ctx: context.Background(), Env: e, Client: e.Client, NS: e.NewNamespace(t),
		Clock: clocktesting.NewFakeClock(time.Now()), Recorder: record.NewFakeRecorder(1000)}
	for _, o := range opts {
		o(w)
	}
	return w
}

// Elsewhere is a World in another new namespace of the same API server, sharing w's clock and
// recorder.
func (w *World) Elsewhere() *World {
	w.T.Helper()
	o := *w
	o.NS = w.Env.NewNamespace(w.T)
	return &o
}

// Key names an object of the namespace.
func (w *World) Key(name string) client.ObjectKey {
	return client.ObjectKey{Namespace: w.NS, Name: name}
}

// Create creates obj, failing the test on error.
func (w *World) Create(obj client.Object) {
	w.T.Helper()
	if err := w.Client.Create(w.Ctx, obj); err != nil {
		w.T.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

// Get reads the named object of the namespace into obj, failing the test on error.
func (w *World) Get(name string, obj client.Object) {
	w.T.Helper()
	if err := w.Client.Get(w.Ctx, w.Key(name), obj); err != nil {
		w.T.Fatalf("reading %T %s: %v", obj, name, err)
	}
}

// Get reads the named object of w's namespace, failing the test on error: Get[v1.Backup](w, name).
func Get[T any, P interface {
	*T
	client.Object
}](w *World, name string) P {
	w.T.Helper()
	obj := P(new(T))
	w.Get(name, obj)
	return obj
}

// UpdateStatus writes obj's status through the status subresource, failing the test on error.
func (w *World) UpdateStatus(obj client.Object) {
	w.T.Helper()
	if err := w.Client.Status().Update(w.Ctx, obj); err != nil {
		w.T.Fatalf("updating the status of %T %s: %v", obj, obj.GetName(), err)
	}
}

// Exists reports whether the named object of the namespace exists.
func (w *World) Exists(name string, obj client.Object) func(ctx context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		err := w.Client.Get(ctx, w.Key(name), obj)
		return err == nil, client.IgnoreNotFound(err)
	}
}

// Gone reports whether obj no longer exists.
func (w *World) Gone(obj client.Object) func(ctx context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		err := w.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	}
}

// Eventually waits up to EventuallyTimeout for cond; a failure shows kube-controller-manager's
// log when it runs.
func (w *World) Eventually(what string, cond func(ctx context.Context) (bool, error)) {
	w.T.Helper()
	check.Eventually(w.T, EventuallyTimeout, what, cond, func() string {
		if log := w.Env.ControllerManagerLog(); log != "" {
			return "kube-controller-manager log:\n" + log
		}
		return ""
	})
}

// Events drains the Events recorded so far, as "Type Reason Message" lines.
func (w *World) Events() []string {
	var out []string
	for {
		select {
		case e := <-w.Recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// NamespaceEvents lists the Events the API server holds about the named object.
func (w *World) NamespaceEvents(involved string) []corev1.Event {
	w.T.Helper()
	var list corev1.EventList
	if err := w.Client.List(w.Ctx, &list, client.InNamespace(w.NS)); err != nil {
		w.T.Fatalf("listing Events: %v", err)
	}
	var out []corev1.Event
	for _, e := range list.Items {
		if e.InvolvedObject.Name == involved {
			out = append(out, e)
		}
	}
	return out
}

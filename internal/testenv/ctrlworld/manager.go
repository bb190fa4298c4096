package ctrlworld

import (
	"context"

	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
)

// StartManager runs a controller-runtime manager that watches only the World's namespace, with the
// operator's cache (only its labelled objects) and client (Secrets read uncached), set up
// by setup (which registers the reconcilers under test), until the test ends.
func (w *World) StartManager(setup func(mgr ctrl.Manager) error) {
	w.T.Helper()
	mgr, err := ctrl.NewManager(w.Env.Config, ctrl.Options{
		Scheme:     w.Env.Scheme,
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Cache:      kit.CacheOptions(w.NS),
		Client:     kit.ClientOptions(),
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		w.T.Fatal(err)
	}
	if err := setup(mgr); err != nil {
		w.T.Fatal(err)
	}
	ctx, cancel := context.WithCancel(w.Ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	w.T.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			w.T.Errorf("manager: %v", err)
		}
	})
}

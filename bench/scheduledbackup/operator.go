package main

import (
	"fmt"
	"net/http"
	"net/http/pprof"
	"os"

	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/scheduledbackup"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/operator"
)

// runOperator is the operator process of the benchmark: the production ScheduledBackup and Backup
// reconcilers, wired as `manager controller` wires them, in a manager
// configured like it (ctrl.GetConfig, info logs, the operator's Event broadcaster, cache and client); no Cluster or
// retention controller runs. With standIn only the ScheduledBackup reconciler runs, so its CPU and
// memory are the scheduler's alone.
func runOperator(metricsAddr string, workers int, standIn bool) error {
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zap.Options{})))
	registerLatencyMetric()
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return err
	}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return createTimer{rt} })
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: operator.NewScheme(),
		Metrics: metricsserver.Options{BindAddress: metricsAddr, ExtraHandlers: map[string]http.Handler{
			"/debug/pprof/profile": http.HandlerFunc(pprof.Profile),
		}},
		HealthProbeBindAddress: "0",
		EventBroadcaster:       operator.NewEventBroadcaster(),
		Cache:                  kit.CacheOptions(),
		Client:                 kit.ClientOptions(),
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	if standIn {
		r := &scheduledbackup.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
			Recorder: mgr.GetEventRecorderFor("scheduledbackup-controller"), Clock: clock.RealClock{},
			MaxConcurrentReconciles: workers}
		if err := r.SetupWithManager(mgr); err != nil {
			return err
		}
	} else if err := operator.RegisterBackupControllers(mgr, operator.Options{ScheduledBackupWorkers: workers}); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "operator started")
	return mgr.Start(ctrl.SetupSignalHandler())
}

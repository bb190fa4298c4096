package operator

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/netip"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	mysqlv1alpha1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/backup"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/cluster"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/instances"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/kit"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/location"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/protection"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/retention"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/scheduledbackup"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/verification"
)

// LeaderElectionID is the Lease that elects the active operator replica.
const LeaderElectionID = "cloudnative-mysql-operator"

// Options configures the operator process.
type Options struct {
	MetricsBindAddress string
	// MetricsInsecure serves metrics over plain HTTP to anyone who can reach the port; by
	// default they are served over HTTPS to callers the API server authenticates (TokenReview)
	// and authorises (SubjectAccessReview for GET on the non-resource URL /metrics).
	MetricsInsecure bool
	// MetricsCertDir holds tls.crt and tls.key for the metrics server, reloaded when they
	// change; empty (or files missing) means a self-signed certificate made at start.
	MetricsCertDir          string
	HealthProbeBindAddress  string
	LeaderElection          bool
	LeaderElectionNamespace string
	// ScheduledBackupWorkers is how many ScheduledBackups are reconciled in parallel; 0 means
	// scheduledbackup.DefaultWorkers.
	ScheduledBackupWorkers int
	// MinScheduleInterval refuses ScheduledBackups whose slots come closer than it; 0 refuses
	// none.
	MinScheduleInterval time.Duration
	// ScheduleSkipImmediately is what an unset spec.skipImmediately of a ScheduledBackup means.
	ScheduleSkipImmediately bool
	// BackupWorkers is how many Backups are reconciled in parallel; 0 means
	// backup.DefaultWorkers.
	BackupWorkers int
	// Namespaces are the namespaces the operator watches and acts in; empty means every namespace.
	// Each needs the operator's permissions there (config/namespaced).
	Namespaces []string
	// ObjectStoreAllowedCIDRs are the networks the operator may reach object stores in although
	// they are loopback, link-local or unspecified addresses (ObjectStoreGuard); empty refuses
	// every such address. For a test or an S3 server beside the operator, never by default.
	ObjectStoreAllowedCIDRs []netip.Prefix
	// ManagerBinary is the instance manager binary every instance is brought to in place (the
	// operator's own, instances.OwnManagerBinary); nil: instance managers are not updated in place.
	ManagerBinary *instances.ManagerBinary
	// Clock is the time source of every reconciler; nil means the real clock.
	Clock clock.PassiveClock
	// RepeatableInProcess lets one process build the manager more than once (a test restarting
	// the operator); controller-runtime otherwise refuses a controller name seen before.
	RepeatableInProcess bool
}

// NewScheme returns a scheme with the built-in kinds, this operator's API and the PodMonitor of
// prometheus-operator (a Cluster's spec.monitoring.podMonitor; whether its CRD is installed is
// checked at run time).
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(mysqlv1alpha1.AddToScheme(s))
	utilruntime.Must(monitoringv1.AddToScheme(s))
	return s
}

// NewEventBroadcaster is the operator's Event broadcaster. The manager lives as long as the
// process, so a broadcaster of its own leaks nothing. Its correlator lets an object emit a burst
// of 100 Events, refilled one per 10 s, where client-go's default (25, then one per 5 minutes)
// hides a Cluster's later transitions.
func NewEventBroadcaster() record.EventBroadcaster {
	return record.NewBroadcasterWithCorrelatorOptions(record.CorrelatorOptions{BurstSize: 100, QPS: 0.1})
}

// metricsOptions serves metrics over HTTPS with authentication and authorisation through the
// API server, unless opts.MetricsInsecure. HTTP/2 is off (its rapid-reset and stream attacks
// reach the server before any authentication).
func metricsOptions(opts Options) metricsserver.Options {
	if opts.MetricsInsecure {
		return metricsserver.Options{BindAddress: opts.MetricsBindAddress}
	}
	return metricsserver.Options{
		BindAddress:    opts.MetricsBindAddress,
		SecureServing:  true,
		FilterProvider: filters.WithAuthenticationAndAuthorization,
		CertDir:        opts.MetricsCertDir,
		TLSOpts: []func(*tls.Config){func(c *tls.Config) {
			c.NextProtos = []string{"http/1.1"}
			c.MinVersion = tls.VersionTLS12
		}},
	}
}

// NewManager builds the controller-runtime manager with probes, metrics, leader election and
// every reconciler registered; it does not start it. Its cache holds only the operator's
// objects in opts.Namespaces (kit.CacheOptions), and its client reads Secrets from the API server.
func NewManager(cfg *rest.Config, opts Options) (ctrl.Manager, error) {
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                        NewScheme(),
		Metrics:                       metricsOptions(opts),
		HealthProbeBindAddress:        opts.HealthProbeBindAddress,
		LeaderElection:                opts.LeaderElection,
		LeaderElectionID:              LeaderElectionID,
		LeaderElectionNamespace:       opts.LeaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true,
		EventBroadcaster:              NewEventBroadcaster(),
		Cache:                         kit.CacheOptions(opts.Namespaces...),
		Client:                        kit.ClientOptions(),
		Controller:                    config.Controller{SkipNameValidation: ptr.To(opts.RepeatableInProcess)},
	})
	if err != nil {
		return nil, fmt.Errorf("creating the manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, fmt.Errorf("adding the health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return nil, fmt.Errorf("adding the readiness check: %w", err)
	}
	reportUndecodable(mgr.GetEventRecorderFor("cloudnative-mysql"))
	if err := registerControllers(mgr, opts); err != nil {
		return nil, err
	}
	return mgr, nil
}

// registerControllers wires every reconciler of the operator into mgr.
func registerControllers(mgr ctrl.Manager, opts Options) error {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if err := RegisterBackupControllers(mgr, opts); err != nil {
		return err
	}
	cr := cluster.NewReconciler(mgr, opts.Clock)
	cr.ManagerBinary = opts.ManagerBinary
	if err := cr.SetupWithManager(mgr); err != nil {
		return err
	}
	lr := location.NewReconciler(mgr, opts.Clock)
	lr.OpenStore = OpenObjectStore(opts.ObjectStoreAllowedCIDRs)
	if err := lr.SetupWithManager(mgr); err != nil {
		return err
	}
	pr := protection.NewReconciler(mgr, opts.Clock)
	pr.OpenStore = OpenObjectStore(opts.ObjectStoreAllowedCIDRs)
	if err := pr.SetupWithManager(mgr); err != nil {
		return err
	}
	if err := newRetentionReconciler(mgr, opts).SetupWithManager(mgr); err != nil {
		return err
	}
	return verification.NewReconciler(mgr, opts.Clock).SetupWithManager(mgr)
}

// newRetentionReconciler is the retention reconciler, opening object stores behind the guard.
func newRetentionReconciler(mgr ctrl.Manager, opts Options) *retention.Reconciler {
	r := retention.NewReconciler(mgr, opts.Clock)
	r.OpenStore = OpenObjectStore(opts.ObjectStoreAllowedCIDRs)
	return r
}

// newBackupReconciler is the Backup reconciler, opening object stores behind the guard.
func newBackupReconciler(mgr ctrl.Manager, opts Options) *backup.Reconciler {
	b := backup.NewReconciler(mgr, opts.Clock)
	b.MaxConcurrentReconciles = opts.BackupWorkers
	b.OpenStore = openStore(opts.ObjectStoreAllowedCIDRs)
	return b
}

// RegisterBackupControllers wires the ScheduledBackup and Backup reconcilers into mgr.
func RegisterBackupControllers(mgr ctrl.Manager, opts Options) error {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if err := (&scheduledbackup.Reconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
		Recorder: mgr.GetEventRecorderFor("scheduledbackup-controller"), Clock: opts.Clock,
		MaxConcurrentReconciles: opts.ScheduledBackupWorkers, MinInterval: opts.MinScheduleInterval,
		SkipImmediatelyDefault: opts.ScheduleSkipImmediately}).SetupWithManager(mgr); err != nil {
		return err
	}
	return newBackupReconciler(mgr, opts).SetupWithManager(mgr)
}

// Run builds the manager and runs it until ctx is cancelled.
func Run(ctx context.Context, cfg *rest.Config, opts Options) error {
	mgr, err := NewManager(cfg, opts)
	if err != nil {
		return err
	}
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("running the manager: %w", err)
	}
	return nil
}

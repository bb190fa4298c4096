package controller

import (
	"flag"
	"os"

	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/backup"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/scheduledbackup"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/operator"
)

// NewCommand returns `manager controller`, which runs the operator until SIGTERM.
func NewCommand() *cobra.Command {
	opts := operator.Options{}
	zapOpts := zap.Options{}
	cmd := &cobra.Command{
		Use:   "controller",
		Short: "Run the operator",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
			cfg, err := ctrl.GetConfig()
			if err != nil {
				return err
			}
			return operator.Run(ctrl.SetupSignalHandler(), cfg, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.MetricsBindAddress, "metrics-bind-address", ":8080", "address of the Prometheus metrics endpoint; 0 disables it")
	f.BoolVar(&opts.MetricsInsecure, "metrics-insecure", false,
		"serve metrics over plain HTTP without authentication (default: HTTPS, callers authorised for GET /metrics through the API server)")
	f.StringVar(&opts.MetricsCertDir, "metrics-cert-dir", "",
		"directory of tls.crt and tls.key for the metrics server; empty means a self-signed certificate")
	f.StringVar(&opts.HealthProbeBindAddress, "health-probe-bind-address", ":8081", "address of /healthz and /readyz")
	f.BoolVar(&opts.LeaderElection, "leader-elect", true, "elect one active operator through a Lease")
	f.StringVar(&opts.LeaderElectionNamespace, "leader-election-namespace", os.Getenv("POD_NAMESPACE"),
		"namespace of the leader-election Lease; required when running outside a cluster")
	f.IntVar(&opts.ScheduledBackupWorkers, "scheduled-backup-workers", scheduledbackup.DefaultWorkers,
		"ScheduledBackups reconciled in parallel; raise it when many schedules share a slot")
	f.IntVar(&opts.BackupWorkers, "backup-workers", backup.DefaultWorkers,
		"Backups reconciled in parallel; raise it when many schedules share a slot")
	goFlags := flag.NewFlagSet("", flag.ContinueOnError)
	zapOpts.BindFlags(goFlags)
	f.AddGoFlagSet(goFlags)
	f.AddGoFlagSet(flag.CommandLine) // --kubeconfig, registered by controller-runtime
	return cmd
}

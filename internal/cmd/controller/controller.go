package controller

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"go.uber.org/zap/zapcore"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/backup"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/instances"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/controller/scheduledbackup"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/egress"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/operator"
)

// NewCommand returns `manager controller`, which runs the operator until SIGTERM.
func NewCommand() *cobra.Command {
	opts := operator.Options{}
	// Milliseconds in the timestamps (--zap-time-encoding changes it): a switchover's steps are
	// a fraction of a second apart.
	zapOpts := zap.Options{TimeEncoder: zapcore.ISO8601TimeEncoder}
	var allowStores []string
	updateManagers := true
	cmd := &cobra.Command{
		Use:   "controller",
		Short: "Run the operator",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
			allowed, err := egress.ParseAllow(allowStores)
			if err != nil {
				return fmt.Errorf("--%s: %w", operator.ObjectStoreAllowFlag, err)
			}
			opts.ObjectStoreAllowedCIDRs = allowed
			if len(allowed) > 0 {
				ctrl.Log.WithName("setup").Info("object stores may be reached at these loopback or link-local networks",
					"allowed", allowed)
			}
			if updateManagers {
				// Hashed once here (tens of MB): every instance is brought to this binary in place.
				if opts.ManagerBinary, err = instances.OwnManagerBinary(); err != nil {
					return fmt.Errorf("--update-instance-managers: %w", err)
				}
				ctrl.Log.WithName("setup").Info("instance managers are updated in place to this binary",
					"version", opts.ManagerBinary.Version, "sha256", opts.ManagerBinary.SHA256)
			}
			cfg, err := ctrl.GetConfig()
			if err != nil {
				return err
			}
			return operator.Run(ctrl.SetupSignalHandler(), cfg, opts)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&updateManagers, "update-instance-managers", true,
		"update the instance managers of every Cluster to this operator's binary in place, mysqld left running; false leaves them "+
			"as they are until their Pods are replaced for another reason")
	f.StringVar(&opts.MetricsBindAddress, "metrics-bind-address", ":8080", "address of the Prometheus metrics endpoint; 0 disables it")
	f.BoolVar(&opts.MetricsInsecure, "metrics-insecure", false,
		"serve metrics over plain HTTP without authentication (default: HTTPS, callers authorised for GET /metrics through the API server)")
	f.StringVar(&opts.MetricsCertDir, "metrics-cert-dir", "",
		"directory of tls.crt and tls.key for the metrics server; empty means a self-signed certificate")
	f.StringVar(&opts.HealthProbeBindAddress, "health-probe-bind-address", ":8081", "address of /healthz and /readyz")
	f.BoolVar(&opts.LeaderElection, "leader-elect", true, "elect one active operator through a Lease")
	f.StringVar(&opts.LeaderElectionNamespace, "leader-election-namespace", os.Getenv("POD_NAMESPACE"),
		"namespace of the leader-election Lease; required when running outside a cluster")
	f.StringSliceVar(&opts.Namespaces, "watch-namespaces", splitList(os.Getenv("WATCH_NAMESPACES")),
		"namespaces the operator watches and acts in, comma-separated (default: every namespace; env WATCH_NAMESPACES)")
	f.DurationVar(&opts.MinScheduleInterval, "min-schedule-interval", scheduledbackup.DefaultMinInterval,
		"a ScheduledBackup whose slots come closer than this runs nothing (Ready=False, ScheduleTooFrequent); 0 accepts any schedule")
	f.BoolVar(&opts.ScheduleSkipImmediately, "schedule-skip-immediately", false,
		"what a new ScheduledBackup without spec.skipImmediately does: true skips the run due when it is first looked at (its immediate Backup, or a slot already due), as skipImmediately: true")
	f.IntVar(&opts.ScheduledBackupWorkers, "scheduled-backup-workers", scheduledbackup.DefaultWorkers,
		"ScheduledBackups reconciled in parallel; raise it when many schedules share a slot")
	f.IntVar(&opts.BackupWorkers, "backup-workers", backup.DefaultWorkers,
		"Backups reconciled in parallel; raise it when many schedules share a slot")
	f.StringSliceVar(&allowStores, operator.ObjectStoreAllowFlag, nil,
		"networks (CIDRs or addresses, comma-separated) where the operator may reach object stores although they are "+
			"loopback, link-local or unspecified addresses, which it refuses otherwise; for a test or an S3 server beside the operator")
	goFlags := flag.NewFlagSet("", flag.ContinueOnError)
	zapOpts.BindFlags(goFlags)
	f.AddGoFlagSet(goFlags)
	f.AddGoFlagSet(flag.CommandLine) // --kubeconfig, registered by controller-runtime
	return cmd
}

// splitList splits a comma-separated list, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

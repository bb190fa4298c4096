package instance

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap/zapcore"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instance"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/operator"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// apiRequestTimeout bounds every request of the instance manager to the API server.
const apiRequestTimeout = 10 * time.Second

// options are the flags of `manager instance run` besides the RunConfig fields.
type options struct {
	cfg        instance.RunConfig
	mysqld     string
	kubeconfig string
	secretsDir string
	peers      []string
	parameters []string
}

// NewCommand returns `manager instance` with its `run` subcommand.
func NewCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "instance", Short: "In-Pod instance manager"}
	o := &options{}
	run := &cobra.Command{
		Use:   "run",
		Short: "Run mysqld under the instance manager (PID 1 of an instance Pod)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			return o.run(ctx)
		},
	}
	o.bind(run)
	cmd.AddCommand(run)
	return cmd
}

func (o *options) bind(cmd *cobra.Command) {
	fs, c := cmd.Flags(), &o.cfg
	fs.StringVar(&c.Instance, "pod-name", os.Getenv("POD_NAME"), "instance (Pod) name, <cluster>-<serial> ($POD_NAME)")
	fs.StringVar(&c.PodUID, "pod-uid", os.Getenv("POD_UID"), "UID of the instance's Pod, named in the primary Lease ($POD_UID)")
	fs.StringVar(&c.Namespace, "namespace", os.Getenv("NAMESPACE"), "namespace ($NAMESPACE)")
	fs.StringVar(&c.Cluster, "cluster", os.Getenv("CLUSTER_NAME"), "Cluster name ($CLUSTER_NAME)")
	fs.StringVar(&c.DataDir, "data-dir", specs.DataVolumeDir, "mysqld's data directory")
	fs.StringVar(&c.DataVolume, "data-volume", "", "mount of the instance's volume, of which --data-dir is a subdirectory "+
		"(a data directory at its root is moved there); empty: --data-dir is used as it is")
	fs.StringVar(&c.RunDir, "run-dir", specs.ControllerDir+"/run", "directory for my.cnf, the socket and the pid file")
	fs.StringVar(&c.ServerTLSDir, "server-tls-dir", specs.ServerTLSDir, "ca.crt, tls.crt, tls.key of the server certificate")
	fs.StringVar(&c.ClientTLSDir, "client-tls-dir", specs.ReplicationTLSDir, "ca.crt, tls.crt, tls.key of the client certificate")
	fs.StringVar(&o.secretsDir, "secrets-dir", "", "directory with <user>/password files; empty: read the Cluster's Secrets from the API server")
	fs.StringVar(&c.MysqldRoot, "mysqld-root", "/", "root directory mysqld runs in (paths given to mysqld are relative to it)")
	fs.StringVar(&o.mysqld, "mysqld-command", "mysqld", "command starting mysqld, split on spaces (e.g. chroot <root> /usr/sbin/mysqld)")
	fs.StringVar(&c.MysqldUser, "mysqld-user", "", "OS user mysqld switches to when started as root")
	fs.StringVar(&c.BindAddress, "bind-address", "*", "address mysqld listens on")
	fs.IntVar(&c.Port, "port", specs.MySQLPort, "mysqld port")
	fs.StringVar(&c.AdminAddress, "admin-address", os.Getenv("POD_IP"),
		"address of mysqld's administrative interface, where the operator fences it ($POD_IP); empty: no administrative interface")
	fs.IntVar(&c.AdminPort, "admin-port", specs.AdminPort, "port of mysqld's administrative interface")
	fs.StringVar(&c.ReportHost, "report-host", "", "name the others reach this mysqld by (default <pod>.<namespace>.svc)")
	fs.StringVar(&c.ManagerAddr, "manager-address", ":"+strconv.Itoa(specs.ManagerPort), "control API address (mTLS)")
	fs.StringVar(&c.ProbeAddr, "probe-address", ":"+strconv.Itoa(specs.ProbePort), "probe address (plain HTTP)")
	fs.StringVar(&c.MetricsAddr, "metrics-address", ":"+strconv.Itoa(specs.MetricsPort),
		"/metrics address (HTTPS, the Cluster's metrics token or a client certificate of its CA); empty: no metrics")
	fs.StringVar(&c.MetricsTokenFile, "metrics-token-file", specs.MetricsTokenPath, "file holding the scrapers' bearer token")
	fs.DurationVar(&c.GracePeriod, "grace-period", 25*time.Second, "clean shutdown of mysqld before SIGKILL; below the Pod's grace period")
	fs.DurationVar(&c.ReconcileInterval, "reconcile-interval", time.Second, "role reconciliation period")
	fs.DurationVar(&c.IsolationLimit, "isolation-limit", 30*time.Second, "liveness fails after this long without reaching the API server")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file; empty: in-cluster configuration")
	fs.StringArrayVar(&o.peers, "peer", nil, "address of another instance, name=host:mysqlPort:managerPort (repeatable; default: its Service)")
	fs.StringArrayVar(&o.parameters, "mysqld-option", nil, "extra my.cnf setting key=value, below spec.mysql.parameters (repeatable)")
}

func (o *options) run(ctx context.Context) error {
	// Milliseconds in the timestamps: a failover's steps are seconds apart, or less.
	log := zap.New(func(o *zap.Options) { o.TimeEncoder = zapcore.ISO8601TimeEncoder })
	c := &o.cfg
	if c.ReportHost == "" {
		c.ReportHost = c.Instance + "." + c.Namespace + ".svc"
	}
	c.MysqldCommand = strings.Fields(o.mysqld)
	var err error
	// The installed binary: an in-place update writes the new one there (/controller/manager).
	if c.ManagerBinary, err = os.Executable(); err != nil {
		return fmt.Errorf("locating the instance manager's binary: %w", err)
	}
	if c.Parameters, err = keyValues(o.parameters); err != nil {
		return err
	}
	peers, err := parsePeers(o.peers)
	if err != nil {
		return err
	}
	k8s, watcher, err := o.clients()
	if err != nil {
		return err
	}
	var passwords instance.Passwords = instance.SecretPasswords{Reader: k8s, Namespace: c.Namespace, Cluster: c.Cluster}
	if o.secretsDir != "" {
		passwords = instance.FilePasswords{Dir: o.secretsDir}
	}
	return instance.Run(ctx, c, instance.RunDeps{Client: k8s, Watch: watcher, Factory: mysql.NewFactory(), Passwords: passwords,
		Peers: peers, Clock: clock.RealClock{}, Log: log.WithValues("instance", c.Instance)})
}

// clients returns the API client, every request of which is bounded, and the client of the
// Cluster's watch, whose requests last as long as the watch.
func (o *options) clients() (client.Client, client.WithWatch, error) {
	var cfg *rest.Config
	var err error
	if o.kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", o.kubeconfig)
	} else {
		cfg, err = rest.InClusterConfig()
	}
	if err != nil {
		return nil, nil, fmt.Errorf("loading the API server configuration: %w", err)
	}
	watchCfg := rest.CopyConfig(cfg)
	// Every request is bounded, so that a hung connection to the API server delays nothing for
	// long; the rate limit leaves room for the role passes and the Lease renewals.
	cfg.Timeout, cfg.QPS, cfg.Burst = apiRequestTimeout, 20, 40
	k8s, err := client.New(cfg, client.Options{Scheme: operator.NewScheme()})
	if err != nil {
		return nil, nil, fmt.Errorf("creating the API client: %w", err)
	}
	watchCfg.QPS, watchCfg.Burst = 2, 4
	watcher, err := client.NewWithWatch(watchCfg, client.Options{Scheme: operator.NewScheme()})
	if err != nil {
		return nil, nil, fmt.Errorf("creating the API client of the Cluster's watch: %w", err)
	}
	return k8s, watcher, nil
}

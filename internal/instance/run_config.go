package instance

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/certs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// RunConfig is everything `manager instance run` takes from its flags and environment. Paths are
// the ones the instance manager sees; MysqldRoot says how mysqld sees them.
type RunConfig struct {
	Instance, Namespace, Cluster string
	// PodUID is the UID of the instance's Pod (the downward API's metadata.uid): the primary
	// Lease names it beside the instance. Empty (a manager run outside a Pod) leaves it out.
	PodUID string
	// DataDir is mysqld's data directory.
	DataDir string
	// DataVolume, when set, is the mount of the instance's volume and DataDir must be a direct
	// subdirectory of it: PrepareDataDir creates DataDir, or moves a data directory found at the
	// volume's root into it. Empty: DataDir is used as it is.
	DataVolume string
	// RunDir holds my.cnf, the socket and the pid file; it need not survive a restart.
	RunDir string
	// ServerTLSDir and ClientTLSDir hold ca.crt, tls.crt and tls.key: the instance's server
	// certificate, and the client certificate it presents to other instances (replication, clone,
	// their control API).
	ServerTLSDir, ClientTLSDir string
	// MysqldRoot is the root directory mysqld runs in ("/" in a Pod; the MySQL root filesystem
	// when mysqld runs chrooted): every path given to mysqld is relative to it.
	MysqldRoot string
	// MysqldCommand starts mysqld; --defaults-file and extra arguments are appended.
	MysqldCommand []string
	// MysqldUser is the OS user mysqld switches to when started as root; empty leaves it out.
	MysqldUser string
	// BindAddress and Port are where mysqld listens; ReportHost is how the others reach it.
	BindAddress string
	Port        int
	ReportHost  string
	// AdminAddress and AdminPort are mysqld's administrative interface, where the operator fences
	// a server whose instance manager does not answer (the Pod IP in a Pod); an empty address
	// leaves the interface off.
	AdminAddress string
	AdminPort    int
	// ManagerAddr serves the control API over mTLS, ProbeAddr the kubelet's plain-HTTP probes.
	ManagerAddr, ProbeAddr string
	// MetricsAddr serves /metrics over HTTPS to scrapers with the token of MetricsTokenFile or a
	// client certificate of the Cluster's CA; empty: no metrics server.
	MetricsAddr, MetricsTokenFile string
	// GracePeriod bounds mysqld's clean shutdown; keep it below the Pod's grace period.
	GracePeriod time.Duration
	// ReconcileInterval is the role reconciler's period.
	ReconcileInterval time.Duration
	// IsolationLimit fails liveness after this long without reading the Cluster.
	IsolationLimit time.Duration
	// Parameters are extra my.cnf settings for mysqld (tests: a small buffer pool).
	Parameters map[string]string
	// ManagerBinary is where the running instance manager's binary is installed; an in-place
	// update (ManagerUpdate) writes the new one there. Empty: no in-place update.
	ManagerBinary string
}

// Paths of the files the instance manager writes or reads.
func (c *RunConfig) myCnfPath() string   { return filepath.Join(c.RunDir, "my.cnf") }
func (c *RunConfig) socketPath() string  { return filepath.Join(c.RunDir, "mysqld.sock") }
func (c *RunConfig) serverTLS() TLSFiles { return tlsFilesIn(c.ServerTLSDir) }
func (c *RunConfig) clientTLS() TLSFiles { return tlsFilesIn(c.ClientTLSDir) }

// TLSFiles are the files of one mounted kubernetes.io/tls Secret.
type TLSFiles struct{ CA, Cert, Key string }

func tlsFilesIn(dir string) TLSFiles {
	return TLSFiles{CA: filepath.Join(dir, certs.CAKey), Cert: filepath.Join(dir, certs.CertKey),
		Key: filepath.Join(dir, certs.KeyKey)}
}

var errRunConfig = errors.New("invalid instance manager configuration")

// Validate checks the configuration before anything starts.
func (c *RunConfig) Validate() error {
	if c.Instance == "" || c.Namespace == "" || c.Cluster == "" {
		return fmt.Errorf("%w: instance, namespace and cluster names are required", errRunConfig)
	}
	if _, ok := specs.InstanceSerial(c.Cluster, c.Instance); !ok {
		return fmt.Errorf("%w: instance %q is not <cluster>-<serial> of cluster %q", errRunConfig, c.Instance, c.Cluster)
	}
	if len(c.MysqldCommand) == 0 {
		return fmt.Errorf("%w: the command that starts mysqld is required", errRunConfig)
	}
	for _, p := range []string{c.DataDir, c.RunDir, c.ServerTLSDir, c.ClientTLSDir} {
		if _, err := c.inMysqld(p); err != nil {
			return err
		}
	}
	if c.DataVolume != "" && filepath.Dir(filepath.Clean(c.DataDir)) != filepath.Clean(c.DataVolume) {
		return fmt.Errorf("%w: the data directory %s is not a subdirectory of the volume %s", errRunConfig, c.DataDir, c.DataVolume)
	}
	return nil
}

// inMysqld translates a path of the instance manager into the path mysqld sees.
func (c *RunConfig) inMysqld(p string) (string, error) {
	root := c.MysqldRoot
	if root == "" || root == "/" {
		return p, nil
	}
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("%w: %s is outside mysqld's root %s", errRunConfig, p, root)
	}
	return "/" + rel, nil
}

// mustInMysqld is inMysqld for paths Validate has checked.
func (c *RunConfig) mustInMysqld(p string) string {
	out, err := c.inMysqld(p)
	if err != nil {
		panic(err)
	}
	return out
}

// MyCnfInput returns what my.cnf is rendered from, with paths as mysqld sees them.
func (c *RunConfig) MyCnfInput(serial int32, parameters map[string]string) MyCnfInput {
	tls := c.serverTLS()
	return MyCnfInput{
		Serial: serial, Port: c.Port, BindAddress: c.BindAddress, ReportHost: c.ReportHost,
		AdminAddress: c.AdminAddress, AdminPort: c.AdminPort,
		DataDir: c.mustInMysqld(c.DataDir), RunDir: c.mustInMysqld(c.RunDir), User: c.MysqldUser,
		TLS:        TLSPaths{CAFile: c.mustInMysqld(tls.CA), CertFile: c.mustInMysqld(tls.Cert), KeyFile: c.mustInMysqld(tls.Key)},
		Parameters: parameters,
	}
}

// MysqldWith is mysqld run with another option file (a path as the manager sees it) and extra
// arguments, ended with ctx: mysqld --validate-config on a candidate my.cnf.
func (c *RunConfig) MysqldWith(ctx context.Context, defaultsFile string, extra ...string) *exec.Cmd {
	args := append([]string{}, c.MysqldCommand[1:]...)
	args = append(args, "--defaults-file="+c.mustInMysqld(defaultsFile))
	cmd := exec.CommandContext(ctx, c.MysqldCommand[0], append(args, extra...)...)
	cmd.Dir = "/"
	return cmd
}

// Mysqld returns the MysqldCommand that starts mysqld with the rendered my.cnf.
func (c *RunConfig) Mysqld() MysqldCommand {
	return func(extra ...string) *exec.Cmd {
		args := append([]string{}, c.MysqldCommand[1:]...)
		args = append(args, "--defaults-file="+c.mustInMysqld(c.myCnfPath()))
		cmd := exec.Command(c.MysqldCommand[0], append(args, extra...)...)
		cmd.Dir = "/"
		return cmd
	}
}

package instance

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/go-logr/logr"
	driver "github.com/go-sql-driver/mysql"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/proc"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// RunDeps are the instance manager's collaborators.
type RunDeps struct {
	Client client.Client
	// Watch, if set, watches the Cluster (ClusterWatch): a client without a request timeout.
	Watch     client.WithWatch
	Factory   mysql.Factory
	Passwords Passwords
	// Peers overrides the addresses of listed instances (tests); others use their Service.
	Peers map[string]PeerAddress
	Clock clock.Clock
	Log   logr.Logger
}

// manager is one run of the instance manager.
type manager struct {
	cfg    *RunConfig
	deps   RunDeps
	serial int32
	op     mysql.Operator
	// probeOp is the probes' own pool, used by their one status poller: the unauthenticated
	// probe port never takes the connections the role reconciler needs.
	probeOp mysql.Operator
	// fallbackOp is the semi-sync fallback's own session (mysql.Factory.NewKeptLocalAdmin): it
	// must release commits even while an account statement waiting among them blocks new logins.
	fallbackOp mysql.Operator
	dir        PeerDirectory
	cluster    types.NamespacedName
	// params makes changes of spec.mysql.parameters take effect (parameters.go); created when
	// my.cnf is first written.
	params *ParameterApplier
	// initRecord are the initialization-only parameters of the data directory
	// (init_parameters.go), nil until recorded; my.cnf always carries them.
	initRecord map[string]string
	// adopted is the mysqld the previous program of this process started, taken back after an
	// in-place update (manager_update.go); nil after an ordinary start.
	adopted *proc.Child
	// sup supervises mysqld; binary is the instance manager's own binary.
	sup    *Supervisor
	binary *SelfBinary
	// sockets are the listening sockets of the probes and the control API, handed over to the
	// program of an in-place update.
	sockets *listeningSockets
	// leaseSent, when leaseHeld, is when the previous program sent the renewal of the primary
	// Lease it handed over.
	leaseSent time.Time
	leaseHeld bool
	// runningParams are the user parameters the adopted mysqld runs with, as the previous program
	// knew them; nil after an ordinary start.
	runningParams map[string]string
	// replacing excludes a shutdown (stopping) and an in-place replacement of the program.
	replacing sync.Mutex
	stopping  bool
}

// Run is `manager instance run`: render my.cnf, bootstrap the data directory, supervise mysqld,
// serve the probes and the control API, and converge the role to the Cluster's status until ctx
// ends; then stop serving and shut mysqld down within the grace period.
func Run(ctx context.Context, cfg *RunConfig, deps RunDeps) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	serial, _ := specs.InstanceSerial(cfg.Cluster, cfg.Instance)
	m := &manager{cfg: cfg, deps: deps, serial: serial,
		dir:     PeerDirectory{Namespace: cfg.Namespace, Cluster: cfg.Cluster, Static: deps.Peers},
		cluster: types.NamespacedName{Namespace: cfg.Namespace, Name: cfg.Cluster},
		binary:  NewSelfBinary(cfg.ManagerBinary), adopted: adoptMysqld(deps.Log), sockets: inheritedSockets(deps.Log)}
	// Read (and removed from the environment) whatever happens: they mean something only with the
	// mysqld they came with.
	leaseSent, leaseHeld := inheritedLease(deps.Clock)
	runningParams := inheritedParameters(deps.Log)
	if m.adopted != nil {
		m.leaseSent, m.leaseHeld, m.runningParams = leaseSent, leaseHeld, runningParams
		defer func() {
			if m.sup == nil {
				// Never supervised (an error or SIGTERM before): stopped cleanly, not left to the
				// kernel's SIGKILL when this process, its container's init, exits.
				m.deps.Log.Info("stopping the adopted mysqld: the instance manager exits before supervising it")
				_ = m.adopted.Stop(cfg.GracePeriod)
			}
		}()
	}
	// From SIGTERM on, no in-place update replaces the program.
	stopReplacing := context.AfterFunc(ctx, m.stopReplacing)
	defer stopReplacing()
	if err := os.MkdirAll(cfg.RunDir, 0o750); err != nil {
		return fmt.Errorf("creating the run directory: %w", err)
	}
	if cfg.DataVolume != "" {
		layout, err := PrepareDataDir(cfg.DataVolume, cfg.DataDir)
		if err != nil {
			return err
		}
		deps.Log.Info("data directory", "path", cfg.DataDir, "layout", layout)
	}
	rootPassword, err := m.readPassword(ctx, specs.UserRoot)
	if err != nil {
		return m.stopped(ctx, err)
	}
	dsn := driver.NewConfig()
	dsn.User, dsn.Passwd, dsn.Net, dsn.Addr = specs.UserRoot, rootPassword, "unix", cfg.socketPath()
	op, err := deps.Factory.NewLocalAdmin(dsn)
	if err != nil {
		return err
	}
	defer op.Close()
	probeOp, err := deps.Factory.NewLocalAdmin(dsn)
	if err != nil {
		return err
	}
	defer probeOp.Close()
	fallbackOp, err := deps.Factory.NewKeptLocalAdmin(dsn)
	if err != nil {
		return err
	}
	defer fallbackOp.Close()
	m.op, m.probeOp, m.fallbackOp = op, probeOp, fallbackOp
	return m.stopped(ctx, m.run(ctx))
}

// stopped returns err, or nil when it only says that Run was asked to stop while waiting
// (a password, bootstrap, mysqld's first answer): a clean stop.
func (m *manager) stopped(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(err, context.Canceled) && !errors.Is(err, ErrKilled) {
		m.deps.Log.Info("stopped before serving")
		return nil
	}
	return err
}

func (m *manager) run(ctx context.Context) error {
	cluster, err := m.readCluster(ctx)
	if err != nil {
		return err
	}
	if m.initRecord, err = readInitParameters(m.cfg.DataDir); err != nil {
		return err
	}
	if err := m.writeMyCnf(ctx, cluster); err != nil {
		return err
	}
	decision, err := m.prepareDataDir(ctx)
	if err != nil {
		return err
	}
	sup := &Supervisor{
		Adopted: m.adopted,
		Command: func() *exec.Cmd {
			// mysqld logs to stderr, which the container runtime collects with the manager's.
			cmd := m.cfg.Mysqld()()
			cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
			return cmd
		},
		GracePeriod: m.cfg.GracePeriod,
		Backoff:     Backoff{Initial: 500 * time.Millisecond, Max: 10 * time.Second, Stable: time.Minute},
		Clock:       m.deps.Clock, Log: m.deps.Log.WithName("supervisor"),
	}
	m.sup = sup
	// The supervisor stops mysqld once serving is over: after ctx ended and a primary gave up
	// its Lease (read-only first), or once serving failed.
	supCtx, stopMysqld := context.WithCancel(context.WithoutCancel(ctx))
	defer stopMysqld()
	supErr := make(chan error, 1)
	go func() { supErr <- sup.Run(supCtx) }()
	// The start of the shutdown budget (SIGTERM): a primary gives up its Lease, serving ends,
	// then mysqld gets GracePeriod to stop; the supervisor logs when it stopped and how long that
	// took, so a Pod's whole shutdown can be read from its log.
	announced := context.AfterFunc(ctx, func() { m.deps.Log.Info("shutting down", "gracePeriod", m.cfg.GracePeriod) })
	defer announced()
	err = m.serve(ctx, decision, cluster)
	// No in-place replacement from here on, whatever ended serving.
	m.stopReplacing()
	// Serving is over and nothing runs SQL any more: client sessions, then the manager's own,
	// end before mysqld is asked to stop. mysqld waits 10 s for an idle session before it forces
	// it closed (measured: a primary's stop took 10.7 s with sessions open, 3.4 s without).
	m.refuseClients(ctx)
	m.closeSessions()
	stopMysqld()
	return errors.Join(err, <-supErr)
}

// prepareDataDir readies the data directory for mysqld's start: an unfinished clone discarded,
// the bootstrap decided, a version downgrade refused, a new data directory initialized. A mysqld
// taken back after an in-place update runs on a bootstrapped data directory (the update is
// refused before), which is left as it is.
func (m *manager) prepareDataDir(ctx context.Context) (BootstrapDecision, error) {
	if m.adopted != nil {
		return BootstrapDecision{Action: BootstrapNone, Reason: "mysqld kept running through an in-place update of the instance manager"}, nil
	}
	if discarded, err := DiscardUnfinishedClone(m.cfg.DataDir); err != nil {
		return BootstrapDecision{}, err
	} else if discarded {
		m.deps.Log.Info("discarded the data directory of an unfinished clone or restore")
	}
	decision, err := m.decideBootstrap(ctx)
	if err != nil {
		return BootstrapDecision{}, err
	}
	if err := m.refuseDowngrade(ctx, decision); err != nil {
		return BootstrapDecision{}, err
	}
	return decision, m.initialize(ctx, decision)
}

// refuseClientsTimeout bounds ending the client sessions at shutdown.
const refuseClientsTimeout = 5 * time.Second

// refuseClients, at shutdown, turns offline_mode on (no ordinary client may log in again: a pool
// would reconnect to a server that is about to stop) and ends the client sessions. Best effort:
// mysqld's own shutdown ends whatever is left, only later. offline_mode is not persisted, so the
// next start serves clients again.
func (m *manager) refuseClients(ctx context.Context) {
	if m.op == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refuseClientsTimeout)
	defer cancel()
	if err := m.op.SetOfflineMode(ctx, true); err != nil {
		m.deps.Log.Info("shutting down: offline_mode could not be turned on", "error", err.Error())
		return
	}
	n, err := m.op.KillClientSessions(ctx)
	if err != nil {
		m.deps.Log.Info("shutting down: ending the client sessions failed", "error", err.Error())
		return
	}
	m.deps.Log.Info("shutting down: clients refused (offline_mode) and their sessions ended", "sessions", n)
}

// closeSessions closes the manager's connection pools (closing is idempotent: the deferred
// closes of Run follow).
func (m *manager) closeSessions() {
	for _, op := range []mysql.Operator{m.op, m.probeOp, m.fallbackOp} {
		if op != nil {
			_ = op.Close()
		}
	}
}

// initialize creates the system tables for a first primary or a new replica; a replica's data
// directory is marked until its clone completes, a first primary's until it has created the
// application database and owner. The first primary of a recovery restores its backup instead
// (recovery_run.go).
func (m *manager) initialize(ctx context.Context, d BootstrapDecision) error {
	if d.Action == BootstrapRecover {
		return m.recoverUntilDone(ctx)
	}
	if d.Action != BootstrapInitialize && d.Action != BootstrapClone {
		return nil
	}
	begin := m.deps.Clock.Now()
	if err := InitializeDataDir(ctx, m.cfg.Mysqld()); err != nil {
		return err
	}
	m.deps.Log.Info("data directory initialized", "took", m.deps.Clock.Since(begin).Round(time.Millisecond))
	if d.Action == BootstrapClone {
		return MarkClonePending(m.cfg.DataDir)
	}
	return MarkApplicationPending(m.cfg.DataDir)
}

package instance

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/certs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/failover"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/probes"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/tlsfiles"
)

// errServerStopped marks the failure of a server serve started (the probes, the control API):
// the instance cannot be probed or driven any more, so serving ends with it.
var errServerStopped = errors.New("a server of the instance manager stopped")

// serve serves the probes and the control API, waits for mysqld, finishes a clone bootstrap,
// then keeps the primary Lease, watches the peers and reconciles the role until ctx ends; then it
// gives the Lease up (read-only first) while mysqld still runs. Any failure after the first
// server started ends serving at once: the servers and watchers are stopped and the error
// logged and returned, so the process exits with it instead of hanging until a probe kills it.
func (m *manager) serve(ctx context.Context, decision BootstrapDecision, cluster *v1alpha1.Cluster) error {
	parent := ctx
	ctx, stop := context.WithCancelCause(ctx)
	var wg sync.WaitGroup
	err := m.serveWith(ctx, stop, &wg, decision, cluster)
	stop(nil)
	wg.Wait()
	if cause := context.Cause(ctx); errors.Is(cause, errServerStopped) {
		// A server failed first; what failed after it only followed from the cancellation.
		err = cause
	}
	if err != nil && parent.Err() == nil {
		m.deps.Log.Error(err, "serving failed; the instance manager exits")
	}
	return err
}

// serveWith is serve's body; goroutines it starts are counted in wg and end when ctx does, and a
// server that fails calls stop with its error.
func (m *manager) serveWith(ctx context.Context, stop context.CancelCauseFunc, wg *sync.WaitGroup,
	decision BootstrapDecision, cluster *v1alpha1.Cluster) error {
	isolation := NewIsolationDetector(m.deps.Clock, m.cfg.IsolationLimit)
	state := &LocalState{}
	state.SetMembers(ClusterMembers(cluster, nil))
	// The probes answer from the poller's newest observation; only the poller runs SQL.
	poller := &probes.StatusPoller{Op: m.probeOp, Clock: m.deps.Clock, Log: m.deps.Log.WithName("probes")}
	wg.Go(func() { poller.Run(ctx) })
	probeSrv := (&probes.Probes{Mysqld: poller, Isolation: isolation, State: state, Clock: m.deps.Clock}).Server()
	probeLn, err := m.sockets.listen("probes", m.cfg.ProbeAddr)
	if err != nil {
		return fmt.Errorf("listening for probes: %w", err)
	}
	wg.Go(func() { stop(m.serveUntil(ctx, probeSrv, probeLn, "probes")) })
	client, err := m.peerClient()
	if err != nil {
		return err
	}
	// A server that stops taking writes keeps ending client sessions while a write Service may
	// still route to it, so that no pool stays on it (SessionSweep).
	sweep := &SessionSweep{Op: m.op, Routed: WriteRoutes{Client: m.deps.Client, Cluster: m.cluster, Pod: m.cfg.Instance}.Routed,
		Clock: m.deps.Clock, Log: m.deps.Log.WithName("sweep")}
	wg.Go(func() { sweep.Run(ctx) })
	var selfFences atomic.Int64
	selfFence := func(ctx context.Context) error {
		selfFences.Add(1)
		if err := StopWrites(ctx, m.op, m.deps.Log.WithName("lease")); err != nil {
			return err
		}
		sweep.Trigger()
		return nil
	}
	lease := NewPrimaryLease(m.deps.Client, types.NamespacedName{Namespace: m.cfg.Namespace, Name: specs.PrimaryLeaseName(m.cfg.Cluster)},
		failover.LeaseHolder{Instance: m.cfg.Instance, PodUID: m.cfg.PodUID}, m.deps.Clock, selfFence, m.deps.Log.WithName("lease"))
	lease.Configure(LeaseEnabled(&cluster.Spec), ownerReference(cluster))
	if m.leaseHeld {
		// Handed over by the previous program (an in-place update): still the holder, so the
		// primary is never turned read-only to take its own Lease again.
		lease.AdoptHeld(m.leaseSent)
		m.deps.Log.Info("primary Lease handed over by the previous program", "renewed", m.leaseSent)
		// Read at once: the semi-sync fallback's record is read from it (until then a record is
		// taken as one at risk, FallbackRecord).
		if _, err := lease.Observe(ctx); err != nil {
			m.deps.Log.Info("reading the primary Lease handed over failed; its next renewal reads it", "error", err.Error())
		}
	}
	// The control API answers from the start, so that the operator sees a bootstrapping instance.
	// The server certificate files, followed for the control API and mysqld.
	serverFiles, err := tlsfiles.NewLoader(tlsfiles.Files(m.cfg.serverTLS()), 0, m.deps.Clock)
	if err != nil {
		return err
	}
	fallback := &SemiSyncFallback{Instance: m.cfg.Instance, Op: m.fallbackOp, Lease: lease, Clock: m.deps.Clock, Log: m.deps.Log.WithName("semisync")}
	participation := &SemiSyncParticipation{}
	update := &ManagerUpdate{Binary: m.binary, Ready: m.updateReady(state, lease), Replace: m.replaceProgram(ctx, lease),
		Clock: m.deps.Clock, Log: m.deps.Log.WithName("manager-update")}
	api, apiLn, err := m.controlAPI(serverFiles, client.cn, state, lease, fallback, participation, sweep, update)
	if err != nil {
		return err
	}
	wg.Go(func() { stop(m.serveUntil(ctx, api, apiLn, "control API")) })
	m.serveMetrics(ctx, wg, metricsSources{poller: poller, state: state, isolation: isolation, lease: lease,
		fallback: fallback, selfFences: &selfFences, server: serverFiles, client: client.files})
	if err := m.waitForMysqld(ctx); err != nil {
		return err
	}
	if decision.Action == BootstrapClone {
		if err := m.cloneUntilDone(ctx, decision.Donor); err != nil {
			return err
		}
	}
	wg.Go(func() { m.mysqldTLS(serverFiles).Run(ctx) })
	if rec, err := recordInitParameters(ctx, m.op, m.cfg.DataDir); err != nil {
		// my.cnf then keeps the spec's values at the next start, as before the record existed.
		m.deps.Log.Info("the initialization parameters of the data directory are not recorded", "error", err.Error())
	} else {
		m.initRecord = rec
	}
	state.SetBootstrapDone()
	isolation.Arm()
	r, err := m.roleReconciler(ctx, client, isolation, lease, state, sweep)
	if err != nil {
		return err
	}
	r.Fallback = fallback
	r.Participation = participation
	if m.params != nil {
		m.params.Op = m.op
		r.OfferParameters = func(c *v1alpha1.Cluster) {
			spec := c.Spec.MySQL.Parameters
			m.params.Offer(m.userParameters(spec), specs.ParametersHash(spec), c.Annotations[v1alpha1.ReloadedAtAnnotation])
		}
		wg.Go(func() { m.params.Run(ctx) })
	}
	if m.deps.Watch != nil {
		wake := make(chan struct{}, 1)
		r.Wake = wake
		cw := &ClusterWatch{Client: m.deps.Watch, Cluster: m.cluster, Wake: wake, Clock: m.deps.Clock, Log: m.deps.Log.WithName("watch")}
		wg.Go(func() { cw.Run(ctx) })
	}
	// The fallback's session is opened before the role pass can write anything: a write that
	// waits for an acknowledgement may be an account statement, which blocks new logins until
	// the fallback releases it (mysql.Factory.NewKeptLocalAdmin).
	if _, err := m.fallbackOp.Status(ctx); err != nil {
		m.deps.Log.Info("opening the semi-sync fallback's session failed; it is opened at its next check", "error", err.Error())
	}
	wg.Go(func() { fallback.Run(ctx) })
	m.startBinlogArchiver(ctx, wg, cluster, lease)
	peers := ControlPeers{PeerDirectory: m.dir, Client: client.client}
	watch := &PeerWatch{Reach: peers.Reach, Self: m.cfg.Instance, Isolation: isolation,
		Interval: max(min(peerWatchInterval, m.cfg.IsolationLimit/4), 100*time.Millisecond),
		Clock:    m.deps.Clock, Members: func() []string { return ClusterMembers(cluster, append(state.Members(), m.staticPeers()...)) }}
	wg.Go(func() { watch.Run(ctx) })
	leaseDone := make(chan struct{})
	go func() { defer close(leaseDone); lease.Run(ctx) }()
	m.deps.Log.Info("instance manager serving", "instance", m.cfg.Instance, "bootstrap", decision.Action.String())
	r.Run(ctx, m.cfg.ReconcileInterval)
	<-leaseDone
	m.giveUpLease(lease)
	return nil
}

// peerWatchInterval is how often the peers are asked for an answer (isolation detection), at
// most a quarter of the isolation limit.
const peerWatchInterval = 2 * time.Second

// shutdownLeaseTimeout bounds turning read-only and releasing the Lease at shutdown.
const shutdownLeaseTimeout = 5 * time.Second

// giveUpLease, at shutdown, turns a primary read-only and ends its client sessions, then
// deletes its Lease, so that a replica may be promoted without waiting for the Lease to expire.
// If the server cannot be made read-only, the Lease is left to expire.
func (m *manager) giveUpLease(lease *PrimaryLease) {
	if !lease.MayHold() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), shutdownLeaseTimeout)
	defer cancel()
	log := m.deps.Log.WithName("lease")
	if err := StopWrites(ctx, m.op, log); err != nil {
		log.Error(err, "shutting down: could not turn read-only; the primary Lease is left to expire")
		return
	}
	if err := lease.Release(ctx); err != nil {
		log.Error(err, "shutting down: releasing the primary Lease failed; it will expire")
	}
}

// staticPeers names the instances given addresses by flag.
func (m *manager) staticPeers() []string {
	out := make([]string, 0, len(m.dir.Static))
	for name := range m.dir.Static {
		out = append(out, name)
	}
	return out
}

// serveUntil serves srv on ln until ctx ends, then shuts it down. It returns nil after a
// shutdown, and an errServerStopped error when serving failed.
func (m *manager) serveUntil(ctx context.Context, srv *http.Server, ln net.Listener, what string) error {
	go func() {
		<-ctx.Done()
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdownCtx)
	}()
	var err error
	if srv.TLSConfig != nil {
		err = srv.ServeTLS(ln, "", "")
	} else {
		err = srv.Serve(ln)
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("%w: the %s: %w", errServerStopped, what, err)
	}
	return nil
}

// peerTLS is the client side of the instance's mTLS: its client certificate and the cluster CA,
// followed as the kubelet renews them.
type peerTLS struct {
	client *instanceclient.Client
	cn     string
	files  *tlsfiles.Loader
}

func (m *manager) peerClient() (peerTLS, error) {
	files, err := tlsfiles.NewLoader(tlsfiles.Files(m.cfg.clientTLS()), 0, m.deps.Clock)
	if err != nil {
		return peerTLS{}, err
	}
	cur, _ := files.Current()
	cn := cur.Certificate.Leaf.Subject.CommonName
	return peerTLS{client: instanceclient.NewFollowing(func() (*tls.Config, error) { return tlsfiles.ClientConfig(files) }, 2*time.Second),
		cn: cn, files: files}, nil
}

// controlAPI serves the operator, and GET /status to the other instances (which present the
// same client certificate as this one). Its TLS configuration follows the mounted files, and
// mysqld's certificates are reloaded when they change.
func (m *manager) controlAPI(files *tlsfiles.Loader, peerCN string, state *LocalState, lease *PrimaryLease,
	fallback *SemiSyncFallback, participation *SemiSyncParticipation, sweep *SessionSweep, update *ManagerUpdate) (*http.Server, net.Listener, error) {
	api := &ControlAPI{Instance: m.cfg.Instance, Op: m.op, AllowedClients: []string{certs.OperatorCommonName},
		StatusClients: []string{peerCN}, SourceInstance: m.dir.InstanceAt, State: state, LeaseHeld: lease.Held, Demote: lease.Demote,
		Fallback: fallback, Participation: participation, Sweep: sweep, Parameters: m.params, ManagerUpdate: update,
		Log: m.deps.Log.WithName("control-api")}
	ln, err := m.sockets.listen("control", m.cfg.ManagerAddr)
	if err != nil {
		return nil, nil, fmt.Errorf("listening for the control API: %w", err)
	}
	return newHTTPServer(api.Handler(), tlsfiles.ServerConfig(files), controlAPITimeouts), ln, nil
}

// mysqldTLS keeps mysqld's server certificate, the files of serverFiles, current.
func (m *manager) mysqldTLS(serverFiles *tlsfiles.Loader) *MysqldTLS {
	return &MysqldTLS{Files: serverFiles, Op: m.op, Clock: m.deps.Clock, Log: m.deps.Log.WithName("tls")}
}

// roleReconciler wires the role reconciler: replication from the others over TLS with the
// replication account, their state over their control API, the accounts created by a primary.
func (m *manager) roleReconciler(ctx context.Context, peers peerTLS, isolation *IsolationDetector, lease *PrimaryLease,
	state *LocalState, sweep *SessionSweep) (*RoleReconciler, error) {
	users, err := ClusterUsers(ctx, m.deps.Passwords)
	if err != nil {
		return nil, err
	}
	files := m.cfg.clientTLS()
	sourceFor := func(instance string) (mysql.Source, error) {
		a := m.dir.Address(instance)
		return mysql.Source{Host: a.Host, Port: a.MySQLPort, User: users.Replication.Name,
			Password: users.Replication.Password, CAFile: m.cfg.mustInMysqld(files.CA),
			CertFile: m.cfg.mustInMysqld(files.Cert), KeyFile: m.cfg.mustInMysqld(files.Key),
			VerifyServerCert: true}, nil
	}
	log := m.deps.Log.WithName("role")
	r := &RoleReconciler{
		Client: m.deps.Client, Cluster: m.cluster, Instance: m.cfg.Instance,
		Actor: &RoleActor{Op: m.op, SourceFor: sourceFor, DrainTimeout: 30 * time.Second, Lease: lease, Sweep: sweep, Log: log},
		Peers: ControlPeers{PeerDirectory: m.dir, Client: peers.client}, Clock: m.deps.Clock, Log: log,
		Isolation: isolation, ManageSemiSync: true, Lease: lease, State: state,
		OnPrimary: m.accountsOnPrimary(users, log),
	}
	r.Actor.StillTarget = r.StillTarget
	return r, nil
}

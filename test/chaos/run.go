package chaos

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Config of a run.
type Config struct {
	Target Target
	// Faults is how many faults to inject; kind i is Kinds[i % len(Kinds)].
	Faults int
	Kinds  []Kind
	// Hold is how long a network cut lasts: longer than the Lease TTL of 15 s and the failover
	// that follows its expiry, so that the failover, not the healing, ends the outage.
	Hold time.Duration
	// WriteInterval between inserts; PollInterval of the read-only poller and the -ro reader.
	WriteInterval, PollInterval time.Duration
	// ReadyTimeout bounds the wait for the Cluster to be Ready after a fault; WriteTimeout the
	// wait for the first acknowledged write after it; CatchUp a replica's catch-up in Verify.
	ReadyTimeout, WriteTimeout, CatchUp time.Duration
	// Settle is how long writes must flow before the next fault.
	Settle time.Duration
	// RecoverDiverged: when a fault leaves an instance listed as diverged, inspect it and recover
	// it (RecoverDiverged) instead of stopping the run.
	RecoverDiverged bool
	// EffectTimeout bounds the wait for a fault to show (a failed write, the primary not
	// answering or read-only) before its recovery is awaited.
	EffectTimeout time.Duration
}

// Defaults fills zero fields.
func (c *Config) Defaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&c.Hold, 45*time.Second)
	def(&c.WriteInterval, 20*time.Millisecond)
	def(&c.PollInterval, 100*time.Millisecond)
	def(&c.ReadyTimeout, 5*time.Minute)
	def(&c.WriteTimeout, 2*time.Minute)
	def(&c.CatchUp, time.Minute)
	def(&c.Settle, 3*time.Second)
	def(&c.EffectTimeout, 30*time.Second)
	if c.Faults == 0 {
		c.Faults = 1
	}
	if len(c.Kinds) == 0 {
		c.Kinds = Kinds
	}
}

// Run prepares the Cluster, starts the writer, the poller and the reader, injects the faults one
// after the other (each once the Cluster is Ready and writes flow), verifies after each, and
// returns the report. An error means the run could not go on (a fault could not be injected, the
// Cluster never came back); the report then holds what was measured until then.
func Run(ctx context.Context, e *Env, cfg Config) (*Report, error) {
	cfg.Defaults()
	t := cfg.Target
	rep := &Report{Started: time.Now(), Kinds: cfg.Kinds}
	c, _, err := e.WaitReady(ctx, t, cfg.ReadyTimeout)
	if err != nil {
		return rep, err
	}
	if ss := c.Spec.MySQL.SemiSync; ss != nil {
		rep.Durability, rep.SemiSync = string(ss.DataDurability), ss.Enabled
		rep.SemiSyncTimeout = time.Duration(ss.TimeoutMillis) * time.Millisecond
	}
	if ss := c.Status.SemiSync; ss != nil {
		rep.SemiSyncStatus = fmt.Sprintf("status.semiSync at the start: active %v, waitForReplicaCount %d", ss.Active, ss.WaitForReplicaCount)
	}
	prep, err := e.Prepare(ctx, t, c.Status.CurrentPrimary)
	if err != nil {
		return rep, err
	}
	rep.Account = prep.Note
	e.logf("%s", prep.Note)
	rw, err := e.ServiceAddr(ctx, t.Namespace, t.Name+"-rw")
	if err != nil {
		return rep, err
	}
	ro, err := e.ServiceAddr(ctx, t.Namespace, t.Name+"-ro")
	if err != nil {
		return rep, err
	}
	pods, err := e.Pods(ctx, t)
	if err != nil {
		return rep, err
	}
	var instances []string
	for _, p := range pods {
		instances = append(instances, p.Name)
	}

	lctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	addrs := &Addresses{Env: e, Target: t, Refresh: 500 * time.Millisecond}
	w := &Writer{Env: e, Account: prep.Account, Addr: rw, Interval: cfg.WriteInterval, Timeout: 5 * time.Second,
		FirstID: time.Now().UnixMilli() * 1000}
	clients := newClients(e, prep.Account, rw, w.FirstID)
	p := &Poller{Env: e, Account: prep.Account, Addrs: addrs, Instances: instances, Interval: cfg.PollInterval}
	r := &Reader{Env: e, Account: prep.Account, Addr: ro, Interval: cfg.PollInterval}
	loops := []func(context.Context){addrs.Run, p.Run, r.Run, func(ctx context.Context) { _ = w.Run(ctx) }}
	for _, c := range clients {
		loops = append(loops, func(ctx context.Context) { _ = c.Run(ctx) })
	}
	for _, f := range loops {
		wg.Add(1)
		go func() { defer wg.Done(); f(lctx) }()
	}
	finish := func(runErr error) (*Report, error) {
		stop()
		wg.Wait()
		rep.finish(w.Stats(), allStats(w, clients), p.Observations(), r.Reads())
		return rep, runErr
	}

	if err := waitWrites(ctx, w, time.Now(), cfg.WriteTimeout); err != nil {
		return finish(fmt.Errorf("writes through %s-rw never flowed: %w", t.Name, err))
	}
	accepted := map[int64]bool{} // lost by the preferred contract: out of later checks
	for i := 0; i < cfg.Faults; i++ {
		kind := cfg.Kinds[i%len(cfg.Kinds)]
		res, err := runFault(ctx, e, cfg, w, clients, r, p, prep.Account, kind, accepted)
		if !res.At.IsZero() { // injected
			rep.Faults = append(rep.Faults, res)
			e.logf("fault %d/%d %s", i+1, cfg.Faults, res.Line())
		}
		if err != nil {
			return finish(fmt.Errorf("fault %d (%s): %w", i+1, kind, err))
		}
	}
	return finish(nil)
}

// runFault waits for a Ready Cluster with writes flowing, injects one fault on the primary, waits
// for Ready and the first acknowledged write again, and verifies.
func runFault(ctx context.Context, e *Env, cfg Config, w *Writer, clients []*Writer, r *Reader, p *Poller, a Account, kind Kind,
	accepted map[int64]bool) (FaultResult, error) {
	t := cfg.Target
	res := FaultResult{Fault: Fault{Kind: kind}}
	c, pods, err := e.WaitReady(ctx, t, cfg.ReadyTimeout)
	if err != nil {
		return res, err
	}
	if err := waitWrites(ctx, w, time.Now(), cfg.WriteTimeout); err != nil {
		return res, fmt.Errorf("no writes before the fault: %w", err)
	}
	select {
	case <-ctx.Done():
		return res, ctx.Err()
	case <-time.After(cfg.Settle):
	}
	primary := c.Status.CurrentPrimary
	replica := switchoverTarget(primary, pods)
	if ss := c.Spec.MySQL.SemiSync; ss != nil {
		res.Durability = string(ss.DataDurability)
	}
	before := w.Stats()
	f, err := e.Inject(ctx, t, kind, primary, replica, cfg.Hold)
	res.Fault = f
	if err != nil {
		return res, fmt.Errorf("injecting: %w", err)
	}
	// A write may be acknowledged just after the fault (in flight when a process was killed, or
	// before a deleted Pod's shutdown): wait until the fault shows, so that what follows measures
	// the recovery and not the last breath.
	shown := waitEffect(ctx, w, p, before, primary, f.At, cfg.EffectTimeout)
	// Recovered: an acknowledged write after the fault, then the Cluster Ready (its status lags
	// behind a fault the instances recover from by themselves, so Ready alone proves nothing),
	// then every instance verified.
	if err := waitWrites(ctx, w, shown, cfg.WriteTimeout); err != nil {
		res.Error = "no acknowledged write after the fault: " + err.Error()
	}
	var diverged []string
	c, pods, diverged, err = e.WaitReadyOrDiverged(ctx, t, cfg.ReadyTimeout)
	for err == nil && len(diverged) > 0 {
		if !cfg.RecoverDiverged {
			err = fmt.Errorf("instances diverged: %v (the Cluster waits for a human)", diverged)
			break
		}
		// A former primary that kept a transaction no replica received: by design it waits for a
		// human. The checker checks that no acknowledged write is among what it alone holds, then
		// recovers it as a human would, so that the run goes on.
		for _, name := range diverged {
			d := e.InspectDiverged(ctx, a, c.Status.CurrentPrimary, name, pods, allStats(w, clients), w.FirstID)
			e.logf("%s diverged: errant %s, %d rows the primary lacks (%d acknowledged, %d neither acknowledged nor of unknown outcome)",
				name, d.Errant, len(d.ExtraRows), len(d.Acknowledged), len(d.Unexplained))
			rec, rerr := e.RecoverDiverged(ctx, t, name)
			d.Recovery = rec
			if rerr != nil {
				d.Error = rerr.Error()
			}
			res.Diverged = append(res.Diverged, d)
			if rerr != nil {
				err = rerr
				break
			}
		}
		if err == nil {
			c, pods, diverged, err = e.WaitReadyOrDiverged(ctx, t, cfg.ReadyTimeout)
		}
	}
	if err != nil {
		res.Error = err.Error()
		res.Events, _ = e.ClusterEvents(ctx, t, f.At, false)
		return res, err
	}
	res.NewPrimary = c.Status.CurrentPrimary
	for _, cond := range c.Status.Conditions {
		if cond.Type != "Ready" && cond.Status == metav1.ConditionTrue {
			res.Conditions = append(res.Conditions, cond.Type+"="+cond.Reason+": "+cond.Message)
		}
	}
	// The writes must come from the primary the Cluster names: after a switchover the old primary
	// acknowledges until it is demoted, and Ready may come before the writer has reconnected.
	if err := waitWritesBy(ctx, w, shown, res.NewPrimary, cfg.WriteTimeout); err != nil {
		res.Error = "no acknowledged write by " + res.NewPrimary + " after the fault: " + err.Error()
	}
	// So must each client's: a pool pinned to the old primary never gets there.
	for _, cw := range clients {
		if err := waitWritesBy(ctx, cw, shown, res.NewPrimary, cfg.WriteTimeout); err != nil && res.Error == "" {
			res.Error = fmt.Sprintf("no acknowledged write of the %s client by %s after the fault: %v", cw.Kind, res.NewPrimary, err)
		}
	}
	res.ReadyAt = time.Now()
	ws := allStats(w, clients)
	res.Clients = measureClients(clients, f, res.NewPrimary, firstAckBy(ws.Acks, res.NewPrimary, f.At), res.ReadyAt)
	if res.LossAccepted() {
		for _, d := range res.Diverged {
			for _, id := range d.Acknowledged {
				accepted[id] = true
			}
		}
	}
	acks := slices.DeleteFunc(slices.Clone(ws.Acks), func(a Ack) bool { return accepted[a.ID] })
	own := w.Stats()
	res.SlowAttempts = SlowAttemptsBetween(own.Slow, f.At, res.ReadyAt)
	res.Writes = MeasureWrites(slices.DeleteFunc(own.Acks, func(a Ack) bool { return accepted[a.ID] }), f.At, res.ReadyAt.Add(time.Hour))
	res.Reads = MeasureReads(r.Reads(), f.At, res.ReadyAt)
	res.Checks = e.Verify(ctx, a, res.NewPrimary, pods, acks, cfg.CatchUp)
	res.Events, _ = e.ClusterEvents(ctx, t, f.At, false)
	return res, nil
}

// waitEffect waits until a fault on primary shows after at: an attempted write failed or its
// outcome is unknown, or the poller saw primary not answering or read-only; at most timeout (a
// fault that does not show at all is then measured as it is). It returns when the fault showed
// (at when it did not): recovery is a write acknowledged after that.
func waitEffect(ctx context.Context, w *Writer, p *Poller, before WriterStats, primary string, at time.Time, timeout time.Duration) time.Time {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		st := w.Stats()
		if st.Failed > before.Failed || len(st.Unknown) > len(before.Unknown) {
			return time.Now()
		}
		obs := p.Observations()
		for i := len(obs) - 1; i >= 0 && obs[i].At.After(at); i-- {
			if obs[i].Instance == primary && !obs[i].Writable() {
				return time.Now()
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return at
}

// waitWrites waits for an acknowledged write after since.
func waitWrites(ctx context.Context, w *Writer, since time.Time, timeout time.Duration) error {
	return waitWritesBy(ctx, w, since, "", timeout)
}

// waitWritesBy waits for a write acknowledged after since by the server whose hostname (its Pod's
// name) is host, or by any server when host is "".
func waitWritesBy(ctx context.Context, w *Writer, since time.Time, host string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		st := w.Stats()
		if n := len(st.Acks); n > 0 && st.Acks[n-1].At.After(since) && (host == "" || st.Acks[n-1].Host == host) {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("none within " + timeout.String() + "; last error: " + st.LastError)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// switchoverTarget is the instance after the primary in name order, wrapping around.
func switchoverTarget(primary string, pods []corev1.Pod) string {
	first := ""
	for _, p := range pods {
		if p.Name == primary {
			continue
		}
		if first == "" {
			first = p.Name
		}
		if p.Name > primary {
			return p.Name
		}
	}
	return first
}

// allStats merges the records of the checker's writer and the clients.
func allStats(w *Writer, clients []*Writer) WriterStats {
	all := []WriterStats{w.Stats()}
	for _, c := range clients {
		all = append(all, c.Stats())
	}
	return mergeStats(all...)
}

package instance

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// bootstrapPoll is the interval of the waits before mysqld serves: the Cluster read again while
// bootstrap must wait, mysqld polled until it answers.
const bootstrapPoll = 250 * time.Millisecond

// readCluster reads the Cluster, retrying until it succeeds or ctx ends: an API server that is
// briefly unreachable at start must not restart the container.
func (m *manager) readCluster(ctx context.Context) (*v1alpha1.Cluster, error) {
	for {
		var c v1alpha1.Cluster
		err := m.deps.Client.Get(ctx, m.cluster, &c)
		if err == nil {
			return &c, nil
		}
		m.deps.Log.Info("reading the Cluster failed; retrying", "error", err.Error())
		if err := m.sleep(ctx, time.Second); err != nil {
			return nil, fmt.Errorf("reading Cluster %s: %w", m.cluster, err)
		}
	}
}

func (m *manager) sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-m.deps.Clock.After(d):
		return nil
	}
}

// writeMyCnf renders my.cnf from the Cluster's parameters, leaving out those refused (owned keys,
// unsafe values, and what mysqld --validate-config refuses, so that a bad parameter never keeps
// mysqld from starting), and creates the ParameterApplier that follows later changes from there.
func (m *manager) writeMyCnf(ctx context.Context, c *v1alpha1.Cluster) error {
	params := m.userParameters(c.Spec.MySQL.Parameters)
	cnf, err := m.renderMyCnf(params)
	if err != nil {
		return err
	}
	refused := map[string]string{}
	for _, r := range cnf.Refused {
		refused[canonicalKey(r.Key)] = r.Reason
	}
	want := specs.CanonicalParameters(params)
	for k := range refused {
		delete(want, k)
	}
	for k, v := range want {
		if isInitOnly(k) && m.initRecord != nil {
			if rec := m.initRecord[strings.TrimPrefix(k, "loose_")]; !sameSetting(rec, v) {
				refused[k] = fmt.Sprintf("valid only when the data directory is initialized: this one was initialized with %s=%s",
					strings.TrimPrefix(k, "loose_"), rec)
			}
			delete(want, k) // my.cnf carries the recorded value (renderMyCnf)
		}
	}
	text, _, err := validatedMyCnf(ctx, m.renderMyCnf, m.validateMyCnf, m.deps.Log, want, refused)
	if err != nil {
		return err
	}
	var refusals []RefusedParameter
	for k, reason := range refused {
		m.deps.Log.Info("parameter refused", "key", k, "reason", reason)
		refusals = append(refusals, RefusedParameter{Key: k, Reason: reason})
	}
	if err := m.writeMyCnfText(text); err != nil {
		return err
	}
	started := want
	if m.adopted != nil && m.runningParams != nil {
		// mysqld kept running through an in-place update: it runs what the previous program knew,
		// not what my.cnf says now (a parameter that waits for a restart stays pending).
		started = m.runningParams
	}
	m.params = NewParameterApplier(started, refusals)
	// A fresh process has nothing to reload: only a reload asked for after its start counts.
	m.params.reloaded = c.Annotations[v1alpha1.ReloadedAtAnnotation]
	m.params.Render, m.params.Write, m.params.Validate = m.renderMyCnf, m.writeMyCnfText, m.validateMyCnf
	m.params.Clock, m.params.Log = m.deps.Clock, m.deps.Log.WithName("parameters")
	return nil
}

// userParameters are the Cluster's parameters over the run configuration's own (tests).
func (m *manager) userParameters(spec map[string]string) map[string]string {
	params := map[string]string{}
	for k, v := range m.cfg.Parameters {
		params[k] = v
	}
	for k, v := range spec {
		params[k] = v
	}
	return params
}

// renderMyCnf renders my.cnf with params, the data directory's initialization-only parameters
// pinned to their recorded values.
func (m *manager) renderMyCnf(params map[string]string) (MyCnf, error) {
	return RenderMyCnf(m.cfg.MyCnfInput(m.serial, pinInitParameters(params, m.initRecord)))
}

func (m *manager) writeMyCnfText(text string) error {
	if err := writeFileAtomic(m.cfg.myCnfPath(), text, 0o644); err != nil {
		return fmt.Errorf("writing my.cnf: %w", err)
	}
	return nil
}

// validateMyCnf runs mysqld --validate-config on text (written beside my.cnf): mysqld's error
// lines when it refuses the file, "" when it accepts it.
func (m *manager) validateMyCnf(ctx context.Context, text string) (string, error) {
	path := m.cfg.myCnfPath() + ".candidate"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return "", fmt.Errorf("writing a candidate my.cnf: %w", err)
	}
	defer os.Remove(path)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	raw, err := m.cfg.MysqldWith(ctx, path, "--validate-config").CombinedOutput()
	if err == nil {
		return "", nil
	}
	out := string(raw)
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "[ERROR]") && !strings.Contains(l, "Aborting") {
			if i := strings.Index(l, "[Server] "); i >= 0 {
				l = l[i+len("[Server] "):]
			}
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	if len(lines) == 0 {
		return "", fmt.Errorf("mysqld --validate-config: %w: %s", err, out)
	}
	return strings.Join(lines, "; "), nil
}

// decideBootstrap decides what to do with the data directory, reading the Cluster again while
// the decision is to wait.
func (m *manager) decideBootstrap(ctx context.Context) (BootstrapDecision, error) {
	var last string
	for {
		hasData, err := HasData(m.cfg.DataDir)
		if err != nil {
			return BootstrapDecision{}, err
		}
		c, err := m.readCluster(ctx)
		if err != nil {
			return BootstrapDecision{}, err
		}
		d := DecideBootstrap(m.cfg.Instance, hasData, c.Recovery() != nil, &c.Status)
		if d.Reason != last {
			m.deps.Log.Info("bootstrap decision", "action", d.Action.String(), "donor", d.Donor, "reason", d.Reason)
			last = d.Reason
		}
		if d.Action != BootstrapWait {
			return d, nil
		}
		if err := m.sleep(ctx, bootstrapPoll); err != nil {
			return BootstrapDecision{}, fmt.Errorf("waiting to bootstrap: %w", err)
		}
	}
}

// waitForMysqld polls until mysqld answers.
func (m *manager) waitForMysqld(ctx context.Context) error {
	for {
		if _, err := m.op.Status(ctx); err == nil {
			return nil
		}
		if err := m.sleep(ctx, bootstrapPoll); err != nil {
			return fmt.Errorf("waiting for mysqld to answer: %w", err)
		}
	}
}

// cloneUntilDone clones donor into the freshly initialized server, retrying failed attempts: the
// data directory holds nothing to lose yet, and a replica with no data must not serve.
func (m *manager) cloneUntilDone(ctx context.Context, donor string) error {
	for attempt := 1; ; attempt++ {
		begin := m.deps.Clock.Now()
		err := m.cloneOnce(ctx, donor)
		if err == nil {
			m.deps.Log.Info("cloned", "donor", donor, "took", m.deps.Clock.Since(begin).Round(time.Millisecond))
			kept, err := ClearClonePending(m.cfg.DataDir)
			if err == nil && !kept {
				m.deps.Log.Info("the clone removed its pending marker")
			}
			return err
		}
		m.deps.Log.Error(err, "clone failed; retrying", "donor", donor, "attempt", attempt)
		if err := m.sleep(ctx, min(time.Duration(attempt)*time.Second, 30*time.Second)); err != nil {
			return fmt.Errorf("cloning from %s: %w", donor, err)
		}
		if err := m.waitForMysqld(ctx); err != nil {
			return err
		}
	}
}

func (m *manager) cloneOnce(ctx context.Context, donor string) error {
	password, err := m.deps.Passwords.Password(ctx, specs.UserBackup)
	if err != nil {
		return err
	}
	// A clone needs every plugin of the donor, which may have semi-sync installed.
	if err := m.op.InstallSemiSyncPlugins(ctx); err != nil {
		return err
	}
	a, tls := m.dir.Address(donor), m.cfg.clientTLS()
	_, err = CloneFromDonor(ctx, m.op, mysql.Donor{
		Host: a.Host, Port: a.MySQLPort, User: specs.UserBackup, Password: password,
		CAFile: m.cfg.mustInMysqld(tls.CA), CertFile: m.cfg.mustInMysqld(tls.Cert), KeyFile: m.cfg.mustInMysqld(tls.Key),
	}, bootstrapPoll)
	return err
}

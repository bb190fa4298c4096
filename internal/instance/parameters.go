package instance

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// ParameterApplier makes a change of spec.mysql.parameters take effect on the running server:
// each changed dynamic variable by SET GLOBAL (never SET PERSIST: a persisted value would override
// later edits of my.cnf), and every accepted parameter in my.cnf for the next start. A variable
// mysqld refuses to set at runtime (error 1238, or a startup-only option) waits for a restart,
// reported as pending: the operator then restarts the instance in its rolling-update order. A
// value mysqld refuses, a key it does not know, an operator-owned key, or a change of a parameter
// valid only at initialization is refused, left out of my.cnf (a bad my.cnf would keep mysqld
// from starting) and reported with the reason.
type ParameterApplier struct {
	Op mysql.Operator
	// Render renders my.cnf with the given user parameters (RenderMyCnf with this instance's
	// input); Write replaces my.cnf with text.
	Render func(params map[string]string) (MyCnf, error)
	Write  func(text string) error
	// Validate runs mysqld --validate-config on text: the error lines when mysqld refuses it,
	// "" when it accepts it; err when it could not be run (nil Validate: no check).
	Validate func(ctx context.Context, text string) (refusal string, err error)
	Clock    clock.Clock
	Log      logr.Logger

	mu sync.Mutex
	// running are the user parameters mysqld runs with (canonical keys): those it started with,
	// then those set since.
	running map[string]string
	// pending are parameters whose new value (or removal) waits for a restart; refused those left
	// out, with the reason; hash the ParametersHash of the last spec converged ("" before).
	pending map[string]string
	refused map[string]string
	hash    string
	// desired is the spec's latest parameters, offered by the role reconciler, and specHash the
	// hash of the spec's own (desired may add the run configuration's); reported is the specHash
	// of the last offer converged.
	desired            map[string]string
	specHash, reported string
	// reload and reloaded are the Cluster's ReloadedAtAnnotation offered and converged: a new
	// value sets every parameter afresh.
	reload, reloaded string
	wake             chan struct{}
}

// NewParameterApplier starts from the user parameters mysqld was started with (those my.cnf
// holds) and those refused when it was rendered.
func NewParameterApplier(started map[string]string, refusedAtStart []RefusedParameter) *ParameterApplier {
	a := &ParameterApplier{running: specs.CanonicalParameters(started), pending: map[string]string{}, refused: map[string]string{},
		wake: make(chan struct{}, 1)}
	for _, r := range refusedAtStart {
		a.refused[canonicalKey(r.Key)] = r.Reason
	}
	return a
}

// Running returns the user parameters mysqld runs with, as this applier knows them (nil for a nil
// applier): an in-place update hands them to the next program.
func (a *ParameterApplier) Running() map[string]string {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return maps.Clone(a.running)
}

// Offer hands the parameters to converge on over, with the specs.ParametersHash of the Cluster's
// spec.mysql.parameters they come from; Run converges on the latest one offered.
func (a *ParameterApplier) Offer(params map[string]string, specHash, reload string) {
	a.mu.Lock()
	a.desired, a.specHash, a.reload = maps.Clone(params), specHash, reload
	if a.desired == nil {
		a.desired = map[string]string{}
	}
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// parameterRetry is how soon a convergence that failed (mysqld did not answer) is tried again.
const parameterRetry = 5 * time.Second

// Run converges on each offer until ctx ends, trying a failed convergence again.
func (a *ParameterApplier) Run(ctx context.Context) {
	var retry <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.wake:
		case <-retry:
		}
		retry = nil
		if err := a.converge(ctx); err != nil && ctx.Err() == nil {
			a.Log.Info("parameters not applied yet; trying again", "error", err.Error())
			retry = a.Clock.After(parameterRetry)
		}
	}
}

// Report is what the instance reports of its parameters (nil before the first convergence).
func (a *ParameterApplier) Report() *instanceclient.ParametersReport {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.hash == "" {
		return nil
	}
	r := &instanceclient.ParametersReport{Hash: a.reported, PendingRestart: slices.Sorted(maps.Keys(a.pending))}
	for _, k := range slices.Sorted(maps.Keys(a.refused)) {
		r.Refused = append(r.Refused, instanceclient.RefusedParameter{Key: k, Reason: a.refused[k]})
	}
	return r
}

// converge applies the latest offer once.
func (a *ParameterApplier) converge(ctx context.Context) error {
	a.mu.Lock()
	desired, hash, specHash, reload := maps.Clone(a.desired), specs.ParametersHash(a.desired), a.specHash, a.reload
	done := a.desired != nil && hash == a.hash && reload == a.reloaded
	reloading := reload != a.reloaded
	running := maps.Clone(a.running)
	a.mu.Unlock()
	if desired == nil || done {
		return nil
	}
	refused := map[string]string{}
	cnf, err := a.Render(desired)
	if err != nil {
		return err
	}
	for _, r := range cnf.Refused {
		refused[canonicalKey(r.Key)] = r.Reason
	}
	want := specs.CanonicalParameters(desired)
	for k := range refused {
		delete(want, k)
	}
	// my.cnf first: what mysqld refuses there is refused, and never set at runtime either.
	_, checked, err := validatedMyCnf(ctx, a.Render, a.Validate, a.Log, want, refused)
	if err != nil {
		return err
	}
	pending := map[string]string{}
	ch := planParameterChange(running, want)
	if reloading {
		// A reload sets every parameter afresh (a value changed by hand goes back to the spec's).
		maps.Copy(ch.Set, want)
	}
	for _, k := range slices.Sorted(maps.Keys(ch.Set)) {
		v := ch.Set[k]
		outcome, reason, err := a.set(ctx, k, v, checked)
		if err != nil {
			return err
		}
		switch {
		case outcome == setApplied:
			running[k] = v
		case outcome == setAtRestart && running[k] == v:
			// Read-only, and mysqld already runs with this value (a reload): nothing waits.
		case outcome == setAtRestart:
			pending[k] = v
		case outcome == setRefused:
			refused[k] = reason
			delete(want, k)
		}
	}
	// A parameter refused now keeps the value mysqld runs with, live and in my.cnf: a mistyped
	// value never resets the variable to its default on every instance at once.
	for k := range refused {
		if old, ok := running[k]; ok {
			want[k] = old
			delete(ch.Reset, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(ch.Reset)) {
		if isInitOnly(k) {
			delete(running, k) // my.cnf keeps the data directory's value whatever the spec says
			continue
		}
		err := a.Op.SetGlobal(ctx, k, ch.Reset[k])
		switch kind := mysql.ClassifyGlobalError(err); {
		case err == nil, kind == mysql.GlobalWrongValue:
			delete(running, k)
		case kind == mysql.GlobalReadOnly, kind == mysql.GlobalUnknown:
			pending[k] = "(removed)" // its removal takes effect at the restart
		default:
			return err
		}
	}
	// Rendered again: runtime refusals left want, and refused values put their running one back.
	if cnf, err = a.Render(want); err != nil {
		return err
	}
	if err := a.Write(cnf.Text); err != nil {
		return err
	}
	a.mu.Lock()
	a.running, a.pending, a.refused, a.hash, a.reported, a.reloaded = running, pending, refused, hash, specHash, reload
	a.mu.Unlock()
	a.Log.Info("parameters converged", "hash", hash, "pendingRestart", slices.Sorted(maps.Keys(pending)),
		"refused", len(refused))
	return nil
}

type setOutcome int

const (
	setApplied setOutcome = iota
	setAtRestart
	setRefused
)

// set applies one parameter at runtime and says what became of it. A parameter valid only at
// initialization is refused unless the server already runs with that value. A read-only variable
// (1238) waits for a restart; so does a name that is no system variable (1193) when mysqld took it
// in my.cnf (checked: a startup option), else it is refused. A value the server refuses (wrong
// value or type, a session-only variable, an unknown engine) is refused. Any other failure is
// returned, to be tried again: it never restarts anything.
func (a *ParameterApplier) set(ctx context.Context, k, v string, checked bool) (setOutcome, string, error) {
	if isInitOnly(k) {
		k = strings.TrimPrefix(k, "loose_")
		cur, err := a.Op.GlobalValue(ctx, k)
		if err != nil {
			return 0, "", err
		}
		if sameSetting(cur, v) {
			return setApplied, "", nil
		}
		return setRefused, fmt.Sprintf("valid only when the data directory is initialized: this one was initialized with %s=%s", k, cur), nil
	}
	err := a.Op.SetGlobal(ctx, k, v)
	switch kind := mysql.ClassifyGlobalError(err); {
	case err == nil:
		return setApplied, "", nil
	case kind == mysql.GlobalReadOnly, kind == mysql.GlobalUnknown && checked:
		a.Log.Info("parameter takes effect at the next start", "key", k, "because", serverMessage(err))
		return setAtRestart, "", nil
	case kind == mysql.GlobalUnknown:
		return setRefused, "mysqld knows no such variable: " + serverMessage(err), nil
	case kind == mysql.GlobalWrongValue:
		return setRefused, "mysqld refuses the value: " + serverMessage(err), nil
	}
	return 0, "", err
}

// validatedMyCnf renders my.cnf with want. When mysqld (validate) refuses the file but accepts
// the one without any user parameter, each parameter is tried on top of the ones accepted before
// it, and those it refuses are removed from want and added to refused with mysqld's words. When
// mysqld refuses even the file without user parameters, or cannot run the check, the check says
// nothing about them and is skipped.
func validatedMyCnf(ctx context.Context, render func(map[string]string) (MyCnf, error),
	validate func(context.Context, string) (string, error), log logr.Logger, want, refused map[string]string) (string, bool, error) {
	cnf, err := render(want)
	if err != nil || validate == nil {
		return cnf.Text, false, err
	}
	bad, err := validate(ctx, cnf.Text)
	if err != nil {
		if ctx.Err() != nil {
			return "", false, ctx.Err()
		}
		// No verdict (mysqld could not run its check): the parameters go unchecked, as before
		// the check existed, rather than keep mysqld from starting.
		log.Info("my.cnf could not be checked with mysqld --validate-config", "error", err.Error())
		return cnf.Text, false, nil
	}
	if bad == "" {
		return cnf.Text, true, nil
	}
	base, err := render(map[string]string{})
	if err != nil {
		return "", false, err
	}
	if why, err := validate(ctx, base.Text); err != nil || why != "" {
		if ctx.Err() != nil {
			return "", false, ctx.Err()
		}
		log.Info("mysqld refuses my.cnf even without user parameters; they are not checked", "refusal", why)
		return cnf.Text, false, nil
	}
	accepted := map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(want)) {
		accepted[k] = want[k]
		alone, err := render(accepted)
		if err != nil {
			return "", false, err
		}
		why, err := validate(ctx, alone.Text)
		if err != nil {
			return "", false, err
		}
		if why != "" {
			refused[k] = "mysqld refuses it in my.cnf: " + why
			delete(accepted, k)
			delete(want, k)
		}
	}
	cnf, err = render(want)
	return cnf.Text, true, err
}

// serverMessage is the server's text of a MySQL error, without the operator's context.
func serverMessage(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": Error "); i >= 0 {
		return s[i+2:]
	}
	return s
}

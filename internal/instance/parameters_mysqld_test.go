package instance

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-logr/logr/testr"
	"k8s.io/utils/clock"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/proc"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/mysqldtest"
)

// TestParameterApplierOnMysqld changes spec.mysql.parameters under a running mysqld, with my.cnf
// checked by the real mysqld --validate-config: a dynamic variable takes effect at once, a
// read-only one waits for a restart, a value mysqld refuses and a key it does not know are
// refused and kept out of my.cnf, a parameter valid only at initialization is refused, and a
// removed one goes back to its default.
func TestParameterApplierOnMysqld(t *testing.T) {
	srv := mysqldtest.Start(t, mysqldtest.Options{})[0]
	op, err := mysql.NewFactory().New(srv.MySQLConfig("root", "", ""))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { op.Close() })
	rootfs, host, inside := chrootDir(t)
	render := func(params map[string]string) (MyCnf, error) {
		in := baseMyCnfInput()
		in.DataDir, in.RunDir = inside+"/data", inside
		p := map[string]string{"secure_file_priv": ""} // the root filesystem has no /var/lib/mysql-files
		for k, v := range params {
			p[k] = v
		}
		in.Parameters = p
		return RenderMyCnf(in)
	}
	written := ""
	validate := func(ctx context.Context, text string) (string, error) {
		path := filepath.Join(host, "candidate.cnf")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			return "", err
		}
		var out bytes.Buffer
		cmd := chrootMysqld(rootfs, "--defaults-file="+inside+"/candidate.cnf", "--validate-config")
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := proc.Run(cmd); err != nil {
			return strings.TrimSpace(out.String()), nil
		}
		return "", nil
	}
	a := NewParameterApplier(map[string]string{"max_connections": "200"}, nil)
	a.Op, a.Render, a.Validate, a.Clock, a.Log = op, render, validate, clock.RealClock{}, testr.New(t)
	a.Write = func(text string) error { written = text; return nil }
	ctx := t.Context()
	first := map[string]string{
		"max_connections":            "300",  // dynamic
		"long-query-time":            "2.5",  // dynamic, dashes
		"table_open_cache_instances": "4",    // read-only at runtime
		"sql_mode":                   "NOPE", // a value mysqld refuses
		"no_such_option":             "1",    // unknown to mysqld
		"lower_case_table_names":     "1",    // only at initialization
		"server_id":                  "9",    // operator-owned
	}
	a.Offer(first, specs.ParametersHash(first), "")
	if err := a.converge(ctx); err != nil {
		t.Fatal(err)
	}
	global := func(name string) string {
		v, err := op.GlobalValue(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if got := global("max_connections"); got != "300" {
		t.Errorf("max_connections = %s, want 300 at once", got)
	}
	if got := global("long_query_time"); got != "2.5" {
		t.Errorf("long_query_time = %s, want 2.5 at once", got)
	}
	r := a.Report()
	if r == nil || !slices.Equal(r.PendingRestart, []string{"table_open_cache_instances"}) {
		t.Errorf("pending restart %+v, want table_open_cache_instances", r)
	}
	refused := map[string]string{}
	for _, x := range r.Refused {
		refused[x.Key] = x.Reason
	}
	for key, why := range map[string]string{"sql_mode": "Error while setting value", "no_such_option": "unknown variable",
		"lower_case_table_names": "initialized", "server_id": "operator-owned"} {
		if !strings.Contains(refused[key], why) {
			t.Errorf("%s: refused %q, want a reason saying %q (all: %v)", key, refused[key], why, refused)
		}
	}
	for _, line := range []string{"max_connections = 300", "long_query_time = 2.5", "table_open_cache_instances = 4"} {
		if !strings.Contains(written, "\n"+line+"\n") {
			t.Errorf("my.cnf lacks %q:\n%s", line, written)
		}
	}
	for _, key := range []string{"sql_mode", "no_such_option", "lower_case_table_names", "server_id = 9"} {
		if strings.Contains(written, key) {
			t.Errorf("my.cnf holds the refused %q:\n%s", key, written)
		}
	}
	if why, _ := validate(ctx, written); why != "" {
		t.Errorf("the written my.cnf does not validate: %s", why)
	}
	// Removing max_connections resets it; removing the read-only one leaves its removal pending.
	a.Offer(map[string]string{"long_query_time": "2.5"}, specs.ParametersHash(map[string]string{"long_query_time": "2.5"}), "")
	if err := a.converge(ctx); err != nil {
		t.Fatal(err)
	}
	if got := global("max_connections"); got != "151" {
		t.Errorf("max_connections = %s after its removal, want the default 151", got)
	}
	want := &instanceclient.ParametersReport{Hash: specs.ParametersHash(map[string]string{"long_query_time": "2.5"})}
	if r := a.Report(); r == nil || r.Hash != want.Hash || len(r.Refused) != 0 || len(r.PendingRestart) != 0 {
		t.Errorf("report after the removals %+v, want hash %s, nothing pending (the read-only one never ran) nor refused", r, want.Hash)
	}
	// A reload sets every parameter afresh: a value changed by hand goes back to the spec's.
	if err := op.SetGlobal(ctx, "long_query_time", "9"); err != nil {
		t.Fatal(err)
	}
	a.Offer(map[string]string{"long_query_time": "2.5"}, specs.ParametersHash(map[string]string{"long_query_time": "2.5"}), "2026-11-29T12:00:00Z")
	if err := a.converge(ctx); err != nil {
		t.Fatal(err)
	}
	if got := global("long_query_time"); got != "2.5" {
		t.Errorf("long_query_time = %s after a reload, want the spec's 2.5 again", got)
	}
	// A read-only variable mysqld already runs with is not pending after a reload (else every
	// reload would restart every instance), and a mistyped value keeps the running one.
	ro := map[string]string{"table_open_cache_instances": global("table_open_cache_instances"), "max_connections": "250"}
	b := NewParameterApplier(ro, nil)
	b.Op, b.Render, b.Validate, b.Clock, b.Log = op, render, validate, clock.RealClock{}, testr.New(t)
	b.Write = func(text string) error { written = text; return nil }
	if err := op.SetGlobal(ctx, "max_connections", "250"); err != nil {
		t.Fatal(err)
	}
	b.Offer(ro, specs.ParametersHash(ro), "reload-1")
	if err := b.converge(ctx); err != nil {
		t.Fatal(err)
	}
	if r := b.Report(); r == nil || len(r.PendingRestart) != 0 {
		t.Errorf("after a reload %+v, want nothing pending", r)
	}
	typo := map[string]string{"table_open_cache_instances": ro["table_open_cache_instances"], "max_connections": "25O"}
	b.Offer(typo, specs.ParametersHash(typo), "reload-1")
	if err := b.converge(ctx); err != nil {
		t.Fatal(err)
	}
	if got := global("max_connections"); got != "250" {
		t.Errorf("max_connections = %s after a refused value, want the running 250 kept", got)
	}
	if !strings.Contains(written, "\nmax_connections = 250\n") {
		t.Errorf("my.cnf does not keep the running max_connections:\n%s", written)
	}
	if r := b.Report(); r == nil || len(r.Refused) != 1 || r.Refused[0].Key != "max_connections" {
		t.Errorf("report %+v, want max_connections refused", r)
	}
}

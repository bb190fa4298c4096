package monitoring

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/dashboard"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/promqlnames"
)

func loadDashboard(t *testing.T) dashboard.Dashboard {
	t.Helper()
	d, err := LoadDashboard(DashboardPath())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDashboardDecodesIntoTheSDKType decodes the file into the SDK's dashboard type and encodes it
// again: the same JSON comes back, so no field of the file is one the type does not know.
func TestDashboardDecodesIntoTheSDKType(t *testing.T) {
	d := loadDashboard(t)
	if d.Uid == nil || *d.Uid != "cloudnative-mysql" || d.Title == nil || *d.Title == "" {
		t.Errorf("uid %v, title %v: want uid cloudnative-mysql and a title", d.Uid, d.Title)
	}
	again, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(DashboardPath())
	if err != nil {
		t.Fatal(err)
	}
	var file, decoded any
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(again, &decoded); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(file, decoded) {
		t.Errorf("the dashboard re-encoded from the SDK type differs from the file")
	}
}

// The rows, in order, and series each must show (the minimum; a row may show more).
var wantRows = []struct {
	title  string
	series []string
}{
	{"Overview", []string{"cnm_instance_up", "cnm_instance_primary", "cnm_instance_writable",
		"cnm_cluster_writable_instances_seen", "cnm_instance_fenced", "cnm_instance_diverged",
		"cnm_cluster_fenced_instances", "cnm_cluster_diverged_instances", "cnm_lease_held", "cnm_lease_renew_age_seconds"}},
	{"Replication and semi-sync", []string{"cnm_replication_io_running", "cnm_replication_sql_running",
		"cnm_replication_lag_seconds", "cnm_replication_lag_transactions", "cnm_semisync_source_on",
		"cnm_semisync_fallen_back", "cnm_semisync_acknowledging_replicas", "cnm_semisync_waiting_sessions",
		"cnm_semisync_longest_wait_seconds"}},
	{"Backups and verification", []string{"cnm_backup_last_success_timestamp_seconds", "cnm_backups_healthy",
		"cnm_backups_no_success_critical", "cnm_backups_restorable", "cnm_backups_restorable_bytes", "cnm_backups_total",
		"cnm_backup_duration_seconds", "cnm_backup_bytes", "cnm_backup_verification_last_passed",
		"cnm_backup_verification_last_timestamp_seconds", "cnm_backup_verification_last_success_timestamp_seconds",
		"cnm_backup_verification_duration_seconds", "cnm_backup_verifications_total"}},
	{"Archive and recoverable window", []string{"cnm_binlog_archive_lag_seconds", "cnm_binlog_archive_backlog_binlogs",
		"cnm_binlog_archive_last_segment_timestamp_seconds", "cnm_binlog_archive_failures_total", "cnm_binlog_archive_fork",
		"cnm_backup_last_success_timestamp_seconds"}},
	{"Failovers", []string{"cnm_failovers_total", "cnm_switchovers_total", "cnm_failover_duration_seconds_bucket",
		"cnm_failovers_blocked_total"}},
	{"MySQL", []string{"cnm_mysql_threads_connected", "cnm_mysql_queries_total", "cnm_mysql_innodb_buffer_pool_bytes_data",
		"cnm_mysql_innodb_row_lock_waits_total"}},
}

// TestDashboardLayout checks rows, panel identities, data sources and the grid.
func TestDashboardLayout(t *testing.T) {
	d := loadDashboard(t)
	var rows []string
	ids := map[uint32]bool{}
	type rect struct{ x, y, w, h uint32 }
	var placed []rect
	panelsInRow := map[string]int{}
	row := ""
	for _, pr := range d.Panels {
		var id uint32
		var pos *dashboard.GridPos
		switch {
		case pr.RowPanel != nil:
			row = deref(pr.RowPanel.Title)
			rows = append(rows, row)
			id, pos = pr.RowPanel.Id, pr.RowPanel.GridPos
		case pr.Panel != nil:
			p := pr.Panel
			panelsInRow[row]++
			if p.Id != nil {
				id = *p.Id
			}
			pos = p.GridPos
			if deref(p.Title) == "" || deref(p.Description) == "" {
				t.Errorf("row %q: a panel without a title or a description: %q", row, deref(p.Title))
			}
			if p.Datasource == nil || deref(p.Datasource.Uid) != "${datasource}" {
				t.Errorf("panel %q: data source %v, want the ${datasource} variable", deref(p.Title), p.Datasource)
			}
			if len(p.Targets) == 0 {
				t.Errorf("panel %q has no query", deref(p.Title))
			}
		}
		if id == 0 || ids[id] {
			t.Errorf("row %q: panel id %d missing or repeated", row, id)
		}
		ids[id] = true
		if pos == nil || pos.X+pos.W > 24 || pos.W == 0 || pos.H == 0 {
			t.Errorf("row %q, panel %d: grid position %+v outside the 24-column grid", row, id, pos)
			continue
		}
		r := rect{pos.X, pos.Y, pos.W, pos.H}
		for _, o := range placed {
			if r.x < o.x+o.w && o.x < r.x+r.w && r.y < o.y+o.h && o.y < r.y+r.h {
				t.Errorf("row %q, panel %d at %+v overlaps %+v", row, id, r, o)
			}
		}
		placed = append(placed, r)
	}
	var want []string
	for _, r := range wantRows {
		want = append(want, r.title)
		if panelsInRow[r.title] == 0 {
			t.Errorf("row %q has no panel", r.title)
		}
	}
	if !slices.Equal(rows, want) {
		t.Errorf("rows %q, want %q", rows, want)
	}
	qs, err := Queries(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range qs {
		if q.RefID == "" {
			t.Errorf("panel %q: a query without a refId", q.Panel)
		}
	}
}

// TestDashboardVariables checks the data source variable and that namespace and cluster list the
// values of their label among the operator's series, the cluster variable within the selected
// namespaces; both are multi-valued with "All" meaning every value.
func TestDashboardVariables(t *testing.T) {
	d := loadDashboard(t)
	var names []string
	for _, v := range d.Templating.List {
		names = append(names, v.Name)
		switch v.Name {
		case "datasource":
			if v.Type != dashboard.VariableTypeDatasource || v.Query == nil || deref(v.Query.String) != "prometheus" {
				t.Errorf("datasource variable: type %q, query %v; want a Prometheus data source variable", v.Type, v.Query)
			}
		case "namespace", "cluster":
			if v.Datasource == nil || deref(v.Datasource.Uid) != "${datasource}" {
				t.Errorf("variable %s: data source %v, want ${datasource}", v.Name, v.Datasource)
			}
			if v.Multi == nil || !*v.Multi || v.IncludeAll == nil || !*v.IncludeAll || deref(v.AllValue) != ".*" {
				t.Errorf("variable %s: multi %v, includeAll %v, allValue %v; want multi-valued with All as .*",
					v.Name, v.Multi, v.IncludeAll, v.AllValue)
			}
		}
	}
	if !slices.Equal(names, dashboardVariables) {
		t.Errorf("variables %q, want %q", names, dashboardVariables)
	}
	vqs, err := VariableQueries(d)
	if err != nil {
		t.Fatal(err)
	}
	exprs := make([]string, len(vqs))
	for i, vq := range vqs {
		if vq.Label != vq.Name {
			t.Errorf("variable %s lists the values of %s", vq.Name, vq.Label)
		}
		exprs[i] = vq.Selector
	}
	results := parse(t, exprs)
	for i, vq := range vqs {
		r := results[i]
		if r.Error != "" || len(r.Selectors) != 1 {
			t.Errorf("variable %s: selector %q: error %q, %d selectors; want one selector", vq.Name, vq.Selector, r.Error, len(r.Selectors))
			continue
		}
		s := r.Selectors[0]
		if !slices.Contains(contract[s.Metric], vq.Label) {
			t.Errorf("variable %s: %s does not carry the label %s in the contract", vq.Name, s.Metric, vq.Label)
		}
		if m, ok := s.Matcher("namespace"); vq.Name == "cluster" && (!ok || m.Type != "=~" || m.Value != "$namespace") {
			t.Errorf("variable cluster: selector %q not limited to $namespace", vq.Selector)
		}
	}
}

// TestDashboardQueries parses every panel query with the Prometheus parser and checks what it
// reads: series of the contract only, each limited to $namespace and $cluster, no variable the
// dashboard does not define, and each row showing the series it is for.
func TestDashboardQueries(t *testing.T) {
	d := loadDashboard(t)
	qs, err := Queries(d)
	if err != nil {
		t.Fatal(err)
	}
	exprs := make([]string, len(qs))
	for i, q := range qs {
		exprs[i] = builtinsOnly(q.Expr)
	}
	results := parse(t, exprs)
	read := map[string][]string{}
	for i, q := range qs {
		problems := append(queryProblems(results[i], contract), variableProblems(q.Expr, dashboardVariables)...)
		if len(problems) > 0 {
			t.Errorf("%s / %s / %s: %s\n  %s", q.Row, q.Panel, q.RefID, strings.Join(problems, "; "), q.Expr)
		}
		read[q.Row] = append(read[q.Row], promqlnames.Names(results[i])...)
	}
	for _, r := range wantRows {
		for _, s := range r.series {
			if !slices.Contains(read[r.title], s) {
				t.Errorf("row %q does not show %s", r.title, s)
			}
		}
	}
	t.Logf("%d queries in %d rows read %d series", len(qs), len(wantRows), len(promqlnames.Names(results...)))
}

package instancemetrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
)

const uuid = "3e11fa47-71ca-11e1-9e33-c80aa9429562"

func set(t *testing.T, text string) gtid.Set {
	t.Helper()
	s, err := gtid.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// find returns the value of the series name and whether it exists.
func find(samples []Sample, name string) (float64, bool) {
	for _, s := range samples {
		if s.Name == name {
			return s.Value, true
		}
	}
	return 0, false
}

func TestSeries(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	lag := int64(7)
	primary := func() *mysql.Status {
		return &mysql.Status{GTIDExecuted: set(t, uuid+":1-10"), SemiSync: mysql.SemiSyncStatus{SourcePluginInstalled: true,
			SourceEnabled: true, SourceActive: true, Clients: 2, AckWaiters: 1, LongestAckWait: 3 * time.Second}}
	}
	replica := func() *mysql.Status {
		return &mysql.Status{GTIDExecuted: set(t, uuid+":1-10"), ReadOnly: true, SuperReadOnly: true,
			Replication: &mysql.ReplicationStatus{IORunning: "Yes", SQLRunning: "No", LastSQLErrno: 1062,
				SecondsBehindSource: &lag, RetrievedGTIDSet: set(t, uuid+":1-14")}}
	}
	type want map[string]float64
	rows := []struct {
		name   string
		facts  Facts
		want   want
		absent []string
	}{
		{name: "a mysqld that does not answer is down and its own figures are absent, not zero",
			facts: Facts{RoleKnown: true, Primary: true, LeaseHeld: true, LeaseRenewed: now.Add(-4 * time.Second), Now: now},
			want:  want{"cnm_instance_up": 0, "cnm_instance_primary": 1, "cnm_lease_held": 1, "cnm_lease_renew_age_seconds": 4},
			absent: []string{"cnm_instance_writable", "cnm_instance_read_only", "cnm_gtid_executed_transactions",
				"cnm_replication_configured", "cnm_semisync_fallen_back", "cnm_mysql_queries_total"}},
		{name: "a writable primary with semi-sync acknowledging",
			facts: Facts{Status: primary(), Primary: true, Now: now},
			want: want{"cnm_instance_up": 1, "cnm_instance_writable": 1, "cnm_instance_super_read_only": 0,
				"cnm_gtid_executed_transactions": 10, "cnm_replication_configured": 0, "cnm_semisync_source_on": 1,
				"cnm_semisync_fallen_back": 0, "cnm_semisync_acknowledging_replicas": 2, "cnm_semisync_waiting_sessions": 1,
				"cnm_semisync_longest_wait_seconds": 3},
			absent: []string{"cnm_replication_io_running", "cnm_replication_lag_seconds"}},
		{name: "a primary whose manager fell back to async reports the fallback",
			facts: Facts{Status: func() *mysql.Status { s := primary(); s.SemiSync.SourceEnabled = false; return s }(),
				FallenBack: true, Primary: true, Now: now},
			want: want{"cnm_semisync_fallen_back": 1, "cnm_semisync_source_on": 0}},
		{name: "a primary mysqld itself fell back (enabled, status off) reports the fallback",
			facts: Facts{Status: func() *mysql.Status { s := primary(); s.SemiSync.SourceActive = false; return s }(), Now: now},
			want:  want{"cnm_semisync_fallen_back": 1, "cnm_semisync_source_on": 0}},
		{name: "a read-only server is never reported fallen back",
			facts: Facts{Status: func() *mysql.Status {
				s := primary()
				s.SuperReadOnly, s.SemiSync.SourceActive = true, false
				return s
			}(), FallenBack: true, Now: now},
			want: want{"cnm_semisync_fallen_back": 0, "cnm_instance_writable": 0}},
		{name: "a replica reports its threads, error and both lags",
			facts: Facts{Status: replica(), Now: now},
			want: want{"cnm_instance_writable": 0, "cnm_instance_read_only": 1, "cnm_replication_configured": 1,
				"cnm_replication_io_running": 1, "cnm_replication_sql_running": 0, "cnm_replication_last_error": 1,
				"cnm_replication_lag_seconds": 7, "cnm_replication_lag_transactions": 4},
			absent: []string{"cnm_semisync_source_enabled"}},
		{name: "a stopped thread's unknown lag in seconds is absent",
			facts:  Facts{Status: func() *mysql.Status { s := replica(); s.Replication.SecondsBehindSource = nil; return s }(), Now: now},
			want:   want{"cnm_replication_lag_transactions": 4},
			absent: []string{"cnm_replication_lag_seconds"}},
		{name: "before the role reconciler's first pass the role and fencing are absent, not false",
			facts:  Facts{Primary: true, Fenced: true, Now: now},
			want:   want{"cnm_instance_up": 0},
			absent: []string{"cnm_instance_primary", "cnm_instance_fenced"}},
		{name: "the renew age is absent while the Lease is not held",
			facts:  Facts{LeaseRenewed: now.Add(-time.Minute), Now: now},
			want:   want{"cnm_lease_held": 0},
			absent: []string{"cnm_lease_renew_age_seconds"}},
		{name: "fencing, divergence, isolation and self-fences are reported",
			facts: Facts{RoleKnown: true, Fenced: true, Diverged: true, Isolated: true, SelfFences: 3, Now: now},
			want:  want{"cnm_instance_fenced": 1, "cnm_instance_diverged": 1, "cnm_instance_isolated": 1, "cnm_self_fences_total": 3}},
		{name: "mysqld's counters are exported when read",
			facts: Facts{Status: primary(), Server: &mysql.ServerMetrics{Status: map[string]int64{"Queries": 42, "Threads_connected": 5},
				MaxConnections: 151, BinlogBytes: 1024}, Now: now},
			want:   want{"cnm_mysql_queries_total": 42, "cnm_mysql_threads_connected": 5, "cnm_mysql_max_connections": 151, "cnm_mysql_binlog_bytes": 1024},
			absent: []string{"cnm_mysql_slow_queries_total"}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			got := Series(r.facts)
			for name, v := range r.want {
				if g, ok := find(got, name); !ok || g != v {
					t.Errorf("%s = %v (present %v), want %v", name, g, ok, v)
				}
			}
			for _, name := range r.absent {
				if _, ok := find(got, name); ok {
					t.Errorf("%s present, want absent", name)
				}
			}
		})
	}
}

// TestSeriesTypes: every series ending in _total is a counter, and no name has two types.
func TestSeriesTypes(t *testing.T) {
	lag := int64(1)
	f := Facts{Status: &mysql.Status{Replication: &mysql.ReplicationStatus{SecondsBehindSource: &lag},
		SemiSync: mysql.SemiSyncStatus{SourcePluginInstalled: true}},
		Server: &mysql.ServerMetrics{Status: map[string]int64{}}, LeaseHeld: true, LeaseRenewed: time.Unix(1, 0),
		Certificates: map[string]time.Time{"server": time.Unix(2, 0)}, Now: time.Unix(3, 0)}
	for _, v := range mysql.GlobalStatusNames {
		f.Server.Status[v] = 1
	}
	for _, s := range Series(f) {
		counter := strings.HasSuffix(s.Name, "_total")
		if counter != (s.Type == prometheus.CounterValue) {
			t.Errorf("%s has type %v", s.Name, s.Type)
		}
	}
}

package instance

import (
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/mysqldtest"
)

// TestSemiSyncBeforeWrites proves the order of the statements, not a sample of the state: on a
// real mysqld with performance_schema's statement history on, a promotion (RoleActor.Apply of
// ActPrimary with the role pass's semi-sync settings) and the same after the primary's mysqld
// restarted in place (it starts read-only with the semi-sync source off) both run every
// SET GLOBAL rpl_semi_sync_source_* before the statement that clears read-only.
func TestSemiSyncBeforeWrites(t *testing.T) {
	srv := mysqldtest.Start(t, mysqldtest.Options{ExtraArgs: []string{
		"--performance-schema=ON",
		"--performance-schema-consumer-events-statements-history-long=ON",
	}})[0]
	op, err := mysql.NewFactory().New(srv.MySQLConfig("root", "", ""))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { op.Close() })
	spec := &v1alpha1.ClusterSpec{Instances: 3, MinSyncReplicas: 1, MaxSyncReplicas: 1,
		MySQL: v1alpha1.MySQLConfiguration{SemiSync: &v1alpha1.SemiSyncConfiguration{
			Enabled: true, TimeoutMillis: 1000, DataDurability: v1alpha1.DataDurabilityRequired}}}
	actor := &RoleActor{Op: op, DrainTimeout: 10 * time.Second, Log: testr.New(t)}
	r := &RoleReconciler{Actor: actor}

	promote := func(what string) {
		t.Helper()
		if err := op.SetReadOnly(t.Context(), true); err != nil { // as my.cnf starts an instance
			t.Fatal(err)
		}
		st, err := op.Status(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if st.SemiSync.SourceEnabled {
			t.Fatalf("%s: the source side is already on before the promotion", what)
		}
		d := RoleDecision{Action: ActPrimary, Reason: what, SemiSync: r.primarySemiSync(spec, st)}
		if d.SemiSync == nil || !d.SemiSync.SourceEnabled {
			t.Fatalf("%s: the pass would apply no semi-sync source settings: %+v", what, d.SemiSync)
		}
		if out, err := actor.Apply(t.Context(), d, st); err != nil || !out.Primary {
			t.Fatalf("%s: Apply = %+v, %v", what, out, err)
		}
		expectSemiSyncBeforeWrites(t, srv, what)
		if st, err := op.Status(t.Context()); err != nil || !st.Writable() || !st.SemiSync.SourceEnabled ||
			st.SemiSync.Timeout != mysql.SourceTimeoutNever {
			t.Fatalf("%s: after the promotion: %+v, %v", what, st, err)
		}
	}
	promote("promotion")
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	promote("in-place restart of the primary's mysqld")
}

// expectSemiSyncBeforeWrites reads the statement history and checks that the semi-sync source
// settings (the switch, the timeout, the wait point, wait_no_replica) were all set, and all
// before read-only was cleared.
func expectSemiSyncBeforeWrites(t *testing.T, srv *mysqldtest.Server, what string) {
	t.Helper()
	rows, err := srv.RootDB(t).QueryContext(t.Context(),
		"SELECT EVENT_NAME, TIMER_START, TIMER_END, SQL_TEXT FROM performance_schema.events_statements_history_long "+
			"WHERE SQL_TEXT LIKE 'SET GLOBAL %' ORDER BY TIMER_START")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var clearedAt, lastSemiSyncEnd uint64
	seen := map[string]bool{}
	var history []string
	for rows.Next() {
		var event, text string
		var start, end uint64
		if err := rows.Scan(&event, &start, &end, &text); err != nil {
			t.Fatal(err)
		}
		history = append(history, event+" "+text)
		switch {
		case strings.HasPrefix(text, "SET GLOBAL read_only = OFF"):
			// (SET GLOBAL super_read_only = OFF, while the plugins are installed, leaves read_only
			// on: no ordinary client can write.)
			if clearedAt == 0 {
				clearedAt = start
			}
		case strings.Contains(text, "rpl_semi_sync_source_"):
			for _, v := range []string{"enabled", "timeout", "wait_point", "wait_no_replica"} {
				if strings.Contains(text, "rpl_semi_sync_source_"+v+" ") {
					seen[v] = true
				}
			}
			if clearedAt != 0 {
				t.Errorf("%s: %q ran after read-only was cleared", what, text)
			}
			lastSemiSyncEnd = max(lastSemiSyncEnd, end)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: statement history:\n%s", what, strings.Join(history, "\n"))
	if clearedAt == 0 || len(seen) != 4 {
		t.Fatalf("%s: read-only cleared at %d, semi-sync source settings seen %v; want all four, then read-only cleared", what, clearedAt, seen)
	}
	if lastSemiSyncEnd >= clearedAt {
		t.Errorf("%s: the last semi-sync statement ended at %d, read-only was cleared at %d", what, lastSemiSyncEnd, clearedAt)
	}
}

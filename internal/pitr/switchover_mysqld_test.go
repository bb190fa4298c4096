package pitr_test

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/pitr"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/mysqldtest"
)

// TestReplayAcrossASwitchover archives a primary under writes, takes a base backup of it, switches
// over to its replica and archives the new primary under writes: the archive then holds segments
// of two servers, overlapping where the new primary's binlogs repeat what it replicated. A
// recovery from the old primary's backup to an instant after the switchover, and to the latest
// archived transaction, holds exactly the rows committed before the target.
func TestReplayAcrossASwitchover(t *testing.T) {
	servers := mysqldtest.Start(t, mysqldtest.Options{Count: 2})
	w := newWorldOf(t, servers[0])
	b := servers[1]
	// b only replicates: no transaction of its own before it is promoted.
	opB, err := mysql.NewFactory().New(b.MySQLConfig("root", "", ""))
	check.Must(t, err)
	defer opB.Close()
	check.Must(t, opB.ConfigureReplication(t.Context(), mysql.Source{Host: w.srv.Host, Port: w.srv.Port,
		User: "cnm_repl", Password: "repl-pw", CAFile: b.InChroot(b.TLS.CAFile),
		CertFile: b.InChroot(b.TLS.ClientCertFile), KeyFile: b.InChroot(b.TLS.ClientKeyFile), VerifyServerCert: true}))
	check.Must(t, opB.StartReplication(t.Context()))

	w.run(t, 1, 3*time.Second)
	before := len(w.ops)
	opA, err := mysql.NewFactory().New(w.srv.MySQLConfig("root", "", ""))
	check.Must(t, err)
	defer opA.Close()
	check.Must(t, opA.SetReadOnly(t.Context(), true))
	check.Must(t, opB.WaitForGTIDSet(t.Context(), w.executed(t), 30*time.Second))
	check.Must(t, opB.StopReplication(t.Context()))
	check.Must(t, opB.SetReadOnly(t.Context(), false))
	w.srv, w.db = b, b.RootDB(t)
	w.run(t, 0, 4*time.Second)

	index, _, err := w.store.ReadIndex(t.Context(), cluster)
	check.Must(t, err)
	servers2 := map[string]bool{}
	for _, s := range index.Segments {
		servers2[s.Name[:strings.Index(s.Name, "/")]] = true
	}
	if len(servers2) != 2 || len(w.ops) < before+100 {
		t.Fatalf("segments of %d servers, %d transactions after the switchover; want 2 and at least 100", len(servers2), len(w.ops)-before)
	}
	base := w.backups[0]
	t.Run("an instant after the switchover", func(t *testing.T) {
		i := before + (len(w.ops)-before)/2
		at := w.ops[i].done.Add(w.ops[i+1].sent.Sub(w.ops[i].done) / 2)
		rec, err := w.recover(t, base, pitr.Target{Kind: pitr.AtTime, Time: at})
		check.Must(t, err)
		rows, executed := w.rows(t, rec.dataDir)
		if want := w.rowsAfter(i + 1); !maps.Equal(rows, want) {
			t.Fatalf("recovered %d rows, %d were committed before %s", len(rows), len(want), at.Format(time.StampMicro))
		}
		if !executed.Equal(gtid.Union(gtid.MustParse(base.GTIDExecuted), rec.result.Applied)) {
			t.Fatalf("gtid_executed %s", executed)
		}
	})
	t.Run("the latest archived transaction", func(t *testing.T) {
		rec, err := w.recover(t, base, pitr.Target{Kind: pitr.Latest})
		check.Must(t, err)
		rows, executed := w.rows(t, rec.dataDir)
		if want := w.sourceRows(t); !maps.Equal(rows, want) || len(want) == 0 {
			t.Fatalf("recovered %d rows, the new primary holds %d", len(rows), len(want))
		}
		if !executed.Equal(w.executed(t)) {
			t.Fatalf("gtid_executed %s, the new primary's %s", executed, w.executed(t))
		}
	})
}

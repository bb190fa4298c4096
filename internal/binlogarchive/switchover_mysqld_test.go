package binlogarchive

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/check"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/mysqldtest"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3proxy"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/s3test"
)

// TestArchiveContinuesAcrossASwitchover archives a primary under load, switches over to its
// replica and archives the new primary under load: the archive holds every transaction of both,
// with no gap, and the old primary stands down.
func TestArchiveContinuesAcrossASwitchover(t *testing.T) {
	servers := mysqldtest.Start(t, mysqldtest.Options{Count: 2})
	users := mysql.Users{Replication: mysql.Account{Name: "cnm_repl", Password: "repl-pw"},
		Backup: mysql.Account{Name: "cnm_backup", Password: "backup-pw"}}
	ops := make([]mysql.Operator, 2)
	for i, s := range servers {
		op, err := mysql.NewFactory().New(s.MySQLConfig("root", "", ""))
		check.Must(t, err)
		t.Cleanup(func() { op.Close() })
		check.Must(t, op.CreateUsers(t.Context(), users))
		ops[i] = op
	}
	a, b := servers[0], servers[1]
	check.Must(t, ops[1].ConfigureReplication(t.Context(), mysql.Source{Host: a.Host, Port: a.Port,
		User: users.Replication.Name, Password: users.Replication.Password, CAFile: b.InChroot(b.TLS.CAFile),
		CertFile: b.InChroot(b.TLS.ClientCertFile), KeyFile: b.InChroot(b.TLS.ClientKeyFile), VerifyServerCert: true}))
	check.Must(t, ops[1].StartReplication(t.Context()))

	s3 := s3test.Start(t)
	w := &world{proxy: s3proxy.Start(t, s3.Endpoint)}
	w.store = s3test.StoreClient(t, s3.StoreConfig(t, w.proxy.URL, "archive"), false)
	dbA, dbB := a.RootDB(t), b.RootDB(t)
	roleA, roleB := &world{}, &world{}
	roleA.setRole(primary)
	roleB.setRole(Role{LeaseRequired: true, Writable: true})
	archA, archB := w.archiver(t, a, dbA), w.archiver(t, b, dbB)
	archA.Role = func(context.Context) (Role, error) { return *roleA.role.Load(), nil }
	archB.Role = func(context.Context) (Role, error) { return *roleB.role.Load(), nil }
	var reportsB []Health
	var mu sync.Mutex
	archB.Report = func(_ context.Context, h Health) { mu.Lock(); reportsB = append(reportsB, h); mu.Unlock() }
	for _, stmt := range []string{"CREATE DATABASE app", "CREATE TABLE app.t (id BIGINT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(64))"} {
		_, err := dbA.ExecContext(t.Context(), stmt)
		check.Must(t, err)
	}

	phase := func(loadDB *mysqldtest.Server, d time.Duration) {
		ctx, stop := context.WithCancel(t.Context())
		load(ctx, t, loadDB.RootDB(t))
		var wg sync.WaitGroup
		wg.Go(func() { archA.Run(ctx) })
		wg.Go(func() { archB.Run(ctx) })
		time.Sleep(d)
		stop()
		wg.Wait()
	}
	phase(a, 4*time.Second)
	if w.archivedSet(t).IsEmpty() {
		t.Fatal("nothing archived from the first primary")
	}

	// Switchover: the old primary turns read-only, the replica catches up and is promoted.
	check.Must(t, ops[0].SetReadOnly(t.Context(), true))
	check.Must(t, ops[1].WaitForGTIDSet(t.Context(), executed(t, dbA), 30*time.Second))
	check.Must(t, ops[1].StopReplication(t.Context()))
	check.Must(t, ops[1].SetReadOnly(t.Context(), false))
	roleA.setRole(Role{LeaseRequired: true, Writable: true, Demoted: true})
	roleB.setRole(primary)
	if d, err := archA.Pass(t.Context()); err != nil || d.StandDown != ReasonDemoted {
		t.Fatalf("the old primary's pass: %+v, %v; want it to stand down", d, err)
	}

	phase(b, 4*time.Second)
	w.drain(t, dbB, archB)
	index := w.verifySegments(t)
	if got, want := w.archivedSet(t), executed(t, dbB); !got.Equal(want) {
		t.Fatalf("archived %s, the new primary executed %s", got, want)
	}
	if !executed(t, dbB).Contains(executed(t, dbA)) {
		t.Fatal("the new primary lacks transactions of the old one")
	}
	uuids := map[string]int{}
	for _, s := range index.Segments {
		uuids[s.Name[:strings.Index(s.Name, "/")]]++
	}
	if len(uuids) != 2 {
		t.Fatalf("segments by server: %v, want segments of both servers", uuids)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, h := range reportsB {
		if h.Reason == HealthGap || h.Reason == HealthFork || h.Reason == HealthFailed {
			t.Fatalf("the new primary reported %+v", h)
		}
	}
}

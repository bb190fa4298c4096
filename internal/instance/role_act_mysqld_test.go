package instance

import (
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/testenv/mysqldtest"
)

var roleTestUsers = mysql.Users{
	Replication: mysql.Account{Name: "repl", Password: "repl-pw"},
	Backup:      mysql.Account{Name: "backup", Password: "backup-pw"},
}

// member is one instance of the role test: its server, Operator and actor.
type member struct {
	name  string
	srv   *mysqldtest.Server
	op    mysql.Operator
	db    *sql.DB
	actor *RoleActor
}

func startMembers(t *testing.T, names ...string) map[string]*member {
	t.Helper()
	servers := mysqldtest.Start(t, mysqldtest.Options{Count: len(names)})
	members := map[string]*member{}
	for i, name := range names {
		s := servers[i]
		op, err := mysql.NewFactory().New(s.MySQLConfig("root", "", ""))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { op.Close() })
		members[name] = &member{name: name, srv: s, op: op, db: s.RootDB(t)}
	}
	for _, m := range members {
		m.actor = &RoleActor{Op: m.op, DrainTimeout: 10 * time.Second, Log: testr.New(t).WithValues("instance", m.name),
			SourceFor: func(instance string) (mysql.Source, error) {
				src, ok := members[instance]
				if !ok {
					return mysql.Source{}, fmt.Errorf("no instance %s", instance)
				}
				return mysql.Source{Host: src.srv.Host, Port: src.srv.Port, User: roleTestUsers.Replication.Name,
					Password: roleTestUsers.Replication.Password, CAFile: m.srv.InChroot(m.srv.TLS.CAFile),
					CertFile: m.srv.InChroot(m.srv.TLS.ClientCertFile), KeyFile: m.srv.InChroot(m.srv.TLS.ClientKeyFile),
					VerifyServerCert: true}, nil
			}}
	}
	return members
}

// reconcile runs gather → decide → act once for m, reading the primary's GTID set after m's own.
func (m *member) reconcile(t *testing.T, status *v1alpha1.ClusterStatus, members map[string]*member) (RoleDecision, RoleOutcome) {
	t.Helper()
	st, err := m.op.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	in := RoleInput{Instance: m.name, Status: status, Executed: st.GTIDExecuted}
	if st.Replication != nil {
		for name, other := range members {
			if other.srv.Host == st.Replication.SourceHost && other.srv.Port == st.Replication.SourcePort {
				in.ReplicatingFrom = name
			}
		}
	}
	if p, ok := members[status.CurrentPrimary]; ok && p != m {
		pst, err := p.op.Status(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		in.PrimaryExecuted, in.PrimaryWritable = &pst.GTIDExecuted, pst.Writable()
	}
	d := DecideRole(in)
	out, err := m.actor.Apply(t.Context(), d, st)
	if err != nil {
		t.Fatalf("%s: applying %s (%s): %v", m.name, d.Action, d.Reason, err)
	}
	return d, out
}

func (m *member) exec(t *testing.T, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := m.db.ExecContext(t.Context(), s); err != nil {
			t.Fatalf("%s: %s: %v", m.name, s, err)
		}
	}
}

func (m *member) gtidSet(t *testing.T) gtid.Set {
	t.Helper()
	st, err := m.op.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return st.GTIDExecuted
}

func (m *member) writable(t *testing.T) bool {
	t.Helper()
	st, err := m.op.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return st.Writable()
}

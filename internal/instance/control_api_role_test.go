package instance

import (
	"context"
	"testing"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/certs"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/semisync"
)

// testControlAPIRoleChanges: on the real primary and a real replica, POST /replication/stop-io
// stops the replica's receiver and leaves its applier running; POST /demote turns the primary
// super_read_only, ends the client sessions already open and releases the Lease. Both are
// idempotent. The servers are put back as they were for the steps that follow.
func testControlAPIRoleChanges(t *testing.T, m map[string]*member, primary, replica string) {
	allowed := []string{certs.OperatorCommonName}
	r := serveControlAPI(t, &ControlAPI{Instance: replica, Op: m[replica].op, AllowedClients: allowed})
	for range 2 {
		if err := r.operator.StopReplicaIO(t.Context(), r.target); err != nil {
			t.Fatalf("POST /replication/stop-io on %s: %v", replica, err)
		}
	}
	st, err := m[replica].op.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if st.Replication == nil || st.Replication.IORunning != "No" || st.Replication.SQLRunning != "Yes" {
		t.Fatalf("after stop-io, %s replication %+v: want the receiver stopped, the applier running", replica, st.Replication)
	}
	if err := m[replica].op.StartReplication(t.Context()); err != nil {
		t.Fatal(err)
	}

	// A participation change restarts a running receiver to apply itself. One that has read the
	// receiver running when stop-io comes must not start it again after the stop: stop-io waits
	// for it (the participation lock), then stops.
	part := &SemiSyncParticipation{}
	rp := serveControlAPI(t, &ControlAPI{Instance: replica, Op: m[replica].op, AllowedClients: allowed, Participation: part})
	stopped := make(chan error, 1)
	if err := part.Converge(func(semisync.Participation) error {
		go func() { stopped <- rp.operator.StopReplicaIO(t.Context(), rp.target) }()
		select {
		case err := <-stopped:
			t.Errorf("stop-io returned (%v) while a participation change held the receiver", err)
		case <-time.After(500 * time.Millisecond):
		}
		// What the participation change does with the receiver it read running.
		if err := m[replica].op.StopReceiver(t.Context()); err != nil {
			return err
		}
		return m[replica].op.StartReplication(t.Context())
	}); err != nil {
		t.Fatal(err)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("POST /replication/stop-io during a participation change: %v", err)
	}
	st, err = m[replica].op.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if st.Replication == nil || st.Replication.IORunning != "No" {
		t.Fatalf("after stop-io raced with a participation change, %s replication %+v: want the receiver stopped", replica, st.Replication)
	}
	if err := m[replica].op.StartReplication(t.Context()); err != nil {
		t.Fatal(err)
	}

	released := 0
	p := serveControlAPI(t, &ControlAPI{Instance: primary, Op: m[primary].op, AllowedClients: allowed, Log: m[primary].actor.Log,
		ReleaseLease: func(context.Context) error { released++; return nil }})
	if err := p.operator.StopReplicaIO(t.Context(), p.target); err != nil {
		t.Errorf("POST /replication/stop-io on a server without a channel: %v, want success", err)
	}
	m[primary].exec(t, "CREATE USER IF NOT EXISTS 'app'@'%' IDENTIFIED BY 'app-pw'", "GRANT SELECT ON *.* TO 'app'@'%'")
	app, err := m[primary].srv.OpenDB(t.Context(), "app", "app-pw", "")
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	session, err := app.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	if _, err := session.ExecContext(t.Context(), "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := p.operator.Demote(t.Context(), p.target); err != nil {
			t.Fatalf("POST /demote on %s: %v", primary, err)
		}
	}
	pst, err := m[primary].op.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !pst.SuperReadOnly || pst.Writable() || released != 2 {
		t.Errorf("after demote: super_read_only %t, writable %t, Lease released %d times; want read-only, released each time",
			pst.SuperReadOnly, pst.Writable(), released)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if _, err := session.ExecContext(ctx, "SELECT 1"); err == nil {
		t.Error("a client session opened before the demotion still runs statements; want it ended")
	}
	if err := m[primary].op.SetReadOnly(t.Context(), false); err != nil {
		t.Fatal(err)
	}
}

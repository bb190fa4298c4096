package instance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
)

// repairOp fails START REPLICA with startErrs in turn, and records the repairs.
type repairOp struct {
	mysql.Operator
	status    *mysql.Status // what Status answers once START REPLICA failed
	startErrs []error
	starts    int
	repairs   int
	repairErr error
}

func (f *repairOp) StartReplication(context.Context) error {
	f.starts++
	if len(f.startErrs) == 0 {
		return nil
	}
	err := f.startErrs[0]
	f.startErrs = f.startErrs[1:]
	return err
}

func (f *repairOp) Status(context.Context) (*mysql.Status, error) {
	st := *f.status
	return &st, nil
}

func (f *repairOp) RepairReplicaMetadata(context.Context) error {
	f.repairs++
	return f.repairErr
}

// TestRepairingBrokenReplicaMetadata: RoleActor.repairing, one row per rule.
func TestRepairingBrokenReplicaMetadata(t *testing.T) {
	broken := fmt.Errorf("%w: Error 1872", mysql.ErrReplicaMetadata)
	const uuid = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
	status := func(retrieved, executed string) *mysql.Status {
		return &mysql.Status{GTIDExecuted: gtid.MustParse(executed),
			Replication: &mysql.ReplicationStatus{RetrievedGTIDSet: gtid.MustParse(retrieved)}}
	}
	for _, tc := range []struct {
		rule                string
		op                  *repairOp
		st                  *mysql.Status
		wantStarts, repairs int
		wantErr             string
	}{
		{"a start that succeeds needs no repair", &repairOp{}, status("", uuid+":1-5"), 1, 0, ""},
		{"another error is returned as it is, nothing repaired", &repairOp{startErrs: []error{errors.New("Error 1045")}},
			status("", uuid+":1-5"), 1, 0, "Error 1045"},
		{"broken metadata with everything received applied: the relay logs are discarded and the start tried again",
			&repairOp{startErrs: []error{broken}}, status(uuid+":1-5", uuid+":1-5"), 2, 1, ""},
		{"broken metadata on a server reporting no channel: kept, what its relay logs hold is unknown",
			&repairOp{startErrs: []error{broken}}, &mysql.Status{GTIDExecuted: gtid.MustParse(uuid + ":1-5")}, 1, 0, "reports no channel"},
		{"broken metadata with received transactions not applied: kept, never discarded",
			&repairOp{startErrs: []error{broken}}, status(uuid+":1-7", uuid+":1-5"), 1, 0, "2 received transactions are not applied"},
		{"a repair that fails returns both errors, and the start is not tried again",
			&repairOp{startErrs: []error{broken}, repairErr: errors.New("RESET REPLICA refused")}, status("", uuid+":1-5"), 1, 1, "RESET REPLICA refused"},
		{"still broken after the repair: the error stays", &repairOp{startErrs: []error{broken, broken}},
			status("", uuid+":1-5"), 2, 1, "cannot be initialized"},
	} {
		tc.op.status = tc.st // read once the start failed
		a := &RoleActor{Op: tc.op, Log: logr.Discard()}
		err := a.repairing(context.Background(), func() error { return tc.op.StartReplication(context.Background()) })
		if tc.op.starts != tc.wantStarts || tc.op.repairs != tc.repairs {
			t.Errorf("%s: %d starts and %d repairs, want %d and %d", tc.rule, tc.op.starts, tc.op.repairs, tc.wantStarts, tc.repairs)
		}
		if (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%s: error %v, want one containing %q", tc.rule, err, tc.wantErr)
		}
	}
}

// testReplicaFollowsAfterRepair: RepairReplicaMetadata (RESET REPLICA) on a real replica keeps its
// source, so the next role pass starts the channel and the replica applies what the primary
// writes after. (The broken state itself, an applier position naming no relay log, was met on
// the local node, 1 switchover in 10, and a RESET REPLICA by hand brought that replica back; it
// is not reproducible on demand here.)
func testReplicaFollowsAfterRepair(t *testing.T, m map[string]*member, status *v1alpha1.ClusterStatus) {
	primary := m[status.CurrentPrimary]
	var replica *member
	for _, name := range []string{"c-1", "c-2", "c-3"} {
		if name == status.CurrentPrimary || slices.Contains(status.DivergedInstances, name) {
			continue
		}
		m[name].reconcile(t, status, m) // follows the primary if it does not yet
		if st, err := m[name].op.Status(t.Context()); err == nil && st.Replication != nil &&
			st.Replication.SourceHost == primary.srv.Host && st.Replication.SourcePort == primary.srv.Port {
			replica = m[name]
			break
		}
	}
	if replica == nil {
		t.Fatalf("no replica of %s", status.CurrentPrimary)
	}
	replica.exec(t, "STOP REPLICA")
	if err := replica.op.RepairReplicaMetadata(t.Context()); err != nil {
		t.Fatal(err)
	}
	if d, _ := replica.reconcile(t, status, m); d.Action != ActFollow || d.Source != status.CurrentPrimary {
		t.Fatalf("%s: %s from %q (%s), want follow from %s", replica.name, d.Action, d.Source, d.Reason, status.CurrentPrimary)
	}
	primary.exec(t, "CREATE DATABASE IF NOT EXISTS repaired", "CREATE TABLE IF NOT EXISTS repaired.t (id INT PRIMARY KEY)",
		"INSERT INTO repaired.t VALUES (1)")
	if err := replica.op.WaitForGTIDSet(t.Context(), primary.gtidSet(t), 20*time.Second); err != nil {
		t.Fatalf("%s did not apply the primary's writes after the repair: %v", replica.name, err)
	}
}

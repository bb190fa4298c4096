package instance

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/go-logr/logr"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
)

// fenceOp records the calls StopWrites makes; SetReadOnly fails its first failures calls, and
// ackWaiters commits wait for a semi-sync acknowledgement until the source is switched off.
type fenceOp struct {
	mysql.Operator
	failures   int
	ackWaiters int
	sourceOff  bool
	calls      []string
}

func (o *fenceOp) SetOfflineMode(_ context.Context, on bool) error {
	o.calls = append(o.calls, map[bool]string{true: "offline", false: "online"}[on])
	return nil
}

func (o *fenceOp) SetSemiSyncSourceEnabled(_ context.Context, on bool) error {
	o.calls = append(o.calls, map[bool]string{true: "semi-sync on", false: "semi-sync off"}[on])
	o.sourceOff = !on
	return nil
}

func (o *fenceOp) Status(context.Context) (*mysql.Status, error) {
	st := &mysql.Status{SemiSync: mysql.SemiSyncStatus{SourceEnabled: !o.sourceOff}}
	if !o.sourceOff {
		st.SemiSync.AckWaiters = o.ackWaiters
	}
	return st, nil
}

func (o *fenceOp) SetReadOnly(_ context.Context, on bool) error {
	o.calls = append(o.calls, "read-only")
	if o.failures > 0 {
		o.failures--
		return context.DeadlineExceeded
	}
	return nil
}

func (o *fenceOp) KillClientSessions(context.Context) (int, error) {
	o.calls = append(o.calls, "kill")
	return 1, nil
}

func TestStopWrites(t *testing.T) {
	for _, tc := range []struct {
		name       string
		failures   int
		ackWaiters int
		want       []string
		wantErr    bool
	}{
		{"read-only first, then the sessions are ended", 0, 0, []string{"read-only", "kill"}, false},
		{"turning read-only waits: offline, the sessions are ended, then read-only, the sessions again, online", 1, 0,
			[]string{"read-only", "offline", "kill", "read-only", "kill", "online"}, false},
		{"commits waiting for semi-sync acknowledgements hold read-only back: their sessions ended, the source switched off to release them, then read-only, the source back on, online",
			1, 2, []string{"read-only", "offline", "kill", "semi-sync off", "read-only", "kill", "semi-sync on", "online"}, false},
		{"read-only never succeeds: an error, so the Lease is not given up; the server is online again", 3, 0,
			[]string{"read-only", "offline", "kill", "read-only", "kill", "read-only", "kill", "online"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			op := &fenceOp{failures: tc.failures, ackWaiters: tc.ackWaiters}
			err := StopWrites(t.Context(), op, logr.Discard())
			if (err != nil) != tc.wantErr || !slices.Equal(op.calls, tc.want) {
				t.Errorf("StopWrites = %v, calls %v; want error %v, calls %v", err, op.calls, tc.wantErr, tc.want)
			}
			if tc.wantErr && !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("the error %v does not carry the cause", err)
			}
		})
	}
}

package instance

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/go-logr/logr"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
)

// fenceOp records the calls StopWrites makes; SetReadOnly fails its first failures calls.
type fenceOp struct {
	mysql.Operator
	failures int
	calls    []string
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
		name     string
		failures int
		want     []string
		wantErr  bool
	}{
		{"read-only first, then the sessions are ended", 0, []string{"read-only", "kill"}, false},
		{"turning read-only waits: the sessions are ended first, then read-only, then the sessions again", 1,
			[]string{"read-only", "kill", "read-only", "kill"}, false},
		{"read-only never succeeds: an error, so the Lease is not given up", 3,
			[]string{"read-only", "kill", "read-only", "kill", "read-only", "kill"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			op := &fenceOp{failures: tc.failures}
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

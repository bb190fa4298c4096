package instance

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestIsolationDetector(t *testing.T) {
	c := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	d := NewIsolationDetector(c, 30*time.Second)
	for _, step := range []struct {
		name      string
		advance   time.Duration
		arm       bool
		api, peer bool
		want      bool
	}{
		{"during bootstrap (a long clone) nothing counts", time.Hour, false, false, false, false},
		{"the count starts at the end of bootstrap", 0, true, false, false, false},
		{"30 s without contact is still fine", 30 * time.Second, false, false, false, false},
		{"past 30 s without the API server or a peer, the instance is isolated", time.Second, false, false, false, true},
		{"an API server contact ends the isolation", 0, false, true, false, false},
		{"the API server alone unreachable past the limit is not isolation while a peer answers", 20 * time.Second, false, false, true, false},
		{"still a peer but no API server", 20 * time.Second, false, false, true, false},
		{"neither for past the limit again: isolated", 31 * time.Second, false, false, false, true},
		{"a peer contact alone ends the isolation", 0, false, false, true, false},
		{"arming again does not restart the count", 31 * time.Second, true, false, false, true},
	} {
		c.SetTime(c.Now().Add(step.advance))
		if step.arm {
			d.Arm()
		}
		if step.api {
			d.ContactAPIServer()
		}
		if step.peer {
			d.ContactPeer()
		}
		if got := d.Isolated(); got != step.want {
			t.Errorf("%s: Isolated = %v, want %v", step.name, got, step.want)
		}
	}
}

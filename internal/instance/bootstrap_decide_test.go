package instance

import (
	"testing"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

func TestDecideBootstrap(t *testing.T) {
	for _, tc := range []struct {
		name            string
		instance        string
		hasData         bool
		recovery        bool
		target, current string
		want            BootstrapAction
		donor           string
	}{
		{"existing data is kept", "c-2", true, false, "c-1", "c-1", BootstrapNone, ""},
		{"existing data is kept even without a primary", "c-2", true, false, "", "", BootstrapNone, ""},
		{"the first target primary initializes", "c-1", false, false, "c-1", "", BootstrapInitialize, ""},
		{"others wait for the first primary", "c-2", false, false, "c-1", "", BootstrapWait, ""},
		{"nothing happens before a target exists", "c-1", false, false, "", "", BootstrapWait, ""},
		{"a new replica clones the current primary", "c-3", false, false, "c-1", "c-1", BootstrapClone, "c-1"},
		{"a replica rebuilt during a switchover clones the current primary", "c-3", false, false, "c-2", "c-1", BootstrapClone, "c-1"},
		{"an empty primary never initializes over the cluster", "c-1", false, false, "c-1", "c-1", BootstrapWait, ""},
		{"an empty switchover target clones the current primary", "c-2", false, false, "c-2", "c-1", BootstrapClone, "c-1"},
		{"the first target primary of a recovery restores, never initializes", "c-1", false, true, "c-1", "", BootstrapRecover, ""},
		{"a recovery's other instances wait for the restored primary", "c-2", false, true, "c-1", "", BootstrapWait, ""},
		{"a recovery's replica clones the restored primary", "c-2", false, true, "c-1", "c-1", BootstrapClone, "c-1"},
		{"a recovered instance's data is kept", "c-1", true, true, "c-1", "", BootstrapNone, ""},
		{"an empty primary of a recovered cluster waits for a failover", "c-1", false, true, "c-1", "c-1", BootstrapWait, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &v1alpha1.ClusterStatus{TargetPrimary: tc.target, CurrentPrimary: tc.current}
			got := DecideBootstrap(tc.instance, tc.hasData, tc.recovery, st)
			if got.Action != tc.want || got.Donor != tc.donor || got.Reason == "" {
				t.Errorf("DecideBootstrap = %s from %q (%s), want %s from %q", got.Action, got.Donor, got.Reason, tc.want, tc.donor)
			}
		})
	}
}

package backup

import (
	"testing"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
)

func replica(name string, lag int64, ok bool) Candidate {
	return Candidate{Name: name, Ready: true, Report: &instanceclient.Status{Instance: name, Role: v1.RoleReplica,
		Replication: &instanceclient.ReplicationStatus{IORunning: ok, SQLRunning: true, LagSeconds: lag}}}
}

func primaryCand(name string, ready bool) Candidate {
	return Candidate{Name: name, Ready: ready, Report: &instanceclient.Status{Instance: name, Role: v1.RolePrimary}}
}

func TestChooseBackupTarget(t *testing.T) {
	notReady := replica("db-3", 0, true)
	notReady.Ready = false
	silent := Candidate{Name: "db-3", Ready: true}
	for _, tc := range []struct {
		rule     string
		target   v1.BackupTarget
		primary  string
		excluded map[string]bool
		cands    []Candidate
		want     string
	}{
		{"prefer-standby takes the replica with the least lag, not the first by name", v1.BackupTargetPreferStandby, "db-1", nil,
			[]Candidate{primaryCand("db-1", true), replica("db-2", 30, true), replica("db-3", 2, true)}, "db-3"},
		{"equal lag: the first by name", v1.BackupTargetPreferStandby, "db-1", nil,
			[]Candidate{primaryCand("db-1", true), replica("db-3", 1, true), replica("db-2", 1, true)}, "db-2"},
		{"a replica with a stopped thread is not healthy", v1.BackupTargetPreferStandby, "db-1", nil,
			[]Candidate{primaryCand("db-1", true), replica("db-2", 0, false), replica("db-3", 9, true)}, "db-3"},
		{"unknown lag is not healthy", v1.BackupTargetPreferStandby, "db-1", nil,
			[]Candidate{primaryCand("db-1", true), replica("db-2", -1, true)}, "db-1"},
		{"a replica that is not ready or did not answer is skipped", v1.BackupTargetPreferStandby, "db-1", nil,
			[]Candidate{primaryCand("db-1", true), notReady, silent}, "db-1"},
		{"fenced and diverged replicas are never taken", v1.BackupTargetPreferStandby, "db-1", map[string]bool{"db-2": true},
			[]Candidate{primaryCand("db-1", true), replica("db-2", 0, true)}, "db-1"},
		{"no healthy replica: the primary", v1.BackupTargetPreferStandby, "db-1", nil,
			[]Candidate{primaryCand("db-1", true)}, "db-1"},
		{"primary takes the primary even with healthy replicas", v1.BackupTargetPrimary, "db-1", nil,
			[]Candidate{primaryCand("db-1", true), replica("db-2", 0, true)}, "db-1"},
		{"a primary that is not ready: none", v1.BackupTargetPrimary, "db-1", nil,
			[]Candidate{primaryCand("db-1", false), replica("db-2", 0, true)}, ""},
		{"no primary known: none", v1.BackupTargetPrimary, "", nil, []Candidate{replica("db-2", 0, true)}, ""},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			got, why := chooseTarget(tc.target, tc.primary, tc.excluded, tc.cands)
			if got != tc.want || (got == "") != (why != "") {
				t.Errorf("got %q (%s), want %q", got, why, tc.want)
			}
		})
	}
}

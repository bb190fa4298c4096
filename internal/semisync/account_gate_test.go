package semisync

import (
	"testing"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"
)

func TestAccountStatementsWait(t *testing.T) {
	on := mysql.SemiSyncStatus{SourceEnabled: true, SourceActive: true, WaitForReplicaCount: 2}
	with := func(f func(*mysql.SemiSyncStatus)) mysql.SemiSyncStatus { s := on; f(&s); return s }
	for _, tc := range []struct {
		rule string
		in   mysql.SemiSyncStatus
		want bool
	}{
		{"source side off: commits do not wait", with(func(s *mysql.SemiSyncStatus) { s.SourceEnabled = false }), false},
		{"fallen back (status off): commits do not wait", with(func(s *mysql.SemiSyncStatus) { s.SourceActive = false }), false},
		{"no replica connected: the statement would wait for logins it blocks", on, true},
		{"fewer replicas connected than the count: it would wait", with(func(s *mysql.SemiSyncStatus) { s.Clients = 1 }), true},
		{"as many replicas connected as the count: they acknowledge", with(func(s *mysql.SemiSyncStatus) { s.Clients = 2 }), false},
		{"a count left unread (0) counts as 1", with(func(s *mysql.SemiSyncStatus) { s.WaitForReplicaCount, s.Clients = 0, 0 }), true},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			if got := AccountStatementsWait(tc.in); got != tc.want {
				t.Errorf("AccountStatementsWait(%+v) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

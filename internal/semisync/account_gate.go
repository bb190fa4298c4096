package semisync

import "github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"

// AccountStatementsWait reports whether an account statement (CREATE USER, ALTER USER, GRANT)
// run now would deadlock until the fallback releases it: its commit would wait for more
// semi-sync acknowledgements than the replicas connected can send, and while it waits it holds
// the server's account lock, so the replicas that would acknowledge it cannot log in. That is
// the case while the source side is on and active (not fallen back) and fewer semi-sync
// replicas are connected than the count. A primary runs its account statements once it is not:
// a promoted replica first lets the replicas that follow it connect.
func AccountStatementsWait(s mysql.SemiSyncStatus) bool {
	return s.SourceEnabled && s.SourceActive && s.Clients < int64(max(s.WaitForReplicaCount, 1))
}

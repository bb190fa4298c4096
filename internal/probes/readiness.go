package probes

import "github.com/cloudnative-mysql/cloudnative-mysql/internal/mysql"

// Readiness is the readiness probe's answer and why. Reason is a fixed phrase, never the text of
// an SQL error.
type Readiness struct {
	Ready  bool
	Reason string
}

// DecideReadiness decides whether the instance may serve its clients from st, the status mysqld
// gave in its newest fresh answer (nil when it gave none). A replica's readiness does not depend
// on its primary: a replica whose primary is gone (receiver thread connecting or in error) keeps
// serving reads, stale, with its lag in its status. Only a broken replica (an applier error) or a
// diverged one stops serving.
func DecideReadiness(st *mysql.Status, diverged bool) Readiness {
	switch {
	case st == nil:
		return Readiness{false, "mysqld not answering"}
	case diverged:
		return Readiness{false, "diverged: holds transactions its primary never had"}
	case st.Writable():
		return Readiness{true, "primary"}
	case st.Replication == nil:
		return Readiness{false, "read-only and not replicating"}
	case st.Replication.LastSQLErrno != 0:
		return Readiness{false, "replica broken: the applier stopped on an error (see the instance status)"}
	case st.Replication.IORunning != "Yes" || st.Replication.LastIOErrno != 0:
		return Readiness{true, "replica, receiver not running (source gone?): serving stale reads"}
	}
	return Readiness{true, "replica"}
}

package plugin

import (
	"fmt"
	"io"
	"strings"
	"time"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
)

// maxErrorCell is how much of a replication thread's error the table shows (--verbose: all the
// status holds).
const maxErrorCell = 80

// semiSyncText is the Semi-sync line: on, fallen back or off, with the acknowledgements waited
// for, the replicas acknowledging and the commits waiting.
func semiSyncText(s *v1.SemiSyncStatus, paint func(color, text string) string) string {
	state := paint("green", "on")
	switch {
	case !s.Active && s.FallenBack:
		state = paint("red", "fallen back to asynchronous replication")
	case !s.Active:
		state = paint("red", "off (fallen back to asynchronous replication)")
	}
	waiting := fmt.Sprintf("%d commit(s) waiting", s.WaitingCommits)
	if s.WaitingCommits > 0 {
		waiting = paint("yellow", waiting)
	}
	return fmt.Sprintf("%s%s; waits for %d acknowledgement(s), %d replica(s) acknowledging, %s", state,
		since(s.LastTransitionTime), s.WaitForReplicaCount, s.Clients, waiting)
}

// readinessText is the "Failover safe now" line: the operator's verdict with its reason.
func readinessText(r *v1.FailoverReadiness, paint func(color, text string) string) string {
	if r == nil {
		return paint("yellow", "unknown") + ": the operator has not assessed it"
	}
	verdict := paint("green", "yes")
	if !r.Safe {
		verdict = paint("red", "no") + " (" + r.Reason + ")"
	}
	return verdict + since(r.LastTransitionTime) + ": " + oneLine(r.Message)
}

// pendingText describes one pending update.
func pendingText(p v1.PendingUpdate) string {
	what := map[v1.PendingUpdateKind]string{v1.PendingPodSpec: "new Pod spec", v1.PendingParameterRestart: "restart for parameters",
		v1.PendingInstanceManager: "instance manager update"}[p.Kind]
	if what == "" {
		what = string(p.Kind)
	}
	if p.Detail != "" {
		what += " (" + p.Detail + ")"
	}
	return what + ": " + strings.Join(p.Instances, ", ")
}

// lagCell is a replica's lag in seconds; "-" without a channel, "?" when unknown, yellow past
// 10 s.
func lagCell(r *v1.InstanceReplicationStatus) cell {
	switch {
	case r == nil:
		return plain("-")
	case r.LagSeconds == nil:
		return cell{"?", "yellow"}
	case *r.LagSeconds > 10:
		return cell{(time.Duration(*r.LagSeconds) * time.Second).String(), "yellow"}
	}
	return plain((time.Duration(*r.LagSeconds) * time.Second).String())
}

// lagTrxCell is the transactions a replica received and has not applied.
func lagTrxCell(r *v1.InstanceReplicationStatus) cell {
	switch {
	case r == nil:
		return plain("-")
	case r.LagTransactions == nil:
		return plain("?")
	case *r.LagTransactions > 0:
		return cell{fmt.Sprint(*r.LagTransactions), "yellow"}
	}
	return plain("0")
}

// threadsCell is the IO and SQL threads' states, IO/SQL, red when one is not running.
func threadsCell(r *v1.InstanceReplicationStatus) cell {
	if r == nil {
		return plain("-")
	}
	io := r.IOState
	if io == "" {
		io = "No"
		if r.IORunning {
			io = "Yes"
		}
	}
	sql := "No"
	if r.SQLRunning {
		sql = "Yes"
	}
	text := io + "/" + sql
	switch {
	case !r.SQLRunning || io == "No":
		return cell{text, "red"}
	case io == "Connecting":
		return cell{text, "yellow"}
	}
	return cell{text, "green"}
}

// writeThreadErrors lists the replicas' last IO and SQL errors under the instance table.
func writeThreadErrors(w io.Writer, r StatusReport, verbose bool, paint func(color, text string) string) error {
	var errs table
	for _, i := range r.Instances {
		rep := i.Replication
		if rep == nil {
			continue
		}
		for _, e := range []struct{ thread, msg string }{{"IO", rep.LastIOError}, {"SQL", rep.LastSQLError}} {
			if e.msg == "" {
				continue
			}
			msg := oneLine(e.msg)
			if !verbose && len(msg) > maxErrorCell {
				msg = strings.ToValidUTF8(msg[:maxErrorCell-3], "") + "..."
			}
			errs.row(plain(i.Name), cell{e.thread + " error:", "red"}, plain(msg))
		}
	}
	if len(errs.rows) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	return errs.write(w, paint)
}

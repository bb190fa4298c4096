package cluster

import (
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/backupjob"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/failover"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
)

// maxThreadError is how much of a replication thread's last error the status keeps.
const maxThreadError = 256

// readinessNoReports is the failover readiness of a Cluster whose instances were not asked.
const readinessNoReports = "NoReports"

// aggregateReplication is status.instanceReplication: the channel of each active instance that
// answered this reconcile with one. An instance that did not answer is left out rather than shown
// with facts that may be stale.
func aggregateReplication(active []string, reports map[string]*instanceclient.Status) map[string]v1.InstanceReplicationStatus {
	out := map[string]v1.InstanceReplicationStatus{}
	for _, name := range active {
		r := reports[name]
		if r == nil || r.Replication == nil {
			continue
		}
		out[name] = replicationOf(r)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// replicationOf is what the status keeps of r's channel: the lag in seconds when known, the
// transactions received and not applied when both GTID sets parse, the threads' states and their
// last errors, shortened.
func replicationOf(r *instanceclient.Status) v1.InstanceReplicationStatus {
	rep := r.Replication
	out := v1.InstanceReplicationStatus{Source: rep.SourceInstance, IOState: rep.IOState, IORunning: rep.IORunning,
		SQLRunning: rep.SQLRunning, LastIOError: backupjob.Shorten(rep.LastIOError, maxThreadError),
		LastSQLError: backupjob.Shorten(rep.LastSQLError, maxThreadError)}
	if rep.LagSeconds >= 0 {
		lag := rep.LagSeconds
		out.LagSeconds = &lag
	}
	retrieved, rerr := gtid.Parse(rep.GTIDRetrieved)
	executed, eerr := gtid.Parse(r.GTIDExecuted)
	if rerr == nil && eerr == nil {
		n := int64(min(retrieved.Subtract(executed).Count(), 1<<53-1))
		out.LagTransactions = &n
	}
	return out
}

// failoverReadiness is status.failoverReadiness: the failover rules applied to this reconcile's
// observation of the instances (failover.AssessReadiness), or NoReports when none was asked.
// LastTransitionTime moves only when Safe or Reason changes.
func failoverReadiness(prev *v1.FailoverReadiness, fo failover.Observation, asked bool) *v1.FailoverReadiness {
	r := failover.Readiness{Reason: readinessNoReports, Message: "the operator has no report from the instances"}
	if asked {
		r = failover.AssessReadiness(fo)
	}
	next := &v1.FailoverReadiness{Safe: r.Safe, Reason: r.Reason, Message: backupjob.Shorten(r.Message, 2048), Candidate: r.Candidate}
	if prev != nil && prev.Safe == next.Safe && prev.Reason == next.Reason {
		next.LastTransitionTime = prev.LastTransitionTime
	} else {
		t := metav1.NewTime(fo.Now)
		next.LastTransitionTime = &t
	}
	return next
}

// pendingUpdates is status.pendingUpdates: the instances whose Pod runs an older spec, those
// whose mysqld waits for a restart to take a parameter, and those whose instance manager runs
// another binary than the operator's, each list in the rolling update's order (the primary last).
func pendingUpdates(c *v1.Cluster, o Observation, active []observedInstance) []v1.PendingUpdate {
	var spec, restart, manager []string
	var params []string
	for _, in := range updateOrder(active, c.Status.CurrentPrimary) {
		if in.Pod == nil || in.Pod.DeletionTimestamp != nil {
			continue
		}
		if specOutdated(c, o, in) {
			spec = append(spec, in.Name)
		}
		if p := pendingRestart(c, o, in.Name); len(p) > 0 {
			restart = append(restart, in.Name)
			for _, k := range p {
				if !slices.Contains(params, k) {
					params = append(params, k)
				}
			}
		}
		if bin := o.ManagerBinary; bin != nil {
			if r := o.Reports[in.Name]; r != nil && r.Manager != nil && r.Manager.SHA256 != "" && r.Manager.SHA256 != bin.SHA256 {
				manager = append(manager, in.Name)
			}
		}
	}
	var out []v1.PendingUpdate
	if len(spec) > 0 {
		out = append(out, v1.PendingUpdate{Kind: v1.PendingPodSpec, Instances: spec})
	}
	if len(restart) > 0 {
		slices.Sort(params)
		out = append(out, v1.PendingUpdate{Kind: v1.PendingParameterRestart, Instances: restart,
			Detail: backupjob.Shorten(strings.Join(params, ", "), 1024)})
	}
	if len(manager) > 0 {
		out = append(out, v1.PendingUpdate{Kind: v1.PendingInstanceManager, Instances: manager, Detail: "to " + o.ManagerBinary.Version})
	}
	return out
}

package backup

import (
	"fmt"
	"sort"

	v1 "github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/instanceclient"
)

// Candidate is what the target choice knows of one instance.
type Candidate struct {
	Name string
	// Ready: the Pod runs, is ready and is not being deleted.
	Ready bool
	// Report is the instance manager's answer; nil when it did not answer.
	Report *instanceclient.Status
}

// healthyReplica reports whether c replicates without error with a known lag.
func (c Candidate) healthyReplica() bool {
	r := c.Report
	return c.Ready && r != nil && r.Role == v1.RoleReplica && r.Replication != nil && r.Replication.IORunning &&
		r.Replication.SQLRunning && r.Replication.LastError == "" && r.Replication.LagSeconds >= 0
}

// targetIn picks the instance of c to back up among cands, never a fenced or diverged one (see
// chooseTarget).
func targetIn(c *v1.Cluster, target v1.BackupTarget, cands []Candidate) (string, string) {
	excluded := map[string]bool{}
	for _, n := range append(append([]string{}, c.Status.FencedInstances...), c.Status.DivergedInstances...) {
		excluded[n] = true
	}
	return chooseTarget(target, c.Status.CurrentPrimary, excluded, cands)
}

// chooseTarget picks the instance to back up. prefer-standby takes the healthy replica with the
// least lag (ties by name), never an excluded (fenced or diverged) one, and falls back to the
// primary; primary takes the current primary. It returns "" and why when there is none.
func chooseTarget(target v1.BackupTarget, primary string, excluded map[string]bool, cands []Candidate) (string, string) {
	if target != v1.BackupTargetPrimary {
		var healthy []Candidate
		for _, c := range cands {
			if c.Name != primary && !excluded[c.Name] && c.healthyReplica() {
				healthy = append(healthy, c)
			}
		}
		sort.Slice(healthy, func(i, j int) bool {
			li, lj := healthy[i].Report.Replication.LagSeconds, healthy[j].Report.Replication.LagSeconds
			return li < lj || li == lj && healthy[i].Name < healthy[j].Name
		})
		if len(healthy) > 0 {
			return healthy[0].Name, ""
		}
	}
	if primary == "" {
		return "", "the Cluster has no current primary"
	}
	for _, c := range cands {
		if c.Name == primary && c.Ready && !excluded[c.Name] {
			return primary, ""
		}
	}
	return "", fmt.Sprintf("the primary %s is not ready", primary)
}

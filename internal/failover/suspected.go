package failover

// PrimarySuspected reports whether the current primary may have stopped being able to act for
// itself while its mysqld may still run: its Pod is being deleted, or its Lease renewal is overdue
// (LeaseRenewalOverdue) and its control API did not answer. A suspected primary leaves the -rw
// Service at once (its routable label goes), so that no new client session reaches it, long
// before a failover (which fences it from outside and deletes its Pod) may promote anyone. It
// returns to -rw as soon as it answers and renews again.
func PrimarySuspected(o Observation) bool {
	p := o.Status.CurrentPrimary
	in, seen := o.instance(p)
	if p == "" || !seen || !in.PodExists {
		return false
	}
	return in.PodDeleting || (!in.Reachable && LeaseRenewalOverdue(o))
}

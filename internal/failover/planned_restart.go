package failover

import "time"

// PlannedRestartBudget is how long a primary restarted in place by a rolling update
// (primaryUpdateMethod restart) may stay down before the failover rules apply again: its Pod's
// termination grace period (mysqld's clean shutdown) plus the start of a new Pod on the same
// volume (scheduling, the init container, mysqld's start and crash recovery). Past it, the
// primary is failing as any other, counted from the end of the budget.
const PlannedRestartBudget = 2 * time.Minute

// PlannedRestartEnd is when the planned restart of the current primary recorded in the status
// stops holding failovers back; ok is false when none is recorded for it, or while the Pod the
// restart deletes still runs undeleted: the record alone (written before the deletion, which may
// never come) holds nothing back.
func (o *Observation) PlannedRestartEnd() (time.Time, bool) {
	st := o.Status
	if st.PrimaryRestart == "" || st.PrimaryRestart != st.CurrentPrimary || st.PrimaryRestartAt.IsZero() {
		return time.Time{}, false
	}
	if p, seen := o.instance(st.PrimaryRestart); seen && p.PodExists && !p.PodDeleting && p.PodUID == st.PrimaryRestartPodUID {
		return time.Time{}, false
	}
	return st.PrimaryRestartAt.Add(PlannedRestartBudget), true
}

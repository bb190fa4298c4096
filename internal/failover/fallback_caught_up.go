package failover

import "time"

// caughtUpAfterFallback: the operator saw the failing primary p read-only, during this failure
// and after the fallback the Lease records, and cand holds everything it had executed then. A
// read-only server commits nothing more, so nothing it acknowledged alone is missing from cand,
// even once p no longer answers (its Pod deleted by this failover, say).
func (o *Observation) caughtUpAfterFallback(p string, r *FallbackRecord, cand Instance) bool {
	c := o.Status.FallbackCaughtUp
	return c != nil && r != nil && c.FormerPrimary == p && !o.Status.PrimaryFailingSince.IsZero() &&
		c.FailingSince.Equal(o.Status.PrimaryFailingSince) && sameFallbackTime(c.FellBackAt, r.FellBackAt) &&
		cand.History().Contains(c.GTIDSet)
}

// NextFallbackCaughtUp is what status.fallbackCaughtUp should be after observing o: while the
// current primary is failing with a fallback at risk in the Lease, each time it answers
// super_read_only its gtid_executed is recorded (it only grows); a primary seen accepting writes
// again, a failure cleared or another failing primary drop the record. keep says the record in
// the status stays as it is.
func NextFallbackCaughtUp(o Observation) (next *FallbackCaughtUp, keep bool) {
	st := o.Status
	cur := st.FallbackCaughtUp
	p := st.CurrentPrimary
	r := o.Lease.Fallback
	if st.PrimaryFailingSince.IsZero() || !o.Spec.EnablePrimaryLease || !r.AtRisk(p) {
		return nil, cur == nil
	}
	old, seen := o.instance(p)
	switch {
	case seen && old.SeenWritable():
		return nil, cur == nil
	case seen && old.Reachable && old.SuperReadOnly:
		next = &FallbackCaughtUp{FormerPrimary: p, FailingSince: st.PrimaryFailingSince, FellBackAt: r.FellBackAt, GTIDSet: old.Executed}
		if cur != nil && sameProof(*cur, *next) {
			return cur, true
		}
		return next, false
	case cur != nil && (cur.FormerPrimary != p || !cur.FailingSince.Equal(st.PrimaryFailingSince) || !sameFallbackTime(cur.FellBackAt, r.FellBackAt)):
		return nil, false
	}
	return cur, true
}

func sameProof(a, b FallbackCaughtUp) bool {
	return a.FormerPrimary == b.FormerPrimary && a.FailingSince.Equal(b.FailingSince) && sameFallbackTime(a.FellBackAt, b.FellBackAt) &&
		a.GTIDSet.Equal(b.GTIDSet)
}

// sameFallbackTime: a and b date the same fallback, at the precision status.fallbackCaughtUp keeps.
// The Lease's record dates the fallback to the nanosecond; the status (metav1.Time) keeps whole
// seconds, so a record read back from the status never equals the Lease's time exactly. A second
// fallback within the same second would need semi-sync resumed in between, which ends the record.
func sameFallbackTime(a, b time.Time) bool {
	return a.Truncate(time.Second).Equal(b.Truncate(time.Second))
}

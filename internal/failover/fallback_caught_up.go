package failover

// caughtUpAfterFallback: the operator saw the failing primary p read-only, during this failure
// and after the fallback the Lease records, and cand holds everything it had executed then. A
// read-only server commits nothing more, so nothing it acknowledged alone is missing from cand,
// even once p no longer answers (its Pod deleted by this failover, say).
func (o *Observation) caughtUpAfterFallback(p string, r *FallbackRecord, cand Instance) bool {
	c := o.Status.FallbackCaughtUp
	return c != nil && r != nil && c.FormerPrimary == p && !o.Status.PrimaryFailingSince.IsZero() &&
		c.FailingSince.Equal(o.Status.PrimaryFailingSince) && c.FellBackAt.Equal(r.FellBackAt) &&
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
	case cur != nil && (cur.FormerPrimary != p || !cur.FailingSince.Equal(st.PrimaryFailingSince) || !cur.FellBackAt.Equal(r.FellBackAt)):
		return nil, false
	}
	return cur, true
}

func sameProof(a, b FallbackCaughtUp) bool {
	return a.FormerPrimary == b.FormerPrimary && a.FailingSince.Equal(b.FailingSince) && a.FellBackAt.Equal(b.FellBackAt) &&
		a.GTIDSet.Equal(b.GTIDSet)
}

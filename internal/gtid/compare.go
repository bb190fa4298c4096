package gtid

// Relation is how two GTID histories relate.
type Relation int

const (
	// Same: both hold exactly the same transactions.
	Same Relation = iota
	// Behind: the first is a strict subset of the second; it can catch up by replicating.
	Behind
	// Ahead: the first is a strict superset of the second.
	Ahead
	// Diverged: each holds transactions the other lacks; neither can follow the other safely.
	Diverged
)

func (r Relation) String() string {
	switch r {
	case Same:
		return "same"
	case Behind:
		return "behind"
	case Ahead:
		return "ahead"
	case Diverged:
		return "diverged"
	}
	return "unknown"
}

// Compare returns how a relates to b.
func Compare(a, b Set) Relation {
	aInB, bInA := b.Contains(a), a.Contains(b)
	switch {
	case aInB && bInA:
		return Same
	case aInB:
		return Behind
	case bInA:
		return Ahead
	}
	return Diverged
}

// Errant returns the transactions a replica executed that the primary never did. A non-empty
// result means the replica has diverged: it must not follow the primary, and must not be
// promoted over it without a human deciding which history wins.
func Errant(replica, primary Set) Set {
	return replica.Subtract(primary)
}

// CanFollow reports whether a replica with history replica may replicate from a source with
// history source: its history must be contained in the source's.
func CanFollow(replica, source Set) bool {
	return source.Contains(replica)
}

// MostAdvanced returns the index of the set that contains every other one, preferring the
// earliest on ties (equal sets), so the caller decides priority by ordering its candidates. It
// returns false when the list is empty or no set contains all others (the histories diverged):
// then no candidate can be promoted without losing some transaction.
func MostAdvanced(sets []Set) (int, bool) {
	if len(sets) == 0 {
		return 0, false
	}
	best := 0
	for i := 1; i < len(sets); i++ {
		if !sets[best].Contains(sets[i]) {
			best = i
		}
	}
	for _, s := range sets {
		if !sets[best].Contains(s) {
			return 0, false
		}
	}
	return best, true
}

package gtid

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// ErrInvalid is wrapped by every parse error.
var ErrInvalid = errors.New("invalid GTID set")

// Set is a GTID set: for each source UUID and tag, the transaction numbers it holds. The zero
// value is the empty set.
type Set struct {
	m mysql.MysqlGTIDSet
}

// Parse parses a GTID set as MySQL prints it in @@gtid_executed: comma-separated
// uuid[:tag]:interval[:interval...] groups, whitespace and newlines between groups allowed. An
// empty string is the empty set.
func Parse(text string) (Set, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return Set{}, nil
	}
	parsed, err := mysql.ParseMysqlGTIDSet(text)
	if err != nil {
		// go-mysql's errors do not wrap; keep its message, wrap our sentinel.
		return Set{}, fmt.Errorf("%w %q: %s", ErrInvalid, abbreviate(text), err.Error())
	}
	m := *parsed.(*mysql.MysqlGTIDSet)
	for sid, tags := range m {
		for tag, intervals := range tags {
			if len(intervals) > 0 && intervals[0].Start < 1 {
				return Set{}, fmt.Errorf("%w %q: transaction number 0 in %s", ErrInvalid, abbreviate(text),
					sid)
			}
			if len(intervals) == 0 {
				delete(tags, tag)
			}
		}
		if len(tags) == 0 {
			delete(m, sid)
		}
	}
	return Set{m: m}, nil
}

// MustParse is Parse for constants in tests and tables; it panics on an invalid set.
func MustParse(text string) Set {
	s, err := Parse(text)
	if err != nil {
		panic(err)
	}
	return s
}

// abbreviate keeps error strings short when a caller hands us a very long or garbage value.
func abbreviate(text string) string {
	const limit = 120
	if len(text) <= limit {
		return text
	}
	return text[:limit] + "..."
}

// String returns the canonical form: UUIDs sorted, intervals merged, no whitespace. It parses
// back to an equal set.
func (s Set) String() string {
	if len(s.m) == 0 {
		return ""
	}
	return s.m.String()
}

// IsEmpty reports whether the set holds no transaction.
func (s Set) IsEmpty() bool { return len(s.m) == 0 }

// Contains reports whether every transaction of o is in s (o is a subset of s).
func (s Set) Contains(o Set) bool {
	if o.IsEmpty() {
		return true
	}
	if s.IsEmpty() {
		return false
	}
	return s.m.Contain(&o.m)
}

// Equal reports whether s and o hold the same transactions.
func (s Set) Equal(o Set) bool {
	if s.IsEmpty() || o.IsEmpty() {
		return s.IsEmpty() == o.IsEmpty()
	}
	return s.m.Equal(&o.m)
}

// Count returns the number of transactions in s, saturating at math.MaxUint64.
func (s Set) Count() uint64 {
	var n uint64
	for _, tags := range s.m {
		for _, intervals := range tags {
			for _, iv := range intervals {
				d := uint64(iv.Stop - iv.Start)
				if n > math.MaxUint64-d {
					return math.MaxUint64
				}
				n += d
			}
		}
	}
	return n
}

// Subtract returns the transactions of s that are not in o (MySQL's GTID_SUBTRACT(s, o)).
func (s Set) Subtract(o Set) Set {
	out := mysql.NewMysqlGTIDSet()
	for sid, tags := range s.m {
		for tag, intervals := range tags {
			rest := subtractIntervals(intervals, o.m[sid][tag])
			if len(rest) == 0 {
				continue
			}
			if out[sid] == nil {
				out[sid] = map[mysql.Tag]mysql.IntervalSlice{}
			}
			out[sid][tag] = rest
		}
	}
	if len(out) == 0 {
		return Set{}
	}
	return Set{m: out}
}

// subtractIntervals returns a minus b; both are sorted, merged, half-open intervals as go-mysql
// keeps them, and so is the result. Neither input is modified.
func subtractIntervals(a, b mysql.IntervalSlice) mysql.IntervalSlice {
	var out mysql.IntervalSlice
	j := 0
	for _, iv := range a {
		start := iv.Start
		for j < len(b) && b[j].Stop <= start {
			j++
		}
		// b[j] may reach into the next interval of a: do not advance j past it here.
		for k := j; k < len(b) && b[k].Start < iv.Stop; k++ {
			if b[k].Start > start {
				out = append(out, mysql.Interval{Start: start, Stop: b[k].Start})
			}
			start = max(start, b[k].Stop)
		}
		if start < iv.Stop {
			out = append(out, mysql.Interval{Start: start, Stop: iv.Stop})
		}
	}
	return out
}

package failover

import (
	"encoding/json"
	"fmt"
	"time"
)

// FallbackAnnotation, on the primary Lease, is the semi-sync fallback record
// (FallbackRecord, as JSON). The primary's instance manager writes it, in a renewal of the Lease,
// before it releases a commit without its acknowledgements; the operator reads it even when the
// primary no longer answers.
const FallbackAnnotation = "mysql.cloudnative-mysql.io/semisync-fallback"

// FallbackRecord says that a primary fell back to asynchronous replication: from FellBackAt,
// commits it acknowledged may exist on it alone. It is written before the first such commit
// completes. GTIDExecuted is the primary's gtid_executed when it fell back: every commit after
// it may be on the primary only. Once a replica has caught up and semi-sync is on again, Resumed
// is set: ResumedGTIDSet is what that replica holds, so from then on no acknowledged commit is on
// the primary alone.
type FallbackRecord struct {
	Instance     string    `json:"instance"`
	FellBackAt   time.Time `json:"fellBackAt"`
	GTIDExecuted string    `json:"gtidExecuted"`
	// Resumed: semi-sync is on again with a replica holding ResumedGTIDSet, at ResumedAt.
	Resumed        bool      `json:"resumed,omitempty"`
	ResumedAt      time.Time `json:"resumedAt,omitzero"`
	ResumedGTIDSet string    `json:"resumedGTIDSet,omitempty"`
}

// AtRisk reports whether the record says that instance may hold acknowledged commits no replica
// has: it fell back and semi-sync has not resumed since.
func (r *FallbackRecord) AtRisk(instance string) bool {
	return r != nil && r.Instance == instance && !r.Resumed
}

// Encode is the annotation's value.
func (r FallbackRecord) Encode() string {
	b, err := json.Marshal(r)
	if err != nil { // a struct of strings, times and a bool always marshals
		panic(fmt.Sprintf("encoding the fallback record: %v", err))
	}
	return string(b)
}

// ParseFallbackRecord reads the annotation's value; an empty value is no record. A value that
// does not parse is an error: the caller must not take it for "no fallback".
func ParseFallbackRecord(v string) (*FallbackRecord, error) {
	if v == "" {
		return nil, nil
	}
	var r FallbackRecord
	if err := json.Unmarshal([]byte(v), &r); err != nil {
		return nil, fmt.Errorf("reading the semi-sync fallback record %q: %w", v, err)
	}
	if r.Instance == "" {
		return nil, fmt.Errorf("reading the semi-sync fallback record %q: no instance", v)
	}
	return &r, nil
}

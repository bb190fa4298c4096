package pitr

import (
	"errors"
	"fmt"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/api/v1alpha1"
	"github.com/cloudnative-mysql/cloudnative-mysql/internal/gtid"
)

// Kind is what a recovery target names.
type Kind int

const (
	// Latest: every archived transaction.
	Latest Kind = iota
	// AtTime: the transactions committed at or before Time.
	AtTime
	// AtGTID: exactly the GTID set GTID.
	AtGTID
)

// Target is where a replay stops.
type Target struct {
	Kind Kind
	Time time.Time
	GTID gtid.Set
}

func (t Target) String() string {
	switch t.Kind {
	case AtTime:
		return "time " + t.Time.UTC().Format(time.RFC3339Nano)
	case AtGTID:
		return "GTID set " + t.GTID.String()
	}
	return "latest archived transaction"
}

// TargetOf converts the API's recoveryTarget.
func TargetOf(rt *v1alpha1.RecoveryTarget) (Target, error) {
	switch {
	case rt == nil:
		return Target{}, errors.New("no recovery target")
	case rt.TargetTime != "":
		at, err := time.Parse(time.RFC3339Nano, rt.TargetTime)
		if err != nil {
			return Target{}, fmt.Errorf("targetTime %q is not an RFC 3339 time: %w", rt.TargetTime, err)
		}
		return Target{Kind: AtTime, Time: at.UTC()}, nil
	case rt.TargetGTID != "":
		s, err := gtid.Parse(rt.TargetGTID)
		if err != nil {
			return Target{}, fmt.Errorf("targetGTID: %w", err)
		}
		if s.IsEmpty() {
			return Target{}, errors.New("targetGTID is empty")
		}
		return Target{Kind: AtGTID, GTID: s}, nil
	case rt.TargetLatest:
		return Target{Kind: Latest}, nil
	}
	return Target{}, errors.New("recoveryTarget names neither targetTime, targetGTID nor targetLatest")
}

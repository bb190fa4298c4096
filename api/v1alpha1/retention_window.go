package v1alpha1

import (
	"fmt"
	"strconv"
	"time"
)

// day is 24 hours: retention windows count calendar-free days, weeks of 7 and months of 30.
const day = 24 * time.Hour

// maxRetentionUnits bounds n so the window fits a time.Duration, matching the schema's 3 digits.
const maxRetentionUnits = 999

// ParseRetentionWindow parses a retention policy "<n>d", "<n>w" or "<n>m" (n >= 1) into a duration;
// a month is 30 days.
func ParseRetentionWindow(policy string) (time.Duration, error) {
	if len(policy) < 2 {
		return 0, fmt.Errorf("retention policy %q: want <n>d, <n>w or <n>m", policy)
	}
	digits, unit := policy[:len(policy)-1], policy[len(policy)-1]
	if digits[0] == '0' || digits[0] == '+' || digits[0] == '-' {
		return 0, fmt.Errorf("retention policy %q: n must be a positive whole number", policy)
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n < 1 || n > maxRetentionUnits {
		return 0, fmt.Errorf("retention policy %q: n must be a whole number from 1 to %d", policy, maxRetentionUnits)
	}
	switch unit {
	case 'd':
		return time.Duration(n) * day, nil
	case 'w':
		return time.Duration(n) * 7 * day, nil
	case 'm':
		return time.Duration(n) * 30 * day, nil
	}
	return 0, fmt.Errorf("retention policy %q: unit must be d, w or m", policy)
}

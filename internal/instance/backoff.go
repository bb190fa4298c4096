package instance

import "time"

// Backoff is the delay between restarts of a crashing mysqld: it starts at Initial, doubles at
// each quick exit up to Max, and resets once a run lasted Stable.
type Backoff struct {
	Initial time.Duration
	Max     time.Duration
	Stable  time.Duration
}

// Next returns the delay before the next start, given the previous delay (0 before the first
// restart) and how long the last run lasted.
func (b Backoff) Next(prev, ranFor time.Duration) time.Duration {
	if prev == 0 || ranFor >= b.Stable {
		return b.Initial
	}
	return min(prev*2, b.Max)
}

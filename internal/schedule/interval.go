package schedule

import "time"

// intervalSamples is how many consecutive slots MinInterval looks at: enough to meet every gap
// of an expression whose seconds, minutes or hours fields list irregular values.
const intervalSamples = 200

// MinInterval is the shortest gap between two consecutive slots among the intervalSamples slots
// after from; zero when fewer than two slots follow.
func (s Schedule) MinInterval(from time.Time) time.Duration {
	var shortest time.Duration
	prev := s.Next(from)
	for range intervalSamples {
		next := s.Next(prev)
		if prev.IsZero() || next.IsZero() {
			break
		}
		if gap := next.Sub(prev); shortest == 0 || gap < shortest {
			shortest = gap
		}
		prev = next
	}
	return shortest
}

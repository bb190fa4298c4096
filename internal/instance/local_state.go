package instance

import "sync"

// LocalState is what the instance manager knows of its instance beyond mysqld's own status,
// shared by the role reconciler (which learns it), the probes and the control API (which report
// it). The zero value is an instance still bootstrapping. Safe for concurrent use.
type LocalState struct {
	mu            sync.Mutex
	bootstrapDone bool
	diverged      bool
	members       []string
}

// SetMembers records the instances of the Cluster as last read.
func (s *LocalState) SetMembers(members []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.members = members
}

// Members returns the instances recorded by SetMembers.
func (s *LocalState) Members() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.members
}

// SetBootstrapDone records that initialization and clone are over.
func (s *LocalState) SetBootstrapDone() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bootstrapDone = true
}

// BootstrapDone reports whether initialization and clone are over.
func (s *LocalState) BootstrapDone() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bootstrapDone
}

// SetDiverged records the role reconciler's last finding: the instance holds transactions its
// primary never had (or is listed as diverged).
func (s *LocalState) SetDiverged(diverged bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.diverged = diverged
}

// Diverged reports the last finding of SetDiverged.
func (s *LocalState) Diverged() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.diverged
}

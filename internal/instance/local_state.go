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
	role          RoleFacts
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

// RoleFacts are what the role reconciler last found of its instance's place in the Cluster,
// exported as metrics: whether it plays the primary and whether it is fenced. Known is false
// until its first pass (a new process, a mysqld that does not answer): then nothing is known.
type RoleFacts struct {
	Known, Primary, Fenced bool
}

// SetRoleFacts records the role reconciler's last finding.
func (s *LocalState) SetRoleFacts(f RoleFacts) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.role = f
}

// RoleFacts returns the last finding of SetRoleFacts.
func (s *LocalState) RoleFacts() RoleFacts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.role
}

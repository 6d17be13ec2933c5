package core

import "sync"

// Switch is the pause state every backend shares: paused or running, and for good running
// once closed. Workers read it (State) between operations and wait on its channels; each
// backend builds on it how Pause waits for its workers to stop (the memory queue collects one
// acknowledgement per worker, the Redis-streams one waits until no consumer holds a batch).
// All methods are safe for concurrent use.
type Switch struct {
	mu      sync.Mutex
	paused  bool
	closed  bool
	pauseC  chan struct{} // closed while paused, replaced on resume
	resumeC chan struct{} // closed while running, replaced on pause
}

// NewSwitch returns a running switch.
func NewSwitch() *Switch {
	running := make(chan struct{})
	close(running)
	return &Switch{pauseC: make(chan struct{}), resumeC: running}
}

// Pause switches to paused; it reports false when already paused or closed.
func (s *Switch) Pause() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.paused || s.closed {
		return false
	}
	s.paused = true
	close(s.pauseC)
	s.resumeC = make(chan struct{})
	return true
}

// Resume switches to running; it reports false when it was not paused.
func (s *Switch) Resume() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resumeLocked()
}

func (s *Switch) resumeLocked() bool {
	if !s.paused {
		return false
	}
	s.paused = false
	close(s.resumeC)
	s.pauseC = make(chan struct{})
	return true
}

// Close resumes for good: a later Pause does nothing (Close of a backend calls it, so that
// paused workers drain).
func (s *Switch) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resumeLocked()
	s.closed = true
}

// State returns whether the switch is paused, the channel closed when it gets paused, and the
// channel closed when it resumes.
func (s *Switch) State() (paused bool, pauseC, resumeC <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.paused, s.pauseC, s.resumeC
}

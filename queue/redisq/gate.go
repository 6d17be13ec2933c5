package redisq

import "sync"

// gate is the pause switch: consumers hold it while they read and flush a batch, and Pause
// waits until none holds it.
type gate struct {
	mu      sync.Mutex
	idle    *sync.Cond // signalled when busy drops to 0
	busy    int
	paused  bool
	closed  bool
	resumeC chan struct{} // closed while not paused
}

func newGate() gate {
	running := make(chan struct{})
	close(running)
	return gate{resumeC: running}
}

// hold waits while the gate is paused, then counts the caller busy. It reports false when
// stop closed first.
func (g *gate) hold(stop <-chan struct{}) bool {
	for {
		g.mu.Lock()
		if !g.paused {
			g.busy++
			g.mu.Unlock()
			return true
		}
		ch := g.resumeC
		g.mu.Unlock()
		select {
		case <-ch:
		case <-stop:
			return false
		}
	}
}

func (g *gate) release() {
	g.mu.Lock()
	g.busy--
	if g.busy == 0 && g.idle != nil {
		g.idle.Broadcast()
	}
	g.mu.Unlock()
}

func (g *gate) pause() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.paused || g.closed {
		return
	}
	g.paused = true
	g.resumeC = make(chan struct{})
	if g.idle == nil {
		g.idle = sync.NewCond(&g.mu)
	}
	for g.busy > 0 && g.paused {
		g.idle.Wait()
	}
}

func (g *gate) resume() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.resumeLocked()
}

func (g *gate) resumeLocked() {
	if g.paused {
		g.paused = false
		close(g.resumeC)
		if g.idle != nil {
			g.idle.Broadcast()
		}
	}
}

// close resumes for good.
func (g *gate) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.resumeLocked()
	g.closed = true
}

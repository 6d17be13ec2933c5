package redisq

import (
	"sync"

	"github.com/hotspotkit/hotspotkit/queue/internal/core"
)

// gate is the pause switch (core.Switch) with the consumers' side: consumers hold it while
// they read and flush a batch, and Pause waits until none holds it. The switch is only
// flipped under mu, so a consumer that sees it running is counted busy before Pause can
// start waiting.
type gate struct {
	sw   *core.Switch
	mu   sync.Mutex
	idle *sync.Cond // signalled when busy drops to 0 or the switch resumes
	busy int
}

func newGate() *gate {
	g := &gate{sw: core.NewSwitch()}
	g.idle = sync.NewCond(&g.mu)
	return g
}

// hold waits while the gate is paused, then counts the caller busy. It reports false when
// stop or leave (nil: never) closed first.
func (g *gate) hold(stop, leave <-chan struct{}) bool {
	for {
		g.mu.Lock()
		paused, _, resumeC := g.sw.State()
		if !paused {
			g.busy++
			g.mu.Unlock()
			return true
		}
		g.mu.Unlock()
		select {
		case <-resumeC:
		case <-stop:
			return false
		case <-leave:
			return false
		}
	}
}

func (g *gate) release() {
	g.mu.Lock()
	g.busy--
	if g.busy == 0 {
		g.idle.Broadcast()
	}
	g.mu.Unlock()
}

// pause switches to paused and waits until no consumer holds a batch (or a resume).
func (g *gate) pause() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.sw.Pause() {
		return
	}
	for g.busy > 0 {
		if paused, _, _ := g.sw.State(); !paused {
			return
		}
		g.idle.Wait()
	}
}

func (g *gate) resume() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.sw.Resume() {
		g.idle.Broadcast()
	}
}

// close resumes for good.
func (g *gate) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.sw.Close()
	g.idle.Broadcast()
}

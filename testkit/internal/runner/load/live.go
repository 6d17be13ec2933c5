package load

import (
	"sync"
	"sync/atomic"

	"github.com/hotspotkit/hotspotkit/hist"
)

// Live holds counters that a run updates as it goes, for a monitor to read concurrently.
// Warm-up requests are included. The counters are read one at a time, so a reading of
// several of them is not one instant's snapshot.
type Live struct {
	// next is the index counter itself: one past the last index handed out, plus one per
	// worker that found the planned requests exhausted.
	next  atomic.Int64
	limit atomic.Int64
	_     [48]byte // workers write next, completed and failed: one cache line each
	// completed and failed count finished requests.
	completed atomic.Int64
	_         [56]byte
	failed    atomic.Int64
	_         [56]byte
	// byClass counts failures by Classify class (*atomic.Int64 per class); touched only when
	// a request fails.
	byClass sync.Map
	// latency and acquire are the run's own histogram shards (measured requests only).
	latency, acquire atomic.Pointer[hist.Sharded]
}

// Started is the number of requests handed out so far.
func (l *Live) Started() int64 {
	n := l.next.Load()
	if limit := l.limit.Load(); limit > 0 && n > limit {
		return limit
	}
	return n
}

// Completed is the number of requests that succeeded so far.
func (l *Live) Completed() int64 { return l.completed.Load() }

// Failed is the number of requests that failed so far (unknown outcomes included).
func (l *Live) Failed() int64 { return l.failed.Load() }

// InFlight is the number of requests started and not yet finished.
func (l *Live) InFlight() int64 {
	return max(0, l.Started()-l.Completed()-l.Failed())
}

// FailedByClass is the number of failures so far by Classify class.
func (l *Live) FailedByClass() map[string]int64 {
	out := map[string]int64{}
	l.byClass.Range(func(k, v any) bool {
		out[k.(string)] = v.(*atomic.Int64).Load()
		return true
	})
	return out
}

// Latency is a merged copy of the latency histogram of the measured requests that
// succeeded so far (empty before the run starts).
func (l *Live) Latency() *hist.Histogram { return merged(&l.latency) }

// AcquireWait is a merged copy of the connection-wait histogram so far.
func (l *Live) AcquireWait() *hist.Histogram { return merged(&l.acquire) }

func merged(p *atomic.Pointer[hist.Sharded]) *hist.Histogram {
	if s := p.Load(); s != nil {
		return s.Merged()
	}
	return hist.New()
}

func (l *Live) countFailure(class string) {
	c, ok := l.byClass.Load(class)
	if !ok {
		c, _ = l.byClass.LoadOrStore(class, new(atomic.Int64))
	}
	c.(*atomic.Int64).Add(1)
}

func (l *Live) reset(limit int64, latency, acquire *hist.Sharded) {
	l.next.Store(0)
	l.completed.Store(0)
	l.failed.Store(0)
	l.limit.Store(limit)
	l.byClass.Clear()
	l.latency.Store(latency)
	l.acquire.Store(acquire)
}

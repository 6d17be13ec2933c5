package load

import "sync/atomic"

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

func (l *Live) reset(limit int64) {
	l.next.Store(0)
	l.completed.Store(0)
	l.failed.Store(0)
	l.limit.Store(limit)
}

package load

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// Outcome is what happened to one request index.
type Outcome uint8

const (
	// NotAttempted: the index was never handed out (the run ended first).
	NotAttempted Outcome = iota
	// Succeeded: the operation returned nil.
	Succeeded
	// Failed: the operation returned an error (or panicked); its writes must not be there.
	Failed
	// UnknownOutcome: the operation returned Unknown(err), e.g. the connection died during
	// COMMIT; the caller looks the request up to learn whether it took effect.
	UnknownOutcome
)

func (o Outcome) String() string {
	switch o {
	case NotAttempted:
		return "not_attempted"
	case Succeeded:
		return "succeeded"
	case Failed:
		return "failed"
	case UnknownOutcome:
		return "unknown_outcome"
	}
	return fmt.Sprintf("Outcome(%d)", uint8(o))
}

// Outcomes holds one Outcome per request index, one byte each, in chunks allocated as the
// indexes are reached, so a duration-bound run can grow it while it goes. Set may be called
// concurrently for distinct indexes; reads must not race with a Set of the same index.
type Outcomes struct {
	dir atomic.Pointer[[]atomic.Pointer[outcomeChunk]]
	mu  sync.Mutex // serialises growing dir and adding chunks
	n   atomic.Int64
}

const (
	chunkBits = 16
	chunkSize = 1 << chunkBits
)

type outcomeChunk [chunkSize]Outcome

// NewOutcomes returns outcomes for n requests, all NotAttempted.
func NewOutcomes(n int64) *Outcomes { return newOutcomes(n) }

func newOutcomes(n int64) *Outcomes {
	o := new(Outcomes)
	o.n.Store(max(n, 0))
	return o
}

// Len is the number of request indexes: the planned requests of a request-bound run (once it
// is over, those it started when it stopped early), the started ones of a duration-bound run.
func (o *Outcomes) Len() int64 { return o.n.Load() }

// Set records the outcome of request i (i ≥ 0), growing Len to at least i+1.
func (o *Outcomes) Set(i int64, v Outcome) {
	o.store(i, v)
	o.raiseLen(i + 1)
}

// store is Set without maintaining Len: the engine sets Len once, at the end of the run.
func (o *Outcomes) store(i int64, v Outcome) {
	if i < 0 {
		panic(fmt.Sprintf("load: negative request index %d", i))
	}
	o.chunkFor(i >> chunkBits)[i&(chunkSize-1)] = v
}

// setLen sets Len to n once the run is over (nothing sets outcomes any more).
func (o *Outcomes) setLen(n int64) { o.n.Store(max(n, 0)) }

func (o *Outcomes) raiseLen(n int64) {
	for {
		cur := o.n.Load()
		if n <= cur || o.n.CompareAndSwap(cur, n) {
			return
		}
	}
}

// Get returns the outcome of request i; NotAttempted when i is out of range.
func (o *Outcomes) Get(i int64) Outcome {
	if i < 0 || i >= o.Len() {
		return NotAttempted
	}
	ch := o.loadChunk(i >> chunkBits)
	if ch == nil {
		return NotAttempted
	}
	return ch[i&(chunkSize-1)]
}

// Count is the number of requests whose outcome is v.
func (o *Outcomes) Count(v Outcome) int64 {
	var n int64
	o.eachChunk(func(_ int64, ch *outcomeChunk, size int64) {
		if ch == nil {
			if v == NotAttempted {
				n += size
			}
			return
		}
		for _, got := range ch[:size] {
			if got == v {
				n++
			}
		}
	})
	return n
}

// Each calls f for every request index in order.
func (o *Outcomes) Each(f func(i int64, v Outcome)) {
	o.eachChunk(func(first int64, ch *outcomeChunk, size int64) {
		for j := range size {
			v := NotAttempted
			if ch != nil {
				v = ch[j]
			}
			f(first+j, v)
		}
	})
}

// eachChunk visits the chunks covering [0, Len); a chunk never written is nil.
func (o *Outcomes) eachChunk(f func(first int64, ch *outcomeChunk, size int64)) {
	n := o.Len()
	for first := int64(0); first < n; first += chunkSize {
		f(first, o.loadChunk(first>>chunkBits), min(chunkSize, n-first))
	}
}

func (o *Outcomes) loadChunk(c int64) *outcomeChunk {
	if d := o.dir.Load(); d != nil && c < int64(len(*d)) {
		return (*d)[c].Load()
	}
	return nil
}

func (o *Outcomes) chunkFor(c int64) *outcomeChunk {
	if ch := o.loadChunk(c); ch != nil {
		return ch
	}
	return o.addChunk(c)
}

// addChunk runs once per chunkSize requests. A published directory is never written again
// except for filling its empty slots, so readers need no lock; a reader holding an older
// directory that misses a chunk comes here and finds it.
func (o *Outcomes) addChunk(c int64) *outcomeChunk {
	o.mu.Lock()
	defer o.mu.Unlock()
	var dir []atomic.Pointer[outcomeChunk]
	if d := o.dir.Load(); d != nil {
		dir = *d
	}
	if c >= int64(len(dir)) {
		grown := make([]atomic.Pointer[outcomeChunk], max(c+1, 2*int64(len(dir)), 4))
		for i := range dir {
			grown[i].Store(dir[i].Load())
		}
		o.dir.Store(&grown)
		dir = grown
	}
	if ch := dir[c].Load(); ch != nil {
		return ch
	}
	ch := new(outcomeChunk)
	dir[c].Store(ch)
	return ch
}

// Unknown marks err as leaving the request's outcome unknown (e.g. the connection died
// during COMMIT), so the request is recorded as UnknownOutcome and counted in class
// "unknown_outcome". Unknown(nil) is nil.
func Unknown(err error) error {
	if err == nil {
		return nil
	}
	return &unknownError{err: err}
}

// IsUnknown reports whether err, or an error it wraps, came from Unknown.
func IsUnknown(err error) bool {
	var u *unknownError
	return errors.As(err, &u)
}

type unknownError struct{ err error }

func (e *unknownError) Error() string { return "outcome unknown: " + e.err.Error() }
func (e *unknownError) Unwrap() error { return e.err }

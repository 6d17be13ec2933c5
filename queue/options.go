package queue

import (
	"errors"
	"fmt"
	"time"

	"github.com/hotspotkit/hotspotkit/queue/internal/core"
)

// FullPolicy says what Enqueue (EnqueueAll) does when the queue has no room for the record
// (for the whole group). The zero value is PolicySync, the default.
type FullPolicy int

const (
	// PolicySync makes the caller write the record (the group) itself with one
	// Flusher.Flush, one transaction, never waiting for room. It loses nothing but may
	// overtake queued records of the same slot.
	PolicySync FullPolicy = iota
	// PolicyDrop discards the record (the whole group) and returns Dropped without blocking.
	PolicyDrop
	// PolicyBlock waits for room in the queue (backpressure) until ctx is done: room for the
	// whole group, of which nothing is queued before.
	PolicyBlock
)

var policyNames = core.NewNames[FullPolicy]("full policy", "sync", "drop", "block")

// ParseFullPolicy accepts "drop", "sync" or "block" (case-insensitive).
func ParseFullPolicy(s string) (FullPolicy, error) {
	p, err := policyNames.Parse(s)
	if err != nil {
		return 0, fmt.Errorf("queue: %w", err)
	}
	return p, nil
}

func (p FullPolicy) String() string { return policyNames.Name(p) }

// MarshalText and UnmarshalText make a FullPolicy read and write as its name in JSON.
func (p FullPolicy) MarshalText() ([]byte, error) {
	if !p.valid() {
		return nil, fmt.Errorf("queue: invalid full policy %d", int(p))
	}
	return []byte(p.String()), nil
}

// UnmarshalText parses a name accepted by ParseFullPolicy.
func (p *FullPolicy) UnmarshalText(b []byte) error {
	v, err := ParseFullPolicy(string(b))
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// Set and Type let *FullPolicy serve as a pflag.Value.
func (p *FullPolicy) Set(s string) error { return p.UnmarshalText([]byte(s)) }

// Type names the flag's value kind in --help.
func (p *FullPolicy) Type() string { return "drop|sync|block" }

func (p FullPolicy) valid() bool { return policyNames.Valid(p) }

// Outcome says what Enqueue did with a record (EnqueueAll with its whole group).
type Outcome int

const (
	// Queued: accepted into the queue; a worker will write it (or Close abandons it).
	Queued Outcome = iota
	// WrittenInline: the queue was full under PolicySync and the caller wrote the record.
	WrittenInline
	// Dropped: the queue was full under PolicyDrop.
	Dropped
	// Rejected: Enqueue returned an error and the record was not written.
	Rejected
)

func (o Outcome) String() string {
	switch o {
	case Queued:
		return "queued"
	case WrittenInline:
		return "written_inline"
	case Dropped:
		return "dropped"
	case Rejected:
		return "rejected"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// Defaults applied by New to zero-valued options: 65536 records, batches of 512, 50ms, 2
// workers (at most 64), 5 retries, 25ms. All but DefaultCapacity are every backend's.
const (
	DefaultCapacity      = 65536
	DefaultBatchSize     = core.DefaultBatchSize
	DefaultFlushInterval = core.DefaultFlushInterval
	DefaultWorkers       = core.DefaultWorkers
	MaxWorkers           = core.MaxWorkers
	DefaultMaxRetries    = core.DefaultMaxRetries
	DefaultRetryBackoff  = core.DefaultRetryBackoff
)

// Options configure a Queue. They are validated once by New and never change afterwards.
// For Enqueue to stay allocation-free, K should contain no pointers other than strings
// (integers, strings, arrays and structs of them): hash/maphash.Comparable moves other keys
// to the heap.
type Options[K comparable, T any] struct {
	// Key returns the record's slot. Required.
	Key func(T) K
	// Merge folds newer, a later record for the same slot, into pending. Required when
	// Compaction is on; called by the worker goroutines only, in arrival order.
	Merge func(pending *T, newer T)
	// Worker picks the worker (0 ≤ n < workers) that owns a slot. Nil: a hash of the key, so
	// the slots of a hot spot spread by chance; a caller whose keys split one hot row into
	// numbered slots can deal them out round the workers instead, so that they never share
	// one while there are workers to spare.
	Worker func(key K, workers int) int
	// Spread deals the records of each Enqueue or EnqueueAll call to the workers in turn (the
	// whole call to one worker, the next call to the next), whatever their slots, instead of
	// to the worker that owns each slot. For merges that commute (counters that add up, a
	// GREATEST), where the order in which a slot's records are written does not matter: the
	// records of a hot slot then flush on every worker at once, each batch's statements
	// overlapping the others' and only the hot rows' UPDATEs waiting for one another in the
	// database, where otherwise one worker writes them all, one batch after the other. A
	// slot's records are no longer written in arrival order, and each worker's batch
	// compacts only its own share (a hot slot gets an UPDATE per worker's batch). Compare
	// then matters: it keeps the workers' transactions locking rows in one order. Worker is
	// not read. The in-memory Queue only.
	Spread bool
	// Compare orders slots inside a flushed batch (with Compaction), so that concurrent
	// transactions lock rows in one order and cannot deadlock. Nil keeps first-seen order.
	Compare func(a, b K) int

	// Capacity is the number of records the queue holds waiting for a worker, all workers
	// together. It is not split: the slots of a hot spot may all belong to one worker, which
	// can then use the whole capacity. Memory follows the records held, bounded by Capacity
	// whatever the number of workers: each worker's fifo is a list of chunks of about 16 KiB
	// (16 to 1024 records, at most Capacity/Workers rounded up), allocated as records arrive and
	// given up once written (one spare kept per worker), so a queue holds at most Capacity
	// records in chunks plus two partly used chunks per worker, and nothing once closed.
	// Default 65536; must be at least Workers.
	Capacity int
	// BatchSize is the number of source records a worker collects before it flushes.
	// Default 512.
	BatchSize int
	// FlushInterval bounds how long a partial batch waits: a batch is flushed at the latest
	// FlushInterval after its oldest record was enqueued. Default 50ms.
	FlushInterval time.Duration
	// Workers is the number of worker goroutines, each with its own fifo. Default 2,
	// clamped to 1..64.
	Workers int
	// FullPolicy applies when the queue is full. Default (zero) PolicySync.
	FullPolicy FullPolicy
	// Compaction folds records for the same slot within a batch (Merge) and sorts the batch
	// (Compare) before it is flushed.
	Compaction bool
	// Inline writes a caller's record (group) under PolicySync when the queue is full.
	// Nil uses the queue's Flusher. Giving callers their own (e.g. the request path's pool)
	// keeps inline writers from taking the connections the workers flush with.
	Inline Flusher[T]
	// MaxRetries is the number of times a failed batch is re-sent before its records are
	// written one by one. Default 5; a negative value means no retries.
	MaxRetries int
	// RetryBackoff is the wait before the first retry; it doubles per attempt, capped at one
	// second (or at RetryBackoff itself when that is larger). Default 25ms.
	RetryBackoff time.Duration
	// Pipeline lets a worker write its next batch while the previous one commits: the next
	// batch's statements go out in a transaction of their own (their COPY overlaps the COMMIT;
	// an UPDATE of a row the previous batch holds waits for it in the database), and its COMMIT
	// only once the previous batch has committed, so per-slot order holds; when that one
	// failed, the next is rolled back and both are written again in order. The writer must
	// address rows by key (UPDATE … WHERE key, INSERT … ON CONFLICT, SELECT … FOR UPDATE by
	// key), never filter on a value the previous batch may be changing: under READ COMMITTED
	// a statement waits for a row the previous batch holds and then works on its committed
	// version, but a row its own snapshot shows not matching is skipped without waiting. It
	// needs a StagedFlusher (TxFlusher is one) and two connections per worker. The in-memory
	// Queue only.
	Pipeline bool
	// FlushTimeout bounds each call to the Flusher (a batch's transaction; with Pipeline its
	// writing and its COMMIT each) and each inline write: a flush whose database stops
	// answering is cancelled after it, counts as a failed attempt and is retried like any
	// other (its outcome may be unknown: writers must be idempotent). 0: no bound.
	FlushTimeout time.Duration
}

// withDefaults validates o and returns a copy with defaults filled in.
func (o Options[K, T]) withDefaults() (Options[K, T], error) {
	errs := o.shared().Check()
	if o.Key == nil {
		errs = append(errs, errors.New("Key is required"))
	}
	if len(errs) > 0 {
		return o, fmt.Errorf("queue: invalid options: %w", errors.Join(errs...))
	}
	o.shared().Defaults()
	o.Capacity = core.OrDefault(o.Capacity, DefaultCapacity)
	if o.Capacity < o.Workers {
		return o, fmt.Errorf("queue: invalid options: Capacity %d is smaller than Workers %d", o.Capacity, o.Workers)
	}
	return o, nil
}

// shared views o as the options every backend validates and defaults the same way.
func (o *Options[K, T]) shared() *core.Options[K, T, FullPolicy, Flusher[T]] {
	return (*core.Options[K, T, FullPolicy, Flusher[T]])(o)
}

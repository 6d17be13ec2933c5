package core

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Defaults every backend applies to the options it shares (queue.Options); queue exports
// them under the same names.
const (
	DefaultBatchSize     = 512
	DefaultFlushInterval = 50 * time.Millisecond
	DefaultWorkers       = 2
	MaxWorkers           = 64
	DefaultMaxRetries    = 5
	DefaultRetryBackoff  = 25 * time.Millisecond
	maxRetryBackoff      = time.Second
)

// Policy is what Options needs of queue.FullPolicy: an int whose invalid values have no name.
type Policy interface {
	~int
	MarshalText() ([]byte, error)
}

// Options has exactly queue.Options' fields, in its order, so that a backend views its
// *queue.Options as an *Options (P is queue.FullPolicy, F queue.Flusher[T]) and validates and
// defaults it here; the field docs are queue's.
type Options[K comparable, T any, P Policy, F any] struct {
	Key           func(T) K
	Merge         func(pending *T, newer T)
	Worker        func(key K, workers int) int
	Spread        bool
	Compare       func(a, b K) int
	Capacity      int
	BatchSize     int
	FlushInterval time.Duration
	Workers       int
	FullPolicy    P
	Compaction    bool
	Inline        F
	MaxRetries    int
	RetryBackoff  time.Duration
	Pipeline      bool
	FlushTimeout  time.Duration
}

// FlushContext is the context of one flush (Options.FlushTimeout): parent, bounded when a
// timeout is set.
func (o *Options[K, T, P, F]) FlushContext(parent context.Context) (context.Context, context.CancelFunc) {
	if o.FlushTimeout <= 0 {
		return parent, func() {}
	}
	return context.WithTimeout(parent, o.FlushTimeout)
}

// Check returns what is wrong with the options every backend reads the same way: Merge
// missing with Compaction, an invalid FullPolicy, a negative size or duration. Key and
// Capacity's default are each backend's (one that only produces needs no Key).
func (o *Options[K, T, P, F]) Check() []error {
	var errs []error
	if o.Compaction && o.Merge == nil {
		errs = append(errs, errors.New("Merge is required when Compaction is on"))
	}
	if _, err := o.FullPolicy.MarshalText(); err != nil {
		errs = append(errs, fmt.Errorf("invalid FullPolicy %d", int(o.FullPolicy)))
	}
	return append(errs, NonNegative(
		Field{"Capacity", int64(o.Capacity)}, Field{"BatchSize", int64(o.BatchSize)},
		Field{"FlushInterval", int64(o.FlushInterval)}, Field{"Workers", int64(o.Workers)},
		Field{"RetryBackoff", int64(o.RetryBackoff)}, Field{"FlushTimeout", int64(o.FlushTimeout)})...)
}

// Defaults fills in the defaults every backend shares: BatchSize, FlushInterval, Workers
// (clamped to MaxWorkers), MaxRetries (0 means DefaultMaxRetries, a negative value no
// retries) and RetryBackoff. Capacity is left to the backend.
func (o *Options[K, T, P, F]) Defaults() {
	o.BatchSize = OrDefault(o.BatchSize, DefaultBatchSize)
	o.FlushInterval = OrDefault(o.FlushInterval, DefaultFlushInterval)
	o.Workers = min(OrDefault(o.Workers, DefaultWorkers), MaxWorkers)
	o.RetryBackoff = OrDefault(o.RetryBackoff, DefaultRetryBackoff)
	switch {
	case o.MaxRetries == 0:
		o.MaxRetries = DefaultMaxRetries
	case o.MaxRetries < 0:
		o.MaxRetries = 0
	}
}

// RetryWait is the wait before retry number attempt (1-based): RetryBackoff, doubled per
// attempt, capped at one second (or at RetryBackoff itself when that is larger).
func (o *Options[K, T, P, F]) RetryWait(attempt int) time.Duration {
	limit := max(maxRetryBackoff, o.RetryBackoff)
	d := o.RetryBackoff
	for i := 1; i < attempt && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

// InlineBatch is what WriteInline's write hands the Flusher: a slice of its own (recs may live
// on the caller's stack), compacted and sorted like a batch when the options say so and the
// backend knows the slots (a Redis producer may run without Key).
func (o *Options[K, T, P, F]) InlineBatch(recs []T) []T {
	if o.Compaction && o.Key != nil && o.Merge != nil && len(recs) > 1 {
		return Compact(recs, o.Key, o.Merge, o.Compare)
	}
	return slices.Clone(recs)
}

// OrDefault returns v, or def when v is the zero value (an option left unset).
func OrDefault[V comparable](v, def V) V {
	var zero V
	if v == zero {
		return def
	}
	return v
}

// Field is a named option value for NonNegative.
type Field struct {
	Name  string
	Value int64
}

// NonNegative returns an error for every field whose value is negative.
func NonNegative(fields ...Field) []error {
	var errs []error
	for _, f := range fields {
		if f.Value < 0 {
			errs = append(errs, fmt.Errorf("%s must not be negative (got %d)", f.Name, f.Value))
		}
	}
	return errs
}

// Names are a small enumeration's names (policies, roles), indexed by value, so that every
// backend's options read and write their enumerations the same way.
type Names[E ~int] struct {
	kind  string
	names []string
}

// NewNames returns the names of kind's values 0, 1, ….
func NewNames[E ~int](kind string, names ...string) Names[E] {
	return Names[E]{kind: kind, names: names}
}

// Parse finds s among the names (case-insensitive, spaces trimmed).
func (n Names[E]) Parse(s string) (E, error) {
	for v, name := range n.names {
		if strings.EqualFold(strings.TrimSpace(s), name) {
			return E(v), nil
		}
	}
	last := len(n.names) - 1
	return 0, fmt.Errorf("unknown %s %q (want %s or %s)", n.kind, s, strings.Join(n.names[:last], ", "), n.names[last])
}

// Name names v, or writes kind(v) for a value out of range.
func (n Names[E]) Name(v E) string {
	if n.Valid(v) {
		return n.names[v]
	}
	return fmt.Sprintf("%s(%d)", n.kind, int(v))
}

// Valid reports whether v has a name.
func (n Names[E]) Valid(v E) bool { return v >= 0 && int(v) < len(n.names) }

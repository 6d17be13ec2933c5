package queue

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// rec is the test record: a delta for a slot, carrying the range of per-slot sequence numbers
// it covers (First == Last for a source record; a merge extends Last).
type rec struct {
	Slot  int
	First int
	Last  int
	Sum   int64
}

func recKey(r rec) int { return r.Slot }

// mergeRec sums deltas and extends the sequence range; it reports a merge out of order.
func mergeRec(violations *violationLog, strict bool) func(*rec, rec) {
	return func(p *rec, n rec) {
		if n.Slot != p.Slot {
			violations.add("merge of slot %d into slot %d", n.Slot, p.Slot)
		}
		if n.First <= p.Last || (strict && n.First != p.Last+1) {
			violations.add("slot %d: merge of seq %d after %d", p.Slot, n.First, p.Last)
		}
		p.Last = n.Last
		p.Sum += n.Sum
	}
}

type violationLog struct {
	mu   sync.Mutex
	msgs []string
}

func (v *violationLog) add(format string, args ...any) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.msgs) < 20 {
		v.msgs = append(v.msgs, fmt.Sprintf(format, args...))
	}
}

func (v *violationLog) check(t *testing.T) {
	t.Helper()
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, m := range v.msgs {
		t.Error(m)
	}
}

var errInjected = errors.New("injected flush failure")

// fakeFlusher is an in-memory Flusher that checks what it receives and remembers what it
// committed. The queue logic is database-agnostic, so this is all the unit tests need.
type fakeFlusher struct {
	// fail, when set, decides whether call number n (1-based, all calls) fails.
	fail func(n int, recs []rec) bool
	// gate, when set, makes every call wait for it (or for ctx).
	gate chan struct{}
	// strict: records of a slot must continue exactly where the last commit ended (no loss);
	// otherwise they must only move forward.
	strict bool
	// unique: no slot twice in one call; sorted: slots ascending within a call.
	unique, sorted bool

	violations violationLog

	mu      sync.Mutex
	calls   int
	commits []int // size of every committed call
	last    map[int]int
	sums    map[int]int64
	records int // records committed (after compaction)
}

func (f *fakeFlusher) Flush(ctx context.Context, recs []rec) (FlushResult, error) {
	if f.gate != nil {
		select {
		case <-f.gate:
		case <-ctx.Done():
			return FlushResult{}, ctx.Err()
		}
	}
	if err := ctx.Err(); err != nil {
		return FlushResult{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.fail != nil && f.fail(f.calls, recs) {
		return FlushResult{}, errInjected
	}
	if f.last == nil {
		f.last, f.sums = map[int]int{}, map[int]int64{}
	}
	seen := map[int]bool{}
	for i, r := range recs {
		if f.unique && seen[r.Slot] {
			f.violations.add("slot %d twice in one batch", r.Slot)
		}
		seen[r.Slot] = true
		if f.sorted && i > 0 && recs[i-1].Slot >= r.Slot {
			f.violations.add("batch not sorted: slot %d after %d", r.Slot, recs[i-1].Slot)
		}
		last := f.last[r.Slot]
		if r.First <= last || (f.strict && r.First != last+1) || r.Last < r.First {
			f.violations.add("slot %d: seq %d..%d after %d", r.Slot, r.First, r.Last, last)
		}
		f.last[r.Slot] = r.Last
		f.sums[r.Slot] += r.Sum
	}
	f.commits = append(f.commits, len(recs))
	f.records += len(recs)
	// One statement per distinct slot, like a writer that splits rows so no slot repeats.
	return FlushResult{SQLOps: len(seen)}, nil
}

func (f *fakeFlusher) snapshot() (calls int, commits []int, sums map[int]int64, last map[int]int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	sums, last = map[int]int64{}, map[int]int{}
	for k, v := range f.sums {
		sums[k] = v
	}
	for k, v := range f.last {
		last[k] = v
	}
	return f.calls, append([]int(nil), f.commits...), sums, last
}

func (f *fakeFlusher) totalSum() int64 {
	_, _, sums, _ := f.snapshot()
	var s int64
	for _, v := range sums {
		s += v
	}
	return s
}

// checkInvariant asserts the package-doc invariant on metrics taken after Close.
func checkInvariant(t *testing.T, m Metrics) {
	t.Helper()
	if m.EnqueuedTotal != m.Accounted() {
		t.Errorf("invariant broken: enqueued %d != flushed %d + sync_fallback %d + dropped %d + rejected %d + abandoned %d",
			m.EnqueuedTotal, m.FlushedTotal, m.SyncFallbackTotal, m.DroppedTotal, m.RejectedTotal, m.AbandonedTotal)
	}
	if m.PendingDepth != 0 || m.Depth != 0 {
		t.Errorf("after Close: pending_depth %d, depth %d, want 0", m.PendingDepth, m.Depth)
	}
	if m.CompactedTotal != m.FlushedTotal-m.FlushSQLRecordsTotal {
		t.Errorf("compacted %d != flushed %d - sql records %d", m.CompactedTotal, m.FlushedTotal, m.FlushSQLRecordsTotal)
	}
}

// newTestQueue builds a queue over f whose Close (with a generous deadline) runs at cleanup if
// the test did not close it.
func newTestQueue(t *testing.T, f Flusher[rec], o Options[int, rec]) *Queue[int, rec] {
	t.Helper()
	if o.Key == nil {
		o.Key = recKey
	}
	if o.Compare == nil && o.Compaction {
		o.Compare = cmp.Compare[int]
	}
	q, err := New(f, o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = q.Close(ctx)
	})
	return q
}

func closeQueue(t *testing.T, q *Queue[int, rec]) Metrics {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := q.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	m := q.Metrics()
	checkInvariant(t, m)
	return m
}

// enqueueN enqueues n source records for slot (sequence numbers from 1) and returns the
// outcomes.
func enqueueN(t *testing.T, q *Queue[int, rec], slot, n int) map[Outcome]int {
	t.Helper()
	out := map[Outcome]int{}
	for i := 1; i <= n; i++ {
		o, err := q.Enqueue(context.Background(), rec{Slot: slot, First: i, Last: i, Sum: 1})
		if err != nil {
			t.Fatalf("Enqueue %d: %v", i, err)
		}
		out[o]++
	}
	return out
}

// waitFor polls cond until it holds or the timeout expires.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(time.Millisecond)
	}
}

// enqueueInOrder enqueues n records over slots, each slot's numbered in order from 1 and adding
// sum, closes q and returns its metrics and the records enqueued per slot.
func enqueueInOrder(t *testing.T, ctx context.Context, q *Queue[int, rec], n, slots int, sum int64) (Metrics, map[int]int) {
	t.Helper()
	seq := map[int]int{}
	for i := range n {
		s := i % slots
		seq[s]++
		if _, err := q.Enqueue(ctx, rec{Slot: s, First: seq[s], Last: seq[s], Sum: sum}); err != nil {
			t.Fatalf("Enqueue: %v", err)
		}
	}
	if err := q.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return q.Metrics(), seq
}

package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestOrderPerSlot hammers few slots from many goroutines through a small queue whose flusher
// fails now and then, and checks that every slot's writes reach the flusher in sequence.
func TestOrderPerSlot(t *testing.T) {
	const (
		slots      = 48
		goroutines = 32
		perG       = 1500
	)
	for _, tc := range []struct {
		name       string
		compaction bool
		policy     FullPolicy
	}{
		{"block/plain", false, PolicyBlock},
		{"block/compaction", true, PolicyBlock},
		{"drop/plain", false, PolicyDrop},
		{"drop/compaction", true, PolicyDrop},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			lossless := tc.policy == PolicyBlock
			f := &fakeFlusher{
				strict: lossless,
				unique: tc.compaction,
				sorted: tc.compaction,
				// Every 7th call fails: batches are retried, and some end in fallback.
				fail: func(n int, _ []rec) bool { return n%7 == 0 },
			}
			var merges violationLog
			q := newTestQueue(t, f, Options[int, rec]{
				Merge:         mergeRec(&merges, lossless),
				Compaction:    tc.compaction,
				Capacity:      256,
				BatchSize:     32,
				FlushInterval: time.Millisecond,
				Workers:       4,
				FullPolicy:    tc.policy,
				MaxRetries:    1,
				RetryBackoff:  50 * time.Microsecond,
			})

			var (
				slotMu  [slots]sync.Mutex
				seq     [slots]int
				written [slots]int64 // records not dropped, per slot
				dropped atomic.Int64
				wg      sync.WaitGroup
			)
			for g := range goroutines {
				wg.Go(func() {
					r := rand.New(rand.NewPCG(uint64(g), 1))
					for range perG {
						s := r.IntN(slots)
						slotMu[s].Lock()
						seq[s]++
						out, err := q.Enqueue(context.Background(), rec{Slot: s, First: seq[s], Last: seq[s], Sum: 1})
						switch {
						case err != nil:
							t.Errorf("Enqueue: %v", err)
						case out == Dropped:
							dropped.Add(1)
						default:
							written[s]++
						}
						slotMu[s].Unlock()
					}
				})
			}
			wg.Wait()
			m := closeQueue(t, q)
			f.violations.check(t)
			merges.check(t)

			_, _, sums, last := f.snapshot()
			for s := range slots {
				if sums[s] != written[s] {
					t.Errorf("slot %d: flusher summed %d, want %d", s, sums[s], written[s])
				}
				if lossless && last[s] != seq[s] {
					t.Errorf("slot %d: last sequence written %d, want %d", s, last[s], seq[s])
				}
			}
			if m.EnqueuedTotal != goroutines*perG {
				t.Errorf("enqueued_total %d, want %d", m.EnqueuedTotal, goroutines*perG)
			}
			if m.DroppedTotal != dropped.Load() {
				t.Errorf("dropped_total %d, callers saw %d drops", m.DroppedTotal, dropped.Load())
			}
			if lossless && m.DroppedTotal+m.RejectedTotal+m.AbandonedTotal != 0 {
				t.Errorf("lossless policy lost records: %+v", m)
			}
			if m.RetriesTotal == 0 || m.FlushFailedTotal == 0 {
				t.Errorf("the failing flusher was not exercised: retries %d, flush_failed %d", m.RetriesTotal, m.FlushFailedTotal)
			}
			if tc.compaction && m.CompactedTotal == 0 {
				t.Errorf("compaction never merged anything: %+v", m)
			}
			if !tc.compaction && m.CompactedTotal != 0 {
				t.Errorf("compacted_total %d without compaction", m.CompactedTotal)
			}
		})
	}
}

// TestCompaction folds 1000 deltas for 5 slots that wait in a paused queue, so the batch
// contents are exact.
func TestCompaction(t *testing.T) {
	const slots, n = 5, 1000
	for _, tc := range []struct {
		name    string
		compare func(a, b int) int
		sorted  bool
	}{
		{"sorted", func(a, b int) int { return a - b }, true},
		{"first-seen order", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got [][]int // the slots of every batch, in the order the flusher saw them
			f := &fakeFlusher{strict: true, unique: true, sorted: tc.sorted, fail: func(_ int, recs []rec) bool {
				var slotsSeen []int
				for _, r := range recs {
					slotsSeen = append(slotsSeen, r.Slot)
				}
				got = append(got, slotsSeen)
				return false
			}}
			var merges violationLog
			q, err := New(f, Options[int, rec]{
				Key: recKey, Merge: mergeRec(&merges, true), Compare: tc.compare, Compaction: true,
				Workers: 1, BatchSize: 512, FlushInterval: time.Hour,
			})
			if err != nil {
				t.Fatal(err)
			}
			q.Pause()
			seq := map[int]int{}
			order := []int{3, 1, 4, 0, 2} // first-seen order of the slots
			for i := range n {
				s := order[i%slots]
				seq[s]++
				if out, err := q.Enqueue(context.Background(), rec{Slot: s, First: seq[s], Last: seq[s], Sum: int64(i)}); out != Queued || err != nil {
					t.Fatalf("Enqueue: %v %v", out, err)
				}
			}
			m := closeQueue(t, q) // Close resumes and drains: one full batch, then the rest
			f.violations.check(t)
			merges.check(t)

			// The first batch holds records 0..511, the second 512..999.
			want := [][]int{slices.Clone(order), append(slices.Clone(order[512%slots:]), order[:512%slots]...)}
			if tc.sorted {
				slices.Sort(want[0])
				slices.Sort(want[1])
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("batches had slots %v, want %v", got, want)
			}
			if f.totalSum() != n*(n-1)/2 {
				t.Errorf("sum of deltas %d, want %d", f.totalSum(), n*(n-1)/2)
			}
			wantM := Metrics{
				Capacity: DefaultCapacity, MaxDepth: n, EnqueuedTotal: n, FlushedTotal: n,
				FlushBatchesTotal: 2, FlushSQLOpsTotal: 2 * slots, FlushSQLRecordsTotal: 2 * slots,
				CompactedTotal: n - 2*slots,
			}
			if m != wantM {
				t.Errorf("metrics\n got %+v\nwant %+v", m, wantM)
			}
		})
	}
}

// TestFullPolicy fills a paused one-worker queue of capacity 10 with 25 records.
func TestFullPolicy(t *testing.T) {
	const capacity, n = 10, 25
	for _, tc := range []struct {
		name        string
		policy      FullPolicy
		inlineFails bool
		want        map[Outcome]int
		wantM       Metrics // counters only; checked after Close
	}{
		{
			name: "drop", policy: PolicyDrop,
			want:  map[Outcome]int{Queued: capacity, Dropped: n - capacity},
			wantM: Metrics{FlushedTotal: capacity, DroppedTotal: n - capacity},
		},
		{
			name: "sync", policy: PolicySync,
			want:  map[Outcome]int{Queued: capacity, WrittenInline: n - capacity},
			wantM: Metrics{FlushedTotal: capacity, SyncFallbackTotal: n - capacity},
		},
		{
			name: "sync with failing inline writes", policy: PolicySync, inlineFails: true,
			want:  map[Outcome]int{Queued: capacity, Rejected: n - capacity},
			wantM: Metrics{FlushedTotal: capacity, RejectedTotal: n - capacity},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var inlineFails atomic.Bool
			inlineFails.Store(tc.inlineFails)
			f := &fakeFlusher{fail: func(_ int, recs []rec) bool { return len(recs) == 1 && inlineFails.Load() }}
			q := newTestQueue(t, f, Options[int, rec]{Capacity: capacity, Workers: 1, FullPolicy: tc.policy, FlushInterval: time.Hour})
			q.Pause()
			got := map[Outcome]int{}
			for i := 1; i <= n; i++ {
				out, err := q.Enqueue(context.Background(), rec{Slot: i, First: 1, Last: 1, Sum: 1})
				if (err != nil) != (out == Rejected) {
					t.Errorf("Enqueue %d: outcome %v with error %v", i, out, err)
				}
				got[out]++
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("outcomes %v, want %v", got, tc.want)
			}
			if m := q.Metrics(); m.Depth != capacity || m.PendingDepth != capacity || m.FlushedTotal != 0 {
				t.Errorf("while paused: depth %d, pending %d, flushed %d; want %d, %d, 0",
					m.Depth, m.PendingDepth, m.FlushedTotal, capacity, capacity)
			}
			inlineFails.Store(false)
			m := closeQueue(t, q)
			tc.wantM.Capacity, tc.wantM.MaxDepth, tc.wantM.EnqueuedTotal = capacity, capacity, n
			tc.wantM.FlushBatchesTotal, tc.wantM.FlushSQLOpsTotal, tc.wantM.FlushSQLRecordsTotal = 1, capacity, capacity
			if m != tc.wantM {
				t.Errorf("metrics\n got %+v\nwant %+v", m, tc.wantM)
			}
			if q.PersistLag().Count() != tc.wantM.FlushedTotal+tc.wantM.SyncFallbackTotal {
				t.Errorf("persist lag has %d values, want %d", q.PersistLag().Count(), tc.wantM.FlushedTotal+tc.wantM.SyncFallbackTotal)
			}
		})
	}
}

// TestBlockPolicy: a full queue makes Enqueue wait, a cancelled ctx ends the wait, and resuming
// lets the waiting record in; nothing is lost.
func TestBlockPolicy(t *testing.T) { synctest.Test(t, testBlockPolicy) }

func testBlockPolicy(t *testing.T) {
	f := &fakeFlusher{strict: true}
	q := newTestQueue(t, f, Options[int, rec]{Capacity: 4, Workers: 1, FullPolicy: PolicyBlock, FlushInterval: time.Millisecond})
	q.Pause()
	if got := enqueueN(t, q, 1, 4); got[Queued] != 4 {
		t.Fatalf("outcomes %v, want 4 queued", got)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	out, err := q.Enqueue(ctx, rec{Slot: 2, First: 1, Last: 1, Sum: 1})
	cancel()
	if out != Rejected || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Enqueue on a full queue with an expiring ctx: %v, %v; want Rejected, deadline exceeded", out, err)
	}

	done := make(chan Outcome)
	go func() {
		out, err := q.Enqueue(context.Background(), rec{Slot: 1, First: 5, Last: 5, Sum: 1})
		if err != nil {
			t.Errorf("blocked Enqueue: %v", err)
		}
		done <- out
	}()
	time.Sleep(time.Hour) // in the bubble: an hour passes at once, every goroutine blocked
	synctest.Wait()
	select {
	case out := <-done:
		t.Fatalf("Enqueue returned %v while the queue was full and paused", out)
	default:
	}
	q.Resume()
	if out := <-done; out != Queued { // the bubble panics if it can never come
		t.Fatalf("blocked Enqueue returned %v, want Queued", out)
	}
	m := closeQueue(t, q)
	f.violations.check(t)
	if m.FlushedTotal != 5 || m.RejectedTotal != 1 || m.DroppedTotal != 0 {
		t.Errorf("flushed %d, rejected %d, dropped %d; want 5, 1, 0", m.FlushedTotal, m.RejectedTotal, m.DroppedTotal)
	}
	if _, _, _, last := f.snapshot(); last[1] != 5 {
		t.Errorf("slot 1 written up to %d, want 5", last[1])
	}
}

// TestRetries: a flusher failing the first k calls. Up to MaxRetries failures are absorbed by
// retries; one more sends every record through the individual fallback.
func TestRetries(t *testing.T) {
	const n, maxRetries = 100, 5
	for _, tc := range []struct {
		k                               int
		retries, flushed, fallback, bat int64
	}{
		{k: 0, retries: 0, flushed: n, bat: 1},
		{k: 1, retries: 1, flushed: n, bat: 1},
		{k: 3, retries: 3, flushed: n, bat: 1},
		{k: maxRetries, retries: maxRetries, flushed: n, bat: 1},
		{k: maxRetries + 1, retries: maxRetries, fallback: n},
		// The first individual write fails too, and is retried once.
		{k: maxRetries + 2, retries: maxRetries + 1, fallback: n},
	} {
		t.Run(fmt.Sprintf("fail%d", tc.k), func(t *testing.T) {
			f := &fakeFlusher{strict: true, fail: func(call int, _ []rec) bool { return call <= tc.k }}
			q := newTestQueue(t, f, Options[int, rec]{
				Workers: 1, BatchSize: n, FlushInterval: time.Hour,
				MaxRetries: maxRetries, RetryBackoff: 100 * time.Microsecond,
			})
			q.Pause()
			enqueueN(t, q, 7, n)
			m := closeQueue(t, q)
			f.violations.check(t)
			wantFailed := int64(n)
			if tc.k == 0 {
				wantFailed = 0
			}
			if m.RetriesTotal != tc.retries || m.FlushFailedTotal != wantFailed || m.FlushedTotal != tc.flushed ||
				m.SyncFallbackTotal != tc.fallback || m.FlushBatchesTotal != tc.bat {
				t.Errorf("retries %d, flush_failed %d, flushed %d, sync_fallback %d, batches %d; want %d, %d, %d, %d, %d",
					m.RetriesTotal, m.FlushFailedTotal, m.FlushedTotal, m.SyncFallbackTotal, m.FlushBatchesTotal,
					tc.retries, wantFailed, tc.flushed, tc.fallback, tc.bat)
			}
			if _, _, _, last := f.snapshot(); last[7] != n {
				t.Errorf("slot written up to %d, want %d", last[7], n)
			}
			if q.PersistLag().Count() != n {
				t.Errorf("persist lag has %d values, want %d", q.PersistLag().Count(), n)
			}
		})
	}
}

// TestFailingFlusher: batches that never commit end in the individual fallback; records that
// never commit at all are abandoned when Close's deadline expires, and Close says so.
func TestFailingFlusher(t *testing.T) {
	const n = 20
	const poison = 13 // sequence number of the record that can never be written
	for _, tc := range []struct {
		name      string
		fail      func(recs []rec) bool
		fallback  int64
		abandoned int64
	}{
		{"batches fail, single writes succeed", func(recs []rec) bool { return len(recs) > 1 }, n, 0},
		{"one poison record", func(recs []rec) bool {
			return slices.ContainsFunc(recs, func(r rec) bool { return r.First == poison })
		}, poison - 1, n - poison + 1},
		{"everything fails", func([]rec) bool { return true }, 0, n},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeFlusher{fail: func(_ int, recs []rec) bool { return tc.fail(recs) }}
			q := newTestQueue(t, f, Options[int, rec]{
				Workers: 1, BatchSize: n, FlushInterval: time.Millisecond,
				MaxRetries: 2, RetryBackoff: 100 * time.Microsecond,
			})
			q.Pause() // all n records form one batch
			enqueueN(t, q, 1, n)
			q.Resume()
			if tc.abandoned == 0 {
				waitFor(t, "fallback writes", 5*time.Second, func() bool { return q.Metrics().SyncFallbackTotal == n })
			} else {
				// Let the worker reach the endless retry of the stuck record.
				waitFor(t, "fallback retries", 5*time.Second, func() bool { return q.Metrics().RetriesTotal > 5 })
			}
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			err := q.Close(ctx)
			m := q.Metrics()
			checkInvariant(t, m)
			if tc.abandoned == 0 && err != nil {
				t.Fatalf("Close: %v", err)
			}
			if tc.abandoned > 0 && (err == nil || !strings.Contains(err.Error(), "abandoned") || !errors.Is(err, context.DeadlineExceeded)) {
				t.Fatalf("Close returned %v, want an abandoned-records error wrapping the deadline", err)
			}
			if m.SyncFallbackTotal != tc.fallback || m.AbandonedTotal != tc.abandoned || m.FlushedTotal != 0 || m.FlushFailedTotal != n {
				t.Errorf("sync_fallback %d, abandoned %d, flushed %d, flush_failed %d; want %d, %d, 0, %d",
					m.SyncFallbackTotal, m.AbandonedTotal, m.FlushedTotal, m.FlushFailedTotal, tc.fallback, tc.abandoned, n)
			}
		})
	}
}

// TestCloseDrains: nothing is flushed before Close (huge interval and batch), everything after.
func TestCloseDrains(t *testing.T) {
	for _, compaction := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "compaction"}[compaction], func(t *testing.T) {
			f := &fakeFlusher{strict: true}
			var merges violationLog
			q := newTestQueue(t, f, Options[int, rec]{
				Merge: mergeRec(&merges, true), Compaction: compaction,
				Workers: 3, BatchSize: 100000, Capacity: 100000, FlushInterval: time.Hour,
			})
			const slots, per = 10, 500
			for s := range slots {
				enqueueN(t, q, s, per)
			}
			time.Sleep(10 * time.Millisecond)
			if m := q.Metrics(); m.FlushedTotal != 0 || m.PendingDepth != slots*per {
				t.Fatalf("before Close: flushed %d, pending %d; want 0, %d", m.FlushedTotal, m.PendingDepth, slots*per)
			}
			m := closeQueue(t, q)
			f.violations.check(t)
			merges.check(t)
			if m.FlushedTotal != slots*per || f.totalSum() != slots*per {
				t.Errorf("flushed %d, summed %d; want %d", m.FlushedTotal, f.totalSum(), slots*per)
			}
			if err := q.Close(context.Background()); err != nil {
				t.Errorf("second Close: %v", err)
			}
			if out, err := q.Enqueue(context.Background(), rec{Slot: 1}); out != Rejected || !errors.Is(err, ErrClosed) {
				t.Errorf("Enqueue after Close: %v, %v; want Rejected, ErrClosed", out, err)
			}
			m = q.Metrics()
			checkInvariant(t, m)
			if m.RejectedTotal != 1 {
				t.Errorf("rejected_total %d, want 1", m.RejectedTotal)
			}
		})
	}
}

// TestEnqueueRacingClose: Enqueue from many goroutines while Close runs must not panic, and
// every call is accounted for.
func TestEnqueueRacingClose(t *testing.T) {
	for _, policy := range []FullPolicy{PolicyDrop, PolicySync, PolicyBlock} {
		t.Run(policy.String(), func(t *testing.T) {
			f := &fakeFlusher{}
			q := newTestQueue(t, f, Options[int, rec]{Capacity: 64, BatchSize: 8, Workers: 2, FullPolicy: policy, FlushInterval: time.Millisecond})
			var calls atomic.Int64
			var wg sync.WaitGroup
			stop := make(chan struct{})
			for g := range 16 {
				wg.Go(func() {
					for i := 0; ; i++ {
						select {
						case <-stop:
							return
						default:
						}
						calls.Add(1)
						_, _ = q.Enqueue(context.Background(), rec{Slot: g*1000 + i%50, First: i + 1, Last: i + 1, Sum: 1})
						if i%64 == 0 {
							// 16 spinning callers on 2 cores would otherwise starve Close and the
							// workers of CPU for whole 10ms preemption slices.
							runtime.Gosched()
						}
					}
				})
			}
			time.Sleep(20 * time.Millisecond)
			if err := q.Close(context.Background()); err != nil {
				t.Errorf("Close: %v", err)
			}
			time.Sleep(time.Millisecond) // let the callers hit the closed queue
			close(stop)
			wg.Wait()
			// The invariant is exact once no Enqueue call is in progress.
			m := q.Metrics()
			checkInvariant(t, m)
			if m.EnqueuedTotal != calls.Load() {
				t.Errorf("enqueued_total %d, callers made %d calls", m.EnqueuedTotal, calls.Load())
			}
			if m.RejectedTotal == 0 {
				t.Errorf("no Enqueue hit the closed queue; the race was not exercised")
			}
			if f.totalSum() != m.FlushedTotal+m.SyncFallbackTotal {
				t.Errorf("flusher committed %d records, metrics say %d", f.totalSum(), m.FlushedTotal+m.SyncFallbackTotal)
			}
		})
	}
}

// TestCloseDeadlineWhileBlocked: callers waiting under PolicyBlock and a stuck flush are
// released by Close's deadline; the stuck record and the channel contents are abandoned, the
// waiting callers rejected.
func TestCloseDeadlineWhileBlocked(t *testing.T) { synctest.Test(t, testCloseDeadlineWhileBlocked) }

func testCloseDeadlineWhileBlocked(t *testing.T) {
	f := &fakeFlusher{gate: make(chan struct{})} // never opened: every Flush waits for ctx
	q := newTestQueue(t, f, Options[int, rec]{Capacity: 4, BatchSize: 1, Workers: 1, FullPolicy: PolicyBlock})
	var wg sync.WaitGroup
	var rejected atomic.Int64
	for i := range 10 {
		wg.Go(func() {
			if _, err := q.Enqueue(context.Background(), rec{Slot: i, First: 1, Last: 1, Sum: 1}); err != nil {
				rejected.Add(1)
				if !errors.Is(err, ErrClosed) {
					t.Errorf("blocked Enqueue: %v, want ErrClosed", err)
				}
			}
		})
	}
	// The worker holds one record in a stuck flush, the channel holds 4, 5 callers wait.
	synctest.Wait()
	if d := q.Metrics().PendingDepth; d != 5 {
		t.Fatalf("pending %d with every caller blocked, want 5", d)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	err := q.Close(ctx)
	wg.Wait()
	m := q.Metrics()
	checkInvariant(t, m)
	if err == nil || m.AbandonedTotal != 5 || m.RejectedTotal != 5 || rejected.Load() != 5 {
		t.Errorf("Close: %v; abandoned %d, rejected %d (callers saw %d); want error, 5, 5, 5", err, m.AbandonedTotal, m.RejectedTotal, rejected.Load())
	}
}

// TestPauseResume: a paused queue flushes nothing, even past FlushInterval; Resume flushes.
func TestPauseResume(t *testing.T) { synctest.Test(t, testPauseResume) }

func testPauseResume(t *testing.T) {
	f := &fakeFlusher{strict: true}
	q := newTestQueue(t, f, Options[int, rec]{Workers: 2, FlushInterval: 2 * time.Millisecond})
	enqueueN(t, q, 1, 5)
	waitFor(t, "the first flush", 5*time.Second, func() bool { return q.Metrics().FlushedTotal == 5 })

	q.Pause()
	q.Pause() // idempotent
	for s := 2; s < 6; s++ {
		enqueueN(t, q, s, 10)
	}
	time.Sleep(time.Hour) // in the bubble: every flush interval of an hour passes, all workers idle
	synctest.Wait()
	if m := q.Metrics(); m.FlushedTotal != 5 || m.PendingDepth != 40 || m.Depth != 40 {
		t.Fatalf("while paused: flushed %d, pending %d, depth %d; want 5, 40, 40", m.FlushedTotal, m.PendingDepth, m.Depth)
	}
	q.Resume()
	waitFor(t, "flushes after Resume", 5*time.Second, func() bool { return q.Metrics().FlushedTotal == 45 })

	q.Pause()
	enqueueN(t, q, 9, 3)
	m := closeQueue(t, q) // Close resumes
	f.violations.check(t)
	if m.FlushedTotal != 48 {
		t.Errorf("flushed %d, want 48", m.FlushedTotal)
	}
	q.Pause() // after Close: no-op, must not block
	q.Resume()
}

// TestFlushInterval: a partial batch is flushed without Close, about FlushInterval after it
// was enqueued.
func TestFlushInterval(t *testing.T) { synctest.Test(t, testFlushInterval) }

// In the bubble the clock moves only when every goroutine waits, so the interval is exact.
func testFlushInterval(t *testing.T) {
	f := &fakeFlusher{}
	q := newTestQueue(t, f, Options[int, rec]{Workers: 1, FlushInterval: 5 * time.Millisecond})
	enqueueN(t, q, 1, 3)
	time.Sleep(5*time.Millisecond - time.Nanosecond)
	synctest.Wait()
	if m := q.Metrics(); m.FlushedTotal != 0 {
		t.Fatalf("flushed %d records before the interval was up", m.FlushedTotal)
	}
	time.Sleep(time.Nanosecond)
	synctest.Wait()
	if m := q.Metrics(); m.FlushedTotal != 3 {
		t.Fatalf("flushed %d records at the interval, want 3", m.FlushedTotal)
	}
	if lag := q.PersistLag(); lag.Count() != 3 || lag.Max() < 5*time.Millisecond || lag.Max() > 5*time.Millisecond+10*time.Microsecond {
		t.Errorf("persist lag: %d values, max %v; want 3 values of 5ms", lag.Count(), lag.Max())
	}
	closeQueue(t, q)
}

// TestBatchSizeTriggersFlush: a full batch goes out long before FlushInterval.
func TestBatchSizeTriggersFlush(t *testing.T) {
	f := &fakeFlusher{}
	q := newTestQueue(t, f, Options[int, rec]{Workers: 1, BatchSize: 10, FlushInterval: time.Hour})
	enqueueN(t, q, 1, 35)
	waitFor(t, "three full batches", 5*time.Second, func() bool { return q.Metrics().FlushedTotal == 30 })
	m := closeQueue(t, q)
	_, commits, _, _ := f.snapshot()
	if m.FlushedTotal != 35 || slices.Max(commits) > 10 {
		t.Errorf("flushed %d in batches %v; want 35 in batches of at most 10", m.FlushedTotal, commits)
	}
}

func TestNewValidates(t *testing.T) {
	f := &fakeFlusher{}
	for _, tc := range []struct {
		name string
		o    Options[int, rec]
		want string
	}{
		{"no key", Options[int, rec]{}, "Key is required"},
		{"compaction without merge", Options[int, rec]{Key: recKey, Compaction: true}, "Merge is required"},
		{"bad policy", Options[int, rec]{Key: recKey, FullPolicy: 7}, "FullPolicy"},
		{"negative capacity", Options[int, rec]{Key: recKey, Capacity: -1}, "Capacity"},
		{"negative interval", Options[int, rec]{Key: recKey, FlushInterval: -time.Second}, "FlushInterval"},
		{"capacity below workers", Options[int, rec]{Key: recKey, Capacity: 3, Workers: 4}, "smaller than Workers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New(f, tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New: %v, want an error mentioning %q", err, tc.want)
			}
		})
	}
	if _, err := New[int, rec](nil, Options[int, rec]{Key: recKey}); err == nil {
		t.Error("New accepted a nil Flusher")
	}

	q, err := New(f, Options[int, rec]{Key: recKey, Workers: 1000, Capacity: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close(context.Background())
	o := q.opts
	if len(q.workers) != MaxWorkers || o.BatchSize != DefaultBatchSize || o.FlushInterval != DefaultFlushInterval ||
		o.MaxRetries != DefaultMaxRetries || o.RetryBackoff != DefaultRetryBackoff || o.FullPolicy != PolicySync {
		t.Errorf("defaults not applied: %d workers, %+v", len(q.workers), o)
	}
	for i, w := range q.workers {
		if w.in.size != 16 { // 1000/64 rounded up: memory is bounded by the capacity
			t.Fatalf("worker %d fifo chunks hold %d, want its share 16", i, w.in.size)
		}
	}
	if q.opts.Capacity != 1000 || q.Metrics().Capacity != 1000 {
		t.Errorf("capacity %d (metric %d), want 1000", q.opts.Capacity, q.Metrics().Capacity)
	}
}

// TestOneHotSlotCanUseTheWholeCapacity: every record of a hot spot has the same slot, so one
// worker gets them all; the queue must still take Capacity records before it is full.
func TestOneHotSlotCanUseTheWholeCapacity(t *testing.T) {
	f := &fakeFlusher{}
	q := newTestQueue(t, f, Options[int, rec]{Workers: 4, Capacity: 100, FullPolicy: PolicyDrop})
	q.Pause()
	for i := 0; i < 101; i++ {
		out, err := q.Enqueue(context.Background(), rec{Slot: 7, First: i, Last: i, Sum: 1})
		want := Queued
		if i == 100 {
			want = Dropped
		}
		if err != nil || out != want {
			t.Fatalf("record %d: %v %v, want %v", i, out, err, want)
		}
	}
	if m := q.Metrics(); m.Depth != 100 || m.DroppedTotal != 1 {
		t.Errorf("depth %d dropped %d, want 100 and 1", m.Depth, m.DroppedTotal)
	}
	if err := q.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if m := q.Metrics(); m.FlushedTotal != 100 || m.Depth != 0 || m.EnqueuedTotal != m.Accounted() {
		t.Errorf("after Close: %+v", m)
	}
}

// TestFifoKeepsOrder: two hot slots on a queue whose workers' fifo chunks hold a quarter of
// the capacity each, so records keep crossing from chunk to chunk and chunks keep being given
// up and reused; every record is written once, in order.
func TestFifoKeepsOrder(t *testing.T) {
	const perSlot = 20000
	for _, compaction := range []bool{false, true} {
		t.Run(fmt.Sprintf("compaction=%v", compaction), func(t *testing.T) {
			f := &fakeFlusher{strict: true, unique: compaction, sorted: compaction}
			var merges violationLog
			q := newTestQueue(t, f, Options[int, rec]{
				Merge: mergeRec(&merges, true), Compaction: compaction,
				Workers: 4, Capacity: 64, BatchSize: 8, FlushInterval: time.Millisecond, FullPolicy: PolicyBlock,
			})
			var wg sync.WaitGroup
			for _, slot := range []int{7, 8} {
				wg.Go(func() {
					for i := 1; i <= perSlot; i++ {
						if out, err := q.Enqueue(context.Background(), rec{Slot: slot, First: i, Last: i, Sum: 1}); err != nil || out != Queued {
							t.Errorf("slot %d record %d: %v %v", slot, i, out, err)
							return
						}
					}
				})
			}
			wg.Wait()
			if err := q.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			f.violations.check(t)
			merges.check(t)
			if m := q.Metrics(); m.FlushedTotal != 2*perSlot || m.EnqueuedTotal != m.Accounted() || m.MaxDepth > 64+4*8 { // held + batches in hand
				t.Errorf("after Close: %+v", m)
			}
			if got := f.sums[7] + f.sums[8]; got != 2*perSlot {
				t.Errorf("sums %d, want %d", got, 2*perSlot)
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	o := Options[int, rec]{RetryBackoff: 25 * time.Millisecond}
	var got []time.Duration
	for a := 1; a <= 8; a++ {
		got = append(got, o.shared().RetryWait(a))
	}
	ms := time.Millisecond
	want := []time.Duration{25 * ms, 50 * ms, 100 * ms, 200 * ms, 400 * ms, 800 * ms, time.Second, time.Second}
	if !slices.Equal(got, want) {
		t.Errorf("backoff %v, want %v", got, want)
	}
}

func TestParseFullPolicy(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    FullPolicy
		wantErr bool
	}{
		{"drop", PolicyDrop, false},
		{"sync", PolicySync, false},
		{"Block", PolicyBlock, false},
		{" sync ", PolicySync, false},
		{"", 0, true},
		{"wait", 0, true},
	} {
		got, err := ParseFullPolicy(tc.in)
		if (err != nil) != tc.wantErr || (!tc.wantErr && got != tc.want) {
			t.Errorf("ParseFullPolicy(%q) = %v, %v; want %v (error %v)", tc.in, got, err, tc.want, tc.wantErr)
		}
		if !tc.wantErr && got.String() != strings.ToLower(strings.TrimSpace(tc.in)) {
			t.Errorf("%v.String() = %q", got, got.String())
		}
	}
	var p FullPolicy
	if err := json.Unmarshal([]byte(`"block"`), &p); err != nil || p != PolicyBlock {
		t.Errorf("JSON decode: %v, %v", p, err)
	}
	if b, err := json.Marshal(PolicyDrop); err != nil || string(b) != `"drop"` {
		t.Errorf("JSON encode: %s, %v", b, err)
	}
}

// TestMetricsJSONNames pins the field names the report and the Redis backend rely on.
func TestMetricsJSONNames(t *testing.T) {
	b, err := json.Marshal(Metrics{})
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]int64
	if err := json.Unmarshal(b, &fields); err != nil {
		t.Fatal(err)
	}
	var got []string
	for k := range fields {
		got = append(got, k)
	}
	sort.Strings(got)
	want := []string{
		"abandoned_total", "capacity", "compacted_total", "depth", "dropped_total", "enqueued_total",
		"flush_batches_total", "flush_failed_total", "flush_sql_ops_total", "flush_sql_records_total",
		"flushed_total", "max_depth", "pending_depth", "rejected_total", "retries_total", "sync_fallback_total",
	}
	if !slices.Equal(got, want) {
		t.Errorf("JSON fields\n got %v\nwant %v", got, want)
	}
}

// A group that finds the queue full under PolicySync is written by its caller in one Flush,
// compacted and sorted like a batch when compaction is on, and counted per record.
func TestInlineGroupIsOneCompactedFlush(t *testing.T) {
	f := &fakeFlusher{strict: true, unique: true, sorted: true}
	q := newTestQueue(t, f, Options[int, rec]{Capacity: 2, Workers: 2, Compaction: true, Merge: mergeRec(&f.violations, true), FlushInterval: time.Hour})
	q.Pause()
	enqueueN(t, q, 100, 2) // the queue is full
	group := []rec{{Slot: 7, First: 1, Last: 1, Sum: 1}, {Slot: 3, First: 1, Last: 1, Sum: 1}, {Slot: 7, First: 2, Last: 2, Sum: 1}}
	if out, err := q.EnqueueAll(context.Background(), group); out != WrittenInline || err != nil {
		t.Fatalf("group on a full queue: %v %v, want written inline", out, err)
	}
	if _, commits, sums, _ := f.snapshot(); fmt.Sprint(commits) != "[2]" || sums[7] != 2 || sums[3] != 1 {
		t.Errorf("inline flushes of %v records, sums %v: want one flush of slots 3 and 7 (folded)", commits, sums)
	}
	q.Resume()
	m := closeQueue(t, q)
	f.violations.check(t)
	if m.EnqueuedTotal != 5 || m.SyncFallbackTotal != 3 || m.FlushedTotal != 2 || q.PersistLag().Count() != 5 {
		t.Errorf("metrics %+v, persist lag of %d records: want 3 inline and 2 flushed, each counted", m, q.PersistLag().Count())
	}
}

// overlapFlusher sums what it is given per slot and notes the most calls that held one slot
// at once; each call takes a moment, so that calls that can overlap do.
type overlapFlusher struct {
	mu      sync.Mutex
	sums    map[int]int64
	holding map[int]int
	most    int
	calls   int
}

func (f *overlapFlusher) Flush(_ context.Context, recs []rec) (FlushResult, error) {
	slots := map[int]bool{}
	f.mu.Lock()
	f.calls++
	for _, r := range recs {
		f.sums[r.Slot] += r.Sum
		if !slots[r.Slot] {
			slots[r.Slot] = true
			f.holding[r.Slot]++
			f.most = max(f.most, f.holding[r.Slot])
		}
	}
	f.mu.Unlock()
	time.Sleep(2 * time.Millisecond)
	f.mu.Lock()
	for s := range slots {
		f.holding[s]--
	}
	f.mu.Unlock()
	return FlushResult{SQLOps: len(slots)}, nil
}

// Spread: the records of one hot slot are flushed by several workers at once, each call's
// records by one worker, every record exactly once; without it one worker holds the slot.
func TestSpreadFlushesAHotSlotOnEveryWorker(t *testing.T) {
	for _, spread := range []bool{false, true} {
		t.Run(fmt.Sprintf("spread=%t", spread), func(t *testing.T) {
			f := &overlapFlusher{sums: map[int]int64{}, holding: map[int]int{}}
			q := newTestQueue(t, f, Options[int, rec]{
				Merge: func(p *rec, n rec) { p.Sum += n.Sum }, Compaction: true, Spread: spread,
				Capacity: 1 << 14, BatchSize: 50, FlushInterval: time.Millisecond, Workers: 4, FullPolicy: PolicyBlock,
			})
			const goroutines, perG = 8, 500
			var wg sync.WaitGroup
			for g := range goroutines {
				wg.Go(func() {
					for i := range perG {
						// A call of two records: the hot slot 0 and a slot of the goroutine's own.
						group := []rec{{Slot: 0, Sum: 1}, {Slot: 1 + g, Sum: int64(i)}}
						if _, err := q.EnqueueAll(context.Background(), group); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			m := closeQueue(t, q)
			if f.sums[0] != goroutines*perG {
				t.Errorf("hot slot summed %d, want %d: every record once", f.sums[0], goroutines*perG)
			}
			for g := range goroutines {
				if want := int64(perG * (perG - 1) / 2); f.sums[1+g] != want {
					t.Errorf("slot %d summed %d, want %d", 1+g, f.sums[1+g], want)
				}
			}
			if m.EnqueuedTotal != 2*goroutines*perG || m.FlushedTotal != m.EnqueuedTotal {
				t.Errorf("enqueued %d, flushed %d: want %d each", m.EnqueuedTotal, m.FlushedTotal, 2*goroutines*perG)
			}
			t.Logf("spread %t: %d calls, at most %d holding the hot slot at once", spread, f.calls, f.most)
			if spread && f.most < 2 {
				t.Errorf("spread: at most %d flush held the hot slot at once, want several workers", f.most)
			}
			if !spread && f.most != 1 {
				t.Errorf("not spread: %d flushes held the hot slot at once, want its one worker's", f.most)
			}
		})
	}
}

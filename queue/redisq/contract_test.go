package redisq

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/sqldb"
)

// The contract every queue.Interface keeps, run against the in-memory queue, this backend on
// miniredis and this backend on a real redis-server, with the same records, writer and
// PostgreSQL tables: the invariant and exactly-once totals, per-slot order (one worker), pause,
// Enqueue racing Close, the three full policies, a group of records as one unit under each,
// flush failures and abandonment at Close's deadline.

// contractOpts are the options a case sets; both backends read them the same way.
type contractOpts struct {
	workers, capacity int
	policy            queue.FullPolicy
	writer            queue.TxWriter[rec]
}

// shared is what both backends are given: the same queue.Options.
func (o contractOpts) shared() queue.Options[int, rec] {
	s := sharedOptions()
	s.Workers, s.Capacity, s.FullPolicy, s.MaxRetries = o.workers, o.capacity, o.policy, 2
	return s
}

type contractBackend struct {
	name  string
	start func(t *testing.T, e *env, o contractOpts) queue.Interface[rec]
}

func contractBackends(t *testing.T, f func(t *testing.T, e *env, start func(contractOpts) queue.Interface[rec])) {
	contractOn(t, false, f)
}

// contractOnEveryDB is contractBackends and this backend on MariaDB (a redis-server), for the
// cases whose outcome rests on the database's side of the queue.
func contractOnEveryDB(t *testing.T, f func(t *testing.T, e *env, start func(contractOpts) queue.Interface[rec])) {
	contractOn(t, true, f)
}

func contractOn(t *testing.T, onMariaDB bool, f func(t *testing.T, e *env, start func(contractOpts) queue.Interface[rec])) {
	run := func(t *testing.T, e *env, b contractBackend) {
		f(t, e, func(o contractOpts) queue.Interface[rec] {
			if o.writer == nil {
				o.writer = e.writer
			}
			q := b.start(t, e, o)
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				_ = q.Close(ctx)
			})
			return q
		})
	}
	t.Run("memory", func(t *testing.T) { run(t, newEnv(t, nil), memoryBackend) })
	backends(t, func(t *testing.T, rdb *redis.Client) { run(t, newEnv(t, rdb), streamBackend) })
	if onMariaDB {
		t.Run(mariadb.name, func(t *testing.T) { run(t, newEnvOn(t, onRedisServer(t), mariadb), streamBackend) })
	}
}

var memoryBackend = contractBackend{name: "memory", start: func(t *testing.T, e *env, o contractOpts) queue.Interface[rec] {
	q, err := queue.New(queue.PgFlusher(e.pgPool, o.writer), o.shared())
	if err != nil {
		t.Fatal(err)
	}
	return q
}}

var streamBackend = contractBackend{name: "redis", start: func(t *testing.T, e *env, o contractOpts) queue.Interface[rec] {
	so := e.options(RoleBoth)
	so.Options, so.Fresh, so.Writer = o.shared(), true, o.writer
	q, err := New(context.Background(), so)
	if err != nil {
		t.Fatal(err)
	}
	return q
}}

func closeWithin(t *testing.T, q queue.Interface[rec], d time.Duration) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return q.Close(ctx)
}

// flaky fails its first n calls, then writes like w.
type flaky struct {
	w *countsWriter
	n atomic.Int64
}

func (f *flaky) WriteBatch(ctx context.Context, tx sqldb.Tx, recs []rec) (int, error) {
	if f.n.Add(-1) >= 0 {
		return 0, errors.New("flaky: refused")
	}
	return f.w.WriteBatch(ctx, tx, recs)
}

// ordered writes like w and counts records of a slot arriving with a lower N than the last
// one written for that slot.
type ordered struct {
	w          *countsWriter
	mu         sync.Mutex
	last       map[int]int64
	outOfOrder int
}

func (o *ordered) WriteBatch(ctx context.Context, tx sqldb.Tx, recs []rec) (int, error) {
	o.mu.Lock()
	for _, r := range recs {
		if r.N < o.last[r.Slot] {
			o.outOfOrder++
		}
		o.last[r.Slot] = r.N
	}
	o.mu.Unlock()
	return o.w.WriteBatch(ctx, tx, recs)
}

func TestContractInvariantAndExactlyOnce(t *testing.T) {
	contractOnEveryDB(t, func(t *testing.T, e *env, start func(contractOpts) queue.Interface[rec]) {
		q := start(contractOpts{workers: 3})
		var wg sync.WaitGroup
		for g := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := g; i < 2000; i += 20 {
					if out, err := q.Enqueue(context.Background(), rec{Slot: i % 7, N: int64(i + 1), Count: 1}); err != nil || out != queue.Queued {
						t.Errorf("enqueue %d: %v %v", i, out, err)
					}
				}
			}()
		}
		wg.Wait()
		if err := closeWithin(t, q, time.Minute); err != nil {
			t.Fatal(err)
		}
		m := q.Metrics()
		checkInvariant(t, m)
		if total, records := e.totals(); total != 2000*2001/2 || records != 2000 || m.FlushedTotal+m.SyncFallbackTotal != 2000 || m.PendingDepth != 0 {
			t.Errorf("totals %d / %d records, metrics %+v", total, records, m)
		}
		if q.PersistLag().Count() != 2000 {
			t.Errorf("persist lag of %d records, want 2000", q.PersistLag().Count())
		}
	})
}

func TestContractOrderPerSlot(t *testing.T) {
	contractBackends(t, func(t *testing.T, e *env, start func(contractOpts) queue.Interface[rec]) {
		w := &ordered{w: e.writer, last: map[int]int64{}}
		q := start(contractOpts{workers: 1, writer: w})
		var wg sync.WaitGroup
		for slot := range 5 { // one producer per slot: its own order is the one to keep
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := int64(1); n <= 300; n++ {
					if _, err := q.Enqueue(context.Background(), rec{Slot: slot, N: n, Count: 1}); err != nil {
						t.Error(err)
					}
				}
			}()
		}
		wg.Wait()
		if err := closeWithin(t, q, time.Minute); err != nil {
			t.Fatal(err)
		}
		if _, records := e.totals(); records != 1500 || w.outOfOrder != 0 {
			t.Errorf("%d records written, %d out of order", records, w.outOfOrder)
		}
	})
}

func TestContractPauseHoldsRecords(t *testing.T) {
	contractBackends(t, func(t *testing.T, e *env, start func(contractOpts) queue.Interface[rec]) {
		q := start(contractOpts{workers: 2})
		q.Pause()
		for i := range 20 {
			if _, err := q.Enqueue(context.Background(), rec{Slot: i % 3, N: 1, Count: 1}); err != nil {
				t.Fatal(err)
			}
		}
		if m := q.Metrics(); m.FlushedTotal != 0 || m.PendingDepth != 20 {
			t.Errorf("paused: %+v, want 20 pending and nothing flushed", m)
		}
		q.Resume()
		if err := closeWithin(t, q, time.Minute); err != nil {
			t.Fatal(err)
		}
		if _, records := e.totals(); records != 20 {
			t.Errorf("%d records written after resume, want 20", records)
		}
	})
}

func TestContractEnqueueRacingClose(t *testing.T) {
	contractBackends(t, func(t *testing.T, e *env, start func(contractOpts) queue.Interface[rec]) {
		q := start(contractOpts{workers: 2})
		var accepted, closed atomic.Int64
		var started sync.WaitGroup
		var wg sync.WaitGroup
		for g := range 20 {
			wg.Add(1)
			started.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					out, err := q.Enqueue(context.Background(), rec{Slot: g, N: 1, Count: 1})
					if i == 0 {
						started.Done()
					}
					if err != nil {
						closed.Add(1)
						return
					}
					if out == queue.Queued || out == queue.WrittenInline {
						accepted.Add(1)
					}
				}
			}()
		}
		started.Wait()
		if err := closeWithin(t, q, time.Minute); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		m := q.Metrics()
		checkInvariant(t, m)
		if _, records := e.totals(); records != accepted.Load() || closed.Load() != 20 || m.RejectedTotal < 20 {
			t.Errorf("%d records written, %d accepted; %d producers saw the close; %+v", records, accepted.Load(), closed.Load(), m)
		}
	})
}

func TestContractFullPolicies(t *testing.T) {
	for _, policy := range []queue.FullPolicy{queue.PolicyDrop, queue.PolicySync, queue.PolicyBlock} {
		t.Run(policy.String(), func(t *testing.T) {
			contractBackends(t, func(t *testing.T, e *env, start func(contractOpts) queue.Interface[rec]) {
				q := start(contractOpts{workers: 1, capacity: 50, policy: policy})
				q.Pause()
				ctx := context.Background()
				for i := range 50 {
					if out, err := q.Enqueue(ctx, rec{Slot: 0, N: int64(i + 1), Count: 1}); out != queue.Queued || err != nil {
						t.Fatalf("record %d of the capacity: %v %v", i, out, err)
					}
				}
				want := map[queue.FullPolicy]queue.Outcome{queue.PolicyDrop: queue.Dropped, queue.PolicySync: queue.WrittenInline}
				if policy == queue.PolicyBlock {
					tctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
					if out, err := q.Enqueue(tctx, rec{Slot: 0, N: 1000, Count: 1}); out != queue.Rejected || err == nil {
						t.Errorf("full under block, deadline passed: %v %v", out, err)
					}
					cancel()
					go q.Resume()
					want[policy] = queue.Queued
				}
				if out, err := q.Enqueue(ctx, rec{Slot: 0, N: 1000, Count: 1}); out != want[policy] || err != nil {
					t.Errorf("full under %s: %v %v, want %v", policy, out, err, want[policy])
				}
				q.Resume()
				if err := closeWithin(t, q, time.Minute); err != nil {
					t.Fatal(err)
				}
				m := q.Metrics()
				checkInvariant(t, m)
				wantTotal := int64(50 * 51 / 2)
				if policy != queue.PolicyDrop {
					wantTotal += 1000
				}
				if total, _ := e.totals(); total != wantTotal {
					t.Errorf("total %d, want %d (%+v)", total, wantTotal, m)
				}
			})
		})
	}
}

func TestContractFlushFailuresAreRetried(t *testing.T) {
	contractOnEveryDB(t, func(t *testing.T, e *env, start func(contractOpts) queue.Interface[rec]) {
		w := &flaky{w: e.writer}
		w.n.Store(2)
		q := start(contractOpts{workers: 1, writer: w})
		for i := range 100 {
			if _, err := q.Enqueue(context.Background(), rec{Slot: i % 4, N: 1, Count: 1}); err != nil {
				t.Fatal(err)
			}
		}
		if err := closeWithin(t, q, time.Minute); err != nil {
			t.Fatal(err)
		}
		m := q.Metrics()
		checkInvariant(t, m)
		if _, records := e.totals(); records != 100 || m.FlushFailedTotal == 0 || m.RetriesTotal == 0 || m.AbandonedTotal != 0 {
			t.Errorf("%d records written, metrics %+v: want all 100 after counted failures and retries", records, m)
		}
	})
}

// A record the writer refuses forever is abandoned when Close's deadline passes, and counted
// so; the records beside it are written.
func TestContractAbandonedAtTheDeadline(t *testing.T) {
	contractBackends(t, func(t *testing.T, e *env, start func(contractOpts) queue.Interface[rec]) {
		q := start(contractOpts{workers: 1})
		for i := range 10 {
			n := int64(1)
			if i == 5 {
				n = -1 // poison: the writer refuses it forever
			}
			if _, err := q.Enqueue(context.Background(), rec{Slot: i, N: n, Count: 1}); err != nil {
				t.Fatal(err)
			}
		}
		// The nine others are written before the deadline starts: what the deadline abandons
		// is then the poison record alone, however slow the machine (a deadline that also
		// had to cover their writes abandoned some of them on a loaded one).
		deadline := time.Now().Add(time.Minute)
		for _, records := e.totals(); records < 9 && time.Now().Before(deadline); _, records = e.totals() {
			time.Sleep(10 * time.Millisecond)
		}
		if err := closeWithin(t, q, 200*time.Millisecond); err == nil {
			t.Error("Close returned nil with a record the writer refuses")
		}
		m := q.Metrics()
		checkInvariant(t, m)
		if total, records := e.totals(); m.AbandonedTotal != 1 || records != 9 || total != 9 {
			t.Errorf("%d records (total %d) written, metrics %+v: want 9 written and the poison one abandoned", records, total, m)
		}
	})
}

// grouped writes like w, remembers the size of every batch it is handed, and refuses every
// batch while refuse is set.
type grouped struct {
	w      *countsWriter
	refuse atomic.Bool
	mu     sync.Mutex
	sizes  []int
}

func (g *grouped) WriteBatch(ctx context.Context, tx sqldb.Tx, recs []rec) (int, error) {
	g.mu.Lock()
	g.sizes = append(g.sizes, len(recs))
	g.mu.Unlock()
	if g.refuse.Load() {
		return 0, errors.New("grouped: refused")
	}
	return g.w.WriteBatch(ctx, tx, recs)
}

func (g *grouped) batchSizes() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return fmt.Sprint(g.sizes)
}

// A group of records (a request's) is one unit under every full policy: with room for part
// of it only, none of it is queued; sync writes all of it in one transaction, and a failed
// inline write leaves none of it queued or written; drop drops all of it; block queues it
// once all of it fits, and refuses at once a group larger than the capacity.
func TestContractGroupIsOneUnit(t *testing.T) {
	for _, policy := range []queue.FullPolicy{queue.PolicyDrop, queue.PolicySync, queue.PolicyBlock} {
		t.Run(policy.String(), func(t *testing.T) {
			contractBackends(t, func(t *testing.T, e *env, start func(contractOpts) queue.Interface[rec]) {
				w := &grouped{w: e.writer}
				q := start(contractOpts{workers: 2, capacity: 10, policy: policy, writer: w})
				q.Pause()
				ctx := context.Background()
				for i := range 8 {
					if out, err := q.Enqueue(ctx, rec{Slot: i % 3, N: 1, Count: 1}); out != queue.Queued || err != nil {
						t.Fatalf("record %d of the capacity: %v %v", i, out, err)
					}
				}
				// Room for two of its three records; its slots belong to different workers.
				group := []rec{{Slot: 0, N: 100, Count: 1}, {Slot: 1, N: 100, Count: 1}, {Slot: 2, N: 100, Count: 1}}
				noneQueued := func(what string) {
					t.Helper()
					if m := q.Metrics(); m.PendingDepth != 8 {
						t.Errorf("%s: pending depth %d, want the 8 records queued before the group", what, m.PendingDepth)
					}
				}
				wantTotal, wantRejected, wantDropped, wantInline := int64(8), int64(0), int64(0), int64(0)
				switch policy {
				case queue.PolicyDrop:
					if out, err := q.EnqueueAll(ctx, group); out != queue.Dropped || err != nil {
						t.Errorf("group under drop: %v %v, want dropped", out, err)
					}
					noneQueued("dropped")
					wantDropped = 3
				case queue.PolicySync:
					w.refuse.Store(true)
					if out, err := q.EnqueueAll(ctx, group); out != queue.Rejected || err == nil {
						t.Errorf("group under sync, inline write refused: %v %v, want rejected", out, err)
					}
					noneQueued("inline write refused")
					w.refuse.Store(false)
					if out, err := q.EnqueueAll(ctx, group); out != queue.WrittenInline || err != nil {
						t.Errorf("group under sync: %v %v, want written inline", out, err)
					}
					noneQueued("written inline")
					if got := w.batchSizes(); got != "[3 3]" { // paused: only the inline writes ran
						t.Errorf("inline writes of %s records, want [3 3]: the group whole in each", got)
					}
					wantTotal, wantRejected, wantInline = 8+300, 3, 3
				case queue.PolicyBlock:
					tctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
					if out, err := q.EnqueueAll(tctx, group); out != queue.Rejected || err == nil {
						t.Errorf("group under block, deadline passed: %v %v, want rejected", out, err)
					}
					cancel()
					noneQueued("deadline passed")
					if out, err := q.EnqueueAll(ctx, make([]rec, 11)); out != queue.Rejected || !errors.Is(err, queue.ErrGroupTooLarge) {
						t.Errorf("group larger than the capacity under block: %v %v, want ErrGroupTooLarge", out, err)
					}
					go q.Resume()
					if out, err := q.EnqueueAll(ctx, group); out != queue.Queued || err != nil {
						t.Errorf("group under block, room made: %v %v, want queued", out, err)
					}
					wantTotal, wantRejected = 8+300, 3+11
				}
				q.Resume()
				if err := closeWithin(t, q, time.Minute); err != nil {
					t.Fatal(err)
				}
				m := q.Metrics()
				checkInvariant(t, m)
				if m.EnqueuedTotal != 8+int64(len(group))+wantRejected || m.RejectedTotal != wantRejected ||
					m.DroppedTotal != wantDropped || m.SyncFallbackTotal != wantInline {
					t.Errorf("metrics %+v: want %d rejected, %d dropped, %d inline, counted per record", m, wantRejected, wantDropped, wantInline)
				}
				if total, _ := e.totals(); total != wantTotal {
					t.Errorf("total %d, want %d (%+v)", total, wantTotal, m)
				}
			})
		})
	}
}

// Groups that wait for room under block, many at once on a queue that holds fewer than two
// of them, all land: room freed by the workers wakes the waiters whatever their groups' sizes.
func TestContractGroupsWaitingForRoomAllLand(t *testing.T) {
	contractBackends(t, func(t *testing.T, e *env, start func(contractOpts) queue.Interface[rec]) {
		q := start(contractOpts{workers: 2, capacity: 5, policy: queue.PolicyBlock})
		var wg sync.WaitGroup
		for g := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 30 {
					group := make([]rec, 1+(g+i)%3)
					for k := range group {
						group[k] = rec{Slot: k, N: 1, Count: 1}
					}
					if out, err := q.EnqueueAll(context.Background(), group); out != queue.Queued || err != nil {
						t.Errorf("group %d/%d: %v %v", g, i, out, err)
						return
					}
				}
			}()
		}
		wg.Wait()
		if err := closeWithin(t, q, time.Minute); err != nil {
			t.Fatal(err)
		}
		m := q.Metrics()
		checkInvariant(t, m)
		if _, records := e.totals(); records != 20*30*2 || m.EnqueuedTotal != records {
			t.Errorf("%d records written, want %d (%+v)", records, 20*30*2, m)
		}
	})
}

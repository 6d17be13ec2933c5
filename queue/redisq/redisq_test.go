package redisq

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/redistest"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/queue/redisq/redisqtest"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit/database"
)

func TestMain(m *testing.M) { os.Exit(redistest.Main(m, testdb.Main)) }

// backends runs f against miniredis (always) and against the package's shared redis-server
// (redistest.Shared: skipped where none is installed, failed in CI).
func backends(t *testing.T, f func(t *testing.T, rdb *redis.Client)) {
	t.Run("miniredis", func(t *testing.T) {
		m := miniredis.RunT(t)
		rdb := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1, PoolSize: 32})
		t.Cleanup(func() { rdb.Close() })
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { // miniredis expires keys (the shards' leases) only when told time passed
			defer wg.Done()
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			last := time.Now()
			for {
				select {
				case <-stop:
					return
				case now := <-tick.C:
					m.FastForward(now.Sub(last))
					last = now
				}
			}
		}()
		t.Cleanup(func() { close(stop); wg.Wait() })
		f(t, rdb)
	})
	t.Run("redis-server", func(t *testing.T) { f(t, onRedisServer(t)) })
}

// onRedisServer is a client of the package's shared redis-server, for the tests that need a
// real server's clock (backends' second).
func onRedisServer(t *testing.T) *redis.Client {
	t.Helper()
	opts, _ := redis.ParseURL(redistest.Shared(t).URL())
	opts.MaxRetries, opts.PoolSize = -1, 32
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// rec is the test record: N added to slot Slot's total; Count source records folded in.
// N < 0 makes the writer fail (a poison record).
type rec struct {
	Slot  int
	N     int64
	Count int64
}

func mergeRec(p *rec, n rec) { p.N += n.N; p.Count += n.Count }

// countsWriter adds records to q_counts; it is NOT idempotent, so any double application
// shows in the totals.
type countsWriter struct{ calls atomic.Int64 }

func (w *countsWriter) WriteBatch(ctx context.Context, tx sqldb.Tx, recs []rec) (int, error) {
	w.calls.Add(1)
	for _, r := range recs {
		if r.N < 0 {
			return 0, errors.New("poison record")
		}
		if _, err := tx.Exec(ctx, `INSERT INTO q_counts (slot, total, records) VALUES ($1, $2, $3)
			ON CONFLICT (slot) DO UPDATE SET total = q_counts.total + excluded.total, records = q_counts.records + excluded.records`,
			r.Slot, r.N, r.Count); err != nil {
			return 0, err
		}
	}
	return len(recs), nil
}

type env struct {
	t      *testing.T
	rdb    redis.UniversalClient
	pool   *pgxpool.Pool
	target *database.Postgres
	stream string
	writer *countsWriter
}

func newEnv(t *testing.T, rdb redis.UniversalClient) *env {
	t.Helper()
	target := testdb.New(t)
	ctx := context.Background()
	if _, err := target.Admin().Exec(ctx, `CREATE TABLE q_counts (slot int PRIMARY KEY, total bigint NOT NULL, records bigint NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	pool, err := target.NewPool(ctx, database.PoolOptions{MaxConns: 16, AppName: "redisq-test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return &env{t: t, rdb: rdb, pool: pool, target: target, stream: "test:" + hex.EncodeToString(b), writer: &countsWriter{}}
}

func (e *env) options(role Role) Options[int, rec] {
	return Options[int, rec]{
		Options: sharedOptions(),
		Client:  e.rdb, Stream: e.stream, Role: role, Codec: queue.JSONCodec[rec](),
		DB: sqldb.PgxPool(e.pool), Writer: e.writer, Block: 20 * time.Millisecond, ReclaimIdle: time.Hour,
	}
}

// sharedOptions are the tests' options that both backends read the same way.
func sharedOptions() queue.Options[int, rec] {
	return queue.Options[int, rec]{
		Key: func(r rec) int { return r.Slot }, Merge: mergeRec, Compare: cmp.Compare[int],
		BatchSize: 100, FlushInterval: 5 * time.Millisecond, RetryBackoff: time.Millisecond,
	}
}

func (e *env) start(o Options[int, rec]) *Queue[int, rec] {
	e.t.Helper()
	q, err := New(context.Background(), o)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = q.Close(ctx)
	})
	return q
}

func (e *env) close(q *Queue[int, rec]) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := q.Close(ctx); err != nil {
		e.t.Fatalf("Close: %v", err)
	}
}

// totals returns the sum of totals and of records in q_counts.
func (e *env) totals() (total, records int64) {
	e.t.Helper()
	err := e.target.Admin().QueryRow(context.Background(),
		`SELECT coalesce(sum(total), 0)::int8, coalesce(sum(records), 0)::int8 FROM q_counts`).Scan(&total, &records)
	if err != nil {
		e.t.Fatal(err)
	}
	return total, records
}

func (e *env) appliedIDs() int64 {
	e.t.Helper()
	var n int64
	if err := e.target.Admin().QueryRow(context.Background(), `SELECT count(*) FROM queue_applied_entries WHERE stream = $1`, e.stream).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// enqueue offers n records (slots 0..6, N = i+1) from 50 goroutines; it returns the sum of N.
func enqueue(t *testing.T, q *Queue[int, rec], n int) int64 {
	t.Helper()
	var wg sync.WaitGroup
	var failed atomic.Int64
	for g := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < n; i += 50 {
				out, err := q.Enqueue(context.Background(), rec{Slot: i % 7, N: int64(i + 1), Count: 1})
				if err != nil || out != queue.Queued {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if failed.Load() > 0 {
		t.Fatalf("%d enqueues not queued", failed.Load())
	}
	return int64(n) * int64(n+1) / 2
}

func checkInvariant(t *testing.T, m queue.Metrics) {
	t.Helper()
	if m.EnqueuedTotal != m.Accounted() {
		t.Errorf("invariant: enqueued %d != accounted %d (%+v)", m.EnqueuedTotal, m.Accounted(), m)
	}
}

func TestEveryRecordAppliedOnceAndAcknowledged(t *testing.T) {
	for _, compact := range []bool{false, true} {
		t.Run(fmt.Sprintf("compaction=%v", compact), func(t *testing.T) {
			backends(t, func(t *testing.T, rdb *redis.Client) {
				e := newEnv(t, rdb)
				o := e.options(RoleBoth)
				o.Compaction, o.Fresh, o.Workers = compact, true, 3
				q := e.start(o)
				const n = 3000
				want := enqueue(t, q, n)
				e.close(q)
				total, records := e.totals()
				if total != want || records != n {
					t.Fatalf("totals %d/%d records, want %d/%d", total, records, want, n)
				}
				m, s := q.Metrics(), q.StreamMetrics()
				checkInvariant(t, m)
				if m.EnqueuedTotal != n || m.FlushedTotal != n || s.AckedTotal != n || m.PendingDepth != 0 || s.Length != 0 || s.PendingEntries != 0 {
					t.Errorf("metrics %+v stream %+v", m, s)
				}
				if compact && m.CompactedTotal == 0 {
					t.Errorf("compaction folded nothing: %+v", m)
				}
				if !compact && m.FlushSQLRecordsTotal != n {
					t.Errorf("uncompacted: %d records written, want %d", m.FlushSQLRecordsTotal, n)
				}
				if m.FlushSQLOpsTotal != m.FlushSQLRecordsTotal+m.FlushBatchesTotal {
					t.Errorf("sql ops %d, want records %d + one applied-ids insert per batch %d", m.FlushSQLOpsTotal, m.FlushSQLRecordsTotal, m.FlushBatchesTotal)
				}
				if q.PersistLag().Count() != n {
					t.Errorf("persist lag holds %d values, want %d", q.PersistLag().Count(), n)
				}
				rs, err := q.RunStats(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if rs.Accepted != n || rs.Acked != n || rs.Applied != n || rs.Length != 0 {
					t.Errorf("run stats %+v", rs)
				}
				if got := e.appliedIDs(); got != n {
					t.Errorf("%d applied ids, want %d", got, n)
				}
			})
		})
	}
}

// TestCommittedButUnacknowledgedIsSkipped: consumer A commits a batch and stops before the
// acknowledgement (held by its hook, like a process killed there); consumer B takes the
// batch over, finds its ids applied, skips it and acknowledges it. Nothing counts twice.
func TestCommittedButUnacknowledgedIsSkipped(t *testing.T) {
	backends(t, func(t *testing.T, rdb *redis.Client) {
		e := newEnv(t, rdb)
		po := e.options(RoleProducer)
		po.Fresh = true
		producer := e.start(po)
		const n = 1000
		want := enqueue(t, producer, n)
		e.close(producer)

		ao := e.options(RoleConsumer)
		ao.Consumer = "A"
		a, committed, release := e.startFrozenAfterCommit(ao)

		bo := e.options(RoleConsumer)
		bo.Consumer, bo.ReclaimIdle = "B", 400*time.Millisecond
		b := e.start(bo)
		e.close(b) // returns once the stream is empty: B took A's batch over
		release()
		e.close(a)

		total, records := e.totals()
		if total != want || records != n {
			t.Fatalf("totals %d/%d records, want %d/%d (double application?)", total, records, want, n)
		}
		// At least A's batch is skipped; on a loaded machine B may also take over a batch of
		// its own whose renewal came late, which is skipped the same way.
		sb, sa := b.StreamMetrics(), a.StreamMetrics()
		if sb.DuplicateSkippedTotal < int64(len(committed)) || sb.ReclaimedTotal < int64(len(committed)) {
			t.Errorf("B: %+v, want ≥ %d duplicates skipped after reclaiming them", sb, len(committed))
		}
		if sa.AckedTotal != 0 || a.Metrics().FlushedTotal != 0 {
			t.Errorf("A acknowledged what B had already acknowledged: %+v", sa)
		}
		if sb.AckedTotal != n {
			t.Errorf("B acknowledged %d, want all %d", sb.AckedTotal, n)
		}
		rs, _ := b.RunStats(context.Background())
		if rs.Accepted != n || rs.Acked != n || rs.Duplicate < int64(len(committed)) || rs.Applied+rs.Duplicate != n {
			t.Errorf("run stats %+v", rs)
		}
		if got := e.appliedIDs(); got != n {
			t.Errorf("%d applied ids, want %d", got, n)
		}
	})
}

// startFrozenAfterCommit starts a consumer (named o.Consumer, one worker) that commits its
// first batch and freezes there, unacknowledged, like a process killed at that point. It
// returns the queue, the batch's ids and the func that thaws it.
func (e *env) startFrozenAfterCommit(o Options[int, rec]) (*Queue[int, rec], []string, func()) {
	e.t.Helper()
	o.Workers = 1
	held := make(chan []string, 1)
	release := make(chan struct{})
	var once sync.Once
	e.t.Cleanup(redisqtest.SetHook(func(consumer, point string, ids []string) {
		if consumer == o.Consumer+"-w0" && point == redisqtest.AfterCommit {
			once.Do(func() { held <- ids; <-release })
		}
	}))
	q := e.start(o)
	select {
	case ids := <-held:
		return q, ids, func() { close(release) }
	case <-time.After(30 * time.Second):
		e.t.Fatalf("consumer %s never committed a batch", o.Consumer)
		return nil, nil, nil
	}
}

// TestKilledConsumerBeforeCommitIsReclaimed: the reading consumer dies holding a batch it
// has not committed; the reclaimer applies the batch once.
func TestKilledConsumerBeforeCommitIsReclaimed(t *testing.T) {
	backends(t, func(t *testing.T, rdb *redis.Client) {
		e := newEnv(t, rdb)
		o := e.options(RoleBoth)
		o.Fresh, o.Workers, o.ReclaimIdle = true, 1, 150*time.Millisecond
		var q *Queue[int, rec]
		killed := make(chan string, 1)
		var once sync.Once
		t.Cleanup(redisqtest.SetHook(func(_, point string, ids []string) {
			if point == redisqtest.AfterRead {
				once.Do(func() {
					q.workers[0].dead.Store(true) // dies right here, before its transaction
					killed <- fmt.Sprint(len(ids))
				})
			}
		}))
		q = e.start(o)
		const n = 500
		want := enqueue(t, q, n)
		<-killed
		// The dead worker's goroutine has left; start its replacement as KillConsumer would.
		q.startWorker("replacement", q.shards[0])
		e.close(q)
		total, records := e.totals()
		if total != want || records != n {
			t.Fatalf("totals %d/%d, want %d/%d", total, records, want, n)
		}
		s := q.StreamMetrics()
		if s.ReclaimedTotal == 0 || s.RedeliveredTotal == 0 || s.AckedTotal != n {
			t.Errorf("stream %+v: want reclaimed and redelivered entries, all acknowledged", s)
		}
		checkInvariant(t, q.Metrics())
	})
}

func TestKillConsumerFault(t *testing.T) {
	backends(t, func(t *testing.T, rdb *redis.Client) {
		e := newEnv(t, rdb)
		o := e.options(RoleBoth)
		o.Fresh, o.ReclaimIdle = true, 100*time.Millisecond
		q := e.start(o)
		want := enqueue(t, q, 400)
		detail, err := q.KillConsumer(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		t.Log(detail)
		want += enqueue(t, q, 400)
		e.close(q)
		if total, records := e.totals(); total != want || records != 800 {
			t.Fatalf("totals %d/%d, want %d/800", total, records, want)
		}
		checkInvariant(t, q.Metrics())
	})
}

// TestPoisonRecordsEndInTheDeadLetterStream: a record the writer always refuses is retried,
// reclaimed until it was delivered MaxDeliveries times, then dead-lettered; an entry that
// cannot be decoded is dead-lettered at once. Everything else is applied.
func TestPoisonRecordsEndInTheDeadLetterStream(t *testing.T) {
	backends(t, func(t *testing.T, rdb *redis.Client) {
		e := newEnv(t, rdb)
		o := e.options(RoleBoth)
		o.Fresh, o.MaxDeliveries, o.ReclaimIdle, o.MaxRetries = true, 3, 100*time.Millisecond, 1
		q := e.start(o)
		ctx := context.Background()
		want := enqueue(t, q, 200)
		if out, err := q.Enqueue(ctx, rec{Slot: 1, N: -1, Count: 1}); err != nil || out != queue.Queued {
			t.Fatalf("poison enqueue: %v %v", out, err)
		}
		if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: e.stream, Values: []string{"d", "{not json", "t", "0"}}).Err(); err != nil {
			t.Fatal(err)
		}
		e.close(q)
		if total, records := e.totals(); total != want || records != 200 {
			t.Fatalf("totals %d/%d, want %d/200", total, records, want)
		}
		m, s := q.Metrics(), q.StreamMetrics()
		if s.DeadLetteredTotal != 2 || m.AbandonedTotal != 2 || s.AckedTotal != 202 {
			t.Errorf("metrics %+v stream %+v: want 2 dead-lettered (abandoned) of 202 acknowledged", m, s)
		}
		// The undecodable entry was not enqueued here, so it is the one abandoned record
		// beyond the invariant's enqueued_total.
		if m.EnqueuedTotal+1 != m.Accounted() {
			t.Errorf("enqueued %d + 1 external != accounted %d", m.EnqueuedTotal, m.Accounted())
		}
		dlq, err := rdb.XRange(ctx, q.DeadLetterStream(), "-", "+").Result()
		if err != nil || len(dlq) != 2 {
			t.Fatalf("dead-letter stream: %v %v", dlq, err)
		}
		reasons := map[string]string{}
		for _, d := range dlq {
			reasons[d.Values["d"].(string)] = d.Values["reason"].(string)
		}
		if r := reasons["{not json"]; len(r) < 7 || r[:7] != "decode:" {
			t.Errorf("undecodable entry's reason %q", r)
		}
		if r := reasons[`{"Slot":1,"N":-1,"Count":1}`]; r != "delivered more than 3 times" {
			t.Errorf("poison entry's reason %q (all: %v)", r, reasons)
		}
		if e.appliedIDs() != 200 {
			t.Errorf("applied ids %d, want 200", e.appliedIDs())
		}
	})
}

func TestFullStreamPolicies(t *testing.T) {
	backends(t, func(t *testing.T, rdb *redis.Client) {
		for _, policy := range []queue.FullPolicy{queue.PolicyDrop, queue.PolicySync, queue.PolicyBlock} {
			t.Run(policy.String(), func(t *testing.T) {
				e := newEnv(t, rdb)
				o := e.options(RoleBoth)
				o.Fresh, o.Capacity, o.FullPolicy = true, 50, policy
				q := e.start(o)
				q.Pause()
				ctx := context.Background()
				outcomes := map[queue.Outcome]int{}
				for i := range 50 {
					out, err := q.Enqueue(ctx, rec{Slot: 0, N: int64(i + 1), Count: 1})
					if err != nil {
						t.Fatal(err)
					}
					outcomes[out]++
				}
				if outcomes[queue.Queued] != 50 {
					t.Fatalf("room for 50: %v", outcomes)
				}
				switch policy {
				case queue.PolicyDrop:
					if out, _ := q.Enqueue(ctx, rec{Slot: 0, N: 1000, Count: 1}); out != queue.Dropped {
						t.Errorf("full stream under drop: %v", out)
					}
				case queue.PolicySync:
					if out, err := q.Enqueue(ctx, rec{Slot: 0, N: 1000, Count: 1}); out != queue.WrittenInline || err != nil {
						t.Errorf("full stream under sync: %v %v", out, err)
					}
				case queue.PolicyBlock:
					tctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
					if out, err := q.Enqueue(tctx, rec{Slot: 0, N: 1000, Count: 1}); out != queue.Rejected || err == nil {
						t.Errorf("full stream under block with a deadline: %v %v", out, err)
					}
					cancel()
					go func() { time.Sleep(50 * time.Millisecond); q.Resume() }()
					if out, err := q.Enqueue(ctx, rec{Slot: 0, N: 1000, Count: 1}); out != queue.Queued || err != nil {
						t.Errorf("blocked enqueue after resume: %v %v", out, err)
					}
				}
				if l := q.Metrics().PendingDepth; policy != queue.PolicyBlock && l != 50 {
					t.Errorf("stream length %d, want the capacity 50 (nothing trimmed)", l)
				}
				q.Resume()
				e.close(q)
				m := q.Metrics()
				checkInvariant(t, m)
				total, _ := e.totals()
				want := int64(50 * 51 / 2)
				if policy != queue.PolicyDrop {
					want += 1000
				}
				if total != want {
					t.Errorf("total %d, want %d (%+v)", total, want, m)
				}
			})
		}
	})
}

// TestReclaimWalksALongPendingList: a consumer that died with more pending entries than one
// XAUTOCLAIM returns; the reclaimer continues from the cursor until all are applied.
func TestReclaimWalksALongPendingList(t *testing.T) {
	backends(t, func(t *testing.T, rdb *redis.Client) {
		e := newEnv(t, rdb)
		po := e.options(RoleProducer)
		po.Fresh = true
		p := e.start(po)
		want := enqueue(t, p, 450)
		e.close(p)
		ctx := context.Background()
		// A consumer reads everything and dies.
		got, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: DefaultGroup, Consumer: "ghost", Streams: []string{e.stream, ">"}, Count: 1000, Block: -1}).Result()
		if err != nil || len(got[0].Messages) != 450 {
			t.Fatalf("ghost read: %v", err)
		}
		o := e.options(RoleConsumer)
		o.ReclaimIdle, o.ReclaimInterval = 20*time.Millisecond, 10*time.Millisecond
		q := e.start(o)
		e.close(q)
		if total, records := e.totals(); total != want || records != 450 {
			t.Fatalf("totals %d/%d, want %d/450", total, records, want)
		}
		if s := q.StreamMetrics(); s.ReclaimedTotal != 450 || s.RedeliveredTotal != 450 || s.AckedTotal != 450 {
			t.Errorf("stream %+v", s)
		}
	})
}

func TestOptionsAreValidated(t *testing.T) {
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	defer rdb.Close()
	for name, o := range map[string]Options[int, rec]{
		"no codec":    {Client: rdb, Stream: "s", Role: RoleProducer},
		"block < 1ms": {Client: rdb, Stream: "s", Role: RoleProducer, Codec: queue.JSONCodec[rec](), Block: time.Microsecond},
		"no writer":   {Client: rdb, Stream: "s", Role: RoleConsumer, Codec: queue.JSONCodec[rec](), Options: sharedOptions()},
		"no stream":   {Client: rdb, Role: RoleProducer, Codec: queue.JSONCodec[rec]()},
		"prune < 1ms": {Client: rdb, Stream: "s", Role: RoleProducer, Codec: queue.JSONCodec[rec](), PruneInterval: time.Microsecond},
		"bad table":   {Client: rdb, Stream: "s", Role: RoleProducer, Codec: queue.JSONCodec[rec](), AppliedTable: "a.b.c"},
	} {
		if _, err := New(context.Background(), o); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// slowWriter takes longer per batch than the reclaim idle time.
type slowWriter struct {
	inner *countsWriter
	delay time.Duration
}

func (w slowWriter) WriteBatch(ctx context.Context, tx sqldb.Tx, recs []rec) (int, error) {
	time.Sleep(w.delay)
	return w.inner.WriteBatch(ctx, tx, recs)
}

// TestSlowBatchIsNotReclaimedFromALiveConsumer: a consumer whose flushes outlast ReclaimIdle
// renews its entries, so the reclaimer leaves them alone.
func TestSlowBatchIsNotReclaimedFromALiveConsumer(t *testing.T) {
	backends(t, func(t *testing.T, rdb *redis.Client) {
		e := newEnv(t, rdb)
		o := e.options(RoleBoth)
		// Renewals every ReclaimIdle/3 (400 ms): only a 1.2 s stall of the renewing goroutine
		// could let a batch twice as slow be taken over. Under the race detector, with every
		// package's tests at once on 2 cores, the goroutine can stall for 600 ms.
		o.Fresh, o.Workers, o.ReclaimIdle, o.BatchSize = true, 1, 1200*time.Millisecond, 150
		o.Writer = slowWriter{inner: e.writer, delay: 2400 * time.Millisecond}
		q := e.start(o)
		want := enqueue(t, q, 300)
		e.close(q)
		if total, records := e.totals(); total != want || records != 300 {
			t.Fatalf("totals %d/%d, want %d/300", total, records, want)
		}
		if s := q.StreamMetrics(); s.ReclaimedTotal != 0 || s.DuplicateSkippedTotal != 0 {
			t.Errorf("a live consumer's batches were taken over: %+v", s)
		}
	})
}

package usagecounter

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/counters"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/engine"
	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

// BenchmarkSyncTx is the counter suite's sync request as a run drives it, on the shared test
// server (suitetest.BenchRequests): the pool's acquire, BEGIN, the claim and the four counter
// UPDATEs, COMMIT. Its allocs/op and cpu-µs/op are the client's cost of a request (ns/op is
// mostly the server's, and the machine's); with one worker the request path alone, with 16
// the scheduling of goroutines that wait on their connections too.
func BenchmarkSyncTx(b *testing.B) {
	for _, workers := range []int{1, 16} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			suitetest.BenchRequests(b, New(), testkit.Sync, testkit.Config{HotKeys: 1, Concurrency: workers, Seed: 1}, workers)
		})
	}
}

// BenchmarkOutboxTx is the counter suite's outbox request as a run drives it
// (suitetest.BenchRequests): BEGIN, the claim, the INSERT of its four deltas into the outbox,
// COMMIT, with the outbox's flush loop applying them on its own connection beside.
func BenchmarkOutboxTx(b *testing.B) {
	suitetest.BenchRequests(b, New(), counters.Outbox, testkit.Config{HotKeys: 1, Concurrency: 16, Seed: 1,
		FlushBatchSize: 1000, FlushInterval: 50 * time.Millisecond}, 16)
}

// BenchmarkEnqueue is the async-compact request's enqueue as a run's op makes it: the
// request's record (Suite.Records) handed to the in-memory queue as one unit, with the
// suite's key, merge and order, compacted by the queue's two workers into batches of 1,000
// that a flusher takes and writes nothing of. Its allocs/op are the enqueue path's and the
// workers' compaction's per request (the process's: both are counted).
func BenchmarkEnqueue(b *testing.B) {
	s := New()
	r := engine.Standalone{Mode: testkit.AsyncCompact, Config: testkit.Config{HotKeys: 1, Seed: 1}}.Run(b.Context(), nil)
	discard := queue.FlusherFunc[counters.Record](func(context.Context, []counters.Record) (queue.FlushResult, error) {
		return queue.FlushResult{SQLOps: 1}, nil
	})
	q, err := queue.New(discard, queue.Options[counters.Key, counters.Record]{
		Key: func(rec counters.Record) counters.Key { return rec.Key }, Merge: (*counters.Record).Merge,
		Compare: counters.CompareKeys, Spread: true, Compaction: true, Workers: 2, BatchSize: 1000,
		FullPolicy: queue.PolicyBlock, // a producer ahead of the workers waits: the queue's path, never an inline write
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	stop := suitetest.CPUPerOp(b)
	for i := range int64(b.N) {
		if _, err := q.EnqueueAll(ctx, s.Records(r, nil, i)); err != nil {
			b.Fatal(err)
		}
	}
	if err := q.Close(ctx); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	stop()
	if m := q.Metrics(); m.FlushedTotal != int64(b.N) {
		b.Fatalf("%d of %d records flushed", m.FlushedTotal, b.N)
	}
}

// BenchmarkFlushBatch is one queue batch written by the suite's writer through the queue's
// flusher on a pool of the shared test server (TxFlusher's Stage: the claim and the counter
// UPDATEs, as a pipelined worker stages a batch), then rolled back, so that every op claims
// the same requests afresh: async-compact's batch of 1,000 requests, compacted as the queue
// compacts it (one record, one pipelined round trip: the usage rows' INSERT and one UPDATE per
// hot table), and async's of 100 (a COPY of the usage rows, then each of the 400 counter
// UPDATEs in its own round trip). allocs/op and cpu-µs/op are the client's per batch.
func BenchmarkFlushBatch(b *testing.B) {
	for _, c := range []struct {
		mode     testkit.Mode
		requests int64
	}{{testkit.AsyncCompact, 1000}, {testkit.Async, 100}} {
		b.Run(fmt.Sprintf("mode=%s/requests=%d", c.mode, c.requests), func(b *testing.B) {
			ctx := b.Context()
			s := New()
			target := testdb.New(b, s.Info().SQL)
			pool, err := target.NewPool(ctx, database.PoolOptions{MaxConns: 2, AppName: "hotspotkit-flush"})
			if err != nil {
				b.Fatal(err)
			}
			defer pool.Close()
			r := engine.Standalone{Mode: c.mode, Config: testkit.Config{HotKeys: 1, Seed: 1}}.Run(ctx, target.Target())
			if err := s.Seed(ctx, r); err != nil {
				b.Fatal(err)
			}
			compact := c.mode == testkit.AsyncCompact
			var batch []counters.Record
			for i := range c.requests {
				batch = append(batch, s.Records(r, nil, i)...)
			}
			if compact {
				batch = queue.Compact(batch, func(rec counters.Record) counters.Key { return rec.Key }, (*counters.Record).Merge, counters.CompareKeys)
			}
			f := queue.TxFlusher(sqldb.PgxPool(pool), s.Writer(r, compact)).(queue.StagedFlusher[counters.Record])
			stage := func() {
				st, err := f.Stage(ctx, batch)
				if err != nil {
					b.Fatal(err)
				}
				st.Rollback(ctx)
			}
			stage() // the connection opened and its statements prepared, out of the measurement
			b.ReportAllocs()
			b.ResetTimer()
			stop := suitetest.CPUPerOp(b)
			for range b.N {
				stage()
			}
			b.StopTimer()
			stop()
		})
	}
}

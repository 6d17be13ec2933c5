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

	"github.com/hotspotkit/hotspotkit/internal/testhelp/redistest"
	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit/servers/redisserver"
)

// startCluster starts a Redis Cluster of 3 masters (and replicas masters each) for one test,
// and returns it with a client; skipped when redis-server is not installed (failed in CI).
func startCluster(t *testing.T, replicas int) (*redisserver.Cluster, *redis.ClusterClient) {
	t.Helper()
	redistest.Need(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cfg := redisserver.ClusterConfig{Masters: 3, Replicas: replicas}
	if replicas > 0 {
		cfg.Persist = redisserver.PersistAlways
	}
	c, err := redisserver.StartCluster(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	o := c.ClusterOptions()
	o.PoolSize = 32
	rdb := redis.NewClusterClient(o)
	t.Cleanup(func() { rdb.Close() })
	return c, rdb
}

// TestOnACluster: on a 3-master Redis Cluster, one stream (its scripts touch the stream and
// its counters: CROSSSLOT unless they share a slot) and six shards spread over the masters,
// consumed by two consumers in each key's order; a consumer killed and its shards taken
// over; a shard's slot moved to another master while records are produced and consumed.
// Every record is applied once.
func TestOnACluster(t *testing.T) {
	c, rdb := startCluster(t, 0)
	t.Run("one-stream", func(t *testing.T) {
		e := newEnv(t, rdb)
		o := e.options(RoleBoth)
		o.Fresh, o.Workers = true, 2
		q := e.start(o)
		want := enqueue(t, q, 1000)
		e.close(q)
		if total, records := e.totals(); total != want || records != 1000 {
			t.Fatalf("totals %d/%d, want %d/1000", total, records, want)
		}
		if rs, err := q.RunStats(context.Background()); err != nil || rs.Accepted != 1000 || rs.Acked != 1000 {
			t.Errorf("run stats %+v %v", rs, err)
		}
	})
	t.Run("six-shards", func(t *testing.T) {
		masters := map[string]bool{}
		for _, s := range shardStreams("test:x", 6) {
			for _, k := range shardKeys(s).all() {
				c, err := rdb.MasterForKey(context.Background(), k)
				if err != nil {
					t.Fatal(err)
				}
				masters[c.Options().Addr] = true
			}
		}
		if len(masters) < 2 {
			t.Errorf("six shards' keys on %d masters", len(masters))
		}
		shardsInOrder(t, rdb, postgres)
	})
	t.Run("killed-consumer", func(t *testing.T) {
		killedConsumerTakenOver(t, rdb, postgres, func() redis.UniversalClient { return redis.NewClusterClient(rdb.Options()) })
	})
	t.Run("reshard", func(t *testing.T) {
		// A stream whose shard 1 lies in the last 60 slots of master 0 (0..5460), so that
		// moving those 60 moves it.
		stream := ""
		for i := 0; stream == ""; i++ {
			s := fmt.Sprintf("test:reshard:%d", i)
			if slot := slotOf(shardStreams(s, 6)[1]); slot >= 5461-60 && slot < 5461 {
				stream = s
			}
		}
		slotsMoveMidRun(t, rdb, stream, func(ctx context.Context) error { return c.Reshard(ctx, 0, 1, 60) })
	})
}

// logWriter records each record's N (unique per record) and how often it was written.
type logWriter struct{}

func (logWriter) WriteBatch(ctx context.Context, tx sqldb.Tx, recs []rec) (int, error) {
	ns := make([]int64, len(recs))
	for i, r := range recs {
		ns[i] = r.N
	}
	_, err := tx.Exec(ctx, `INSERT INTO q_log (n, times) SELECT unnest($1::int8[]), 1
		ON CONFLICT (n) DO UPDATE SET times = q_log.times + 1`, ns)
	return 1, err
}

// TestClusterFailoverMidRun: six shards produced and consumed while a master with
// appendfsync always is killed and its replica promoted. Every record queued is written
// exactly once; a record whose enqueue had an unknown outcome at most once.
func TestClusterFailoverMidRun(t *testing.T) {
	c, rdb := startCluster(t, 1)
	slotsMoveMidRun(t, rdb, "", func(ctx context.Context) error { return c.Failover(ctx, 0) })
}

func slotsMoveMidRun(t *testing.T, rdb *redis.ClusterClient, stream string, move func(ctx context.Context) error) {
	e := newEnv(t, rdb)
	if stream != "" {
		e.stream = stream
	}
	ctx := context.Background()
	if _, err := e.admin.Exec(ctx, `CREATE TABLE q_log (n int8 PRIMARY KEY, times int NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	o := e.shardOptions(RoleBoth, 6)
	o.Fresh, o.Writer, o.ReclaimIdle = true, logWriter{}, 2*time.Second
	q := e.start(o)

	const n = 2000
	var queued, unknown sync.Map
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > n {
					return
				}
				out, err := q.Enqueue(ctx, rec{Slot: int(i % 7), N: i, Count: 1})
				switch {
				case err == nil && out == queue.Queued:
					queued.Store(i, true)
				case errors.Is(err, ErrOutcomeUnknown):
					unknown.Store(i, true)
				default:
					t.Errorf("enqueue %d: %v %v", i, out, err)
				}
				time.Sleep(time.Millisecond) // spread the enqueues over the move
			}
		}()
	}
	for next.Load() < n/3 {
		time.Sleep(5 * time.Millisecond)
	}
	moved := time.Now()
	if err := move(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("slots moved in %s, at record %d", time.Since(moved).Round(time.Millisecond), next.Load())
	wg.Wait()
	e.close(q)

	rows, err := e.admin.Query(ctx, `SELECT n, times FROM q_log`)
	if err != nil {
		t.Fatal(err)
	}
	written := map[int64]int{}
	for rows.Next() {
		var v int64
		var times int
		if err := rows.Scan(&v, &times); err != nil {
			t.Fatal(err)
		}
		written[v] = times
	}
	var lost, unknowns int
	queued.Range(func(k, _ any) bool {
		if written[k.(int64)] == 0 {
			lost++
		}
		return true
	})
	unknown.Range(func(k, _ any) bool { unknowns++; return true })
	for v, times := range written {
		_, isQueued := queued.Load(v)
		_, isUnknown := unknown.Load(v)
		if times != 1 || !isQueued && !isUnknown {
			t.Errorf("record %d written %d times (queued %v, outcome unknown %v)", v, times, isQueued, isUnknown)
		}
	}
	t.Logf("%d records written, %d with an unknown outcome, %d queued and lost", len(written), unknowns, lost)
	if lost > 0 {
		t.Errorf("%d queued records lost", lost)
	}
	rs, err := q.RunStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rs.Length != 0 || rs.Acked != rs.Accepted || rs.DeadLettered != 0 {
		t.Errorf("run stats %+v", rs)
	}
}

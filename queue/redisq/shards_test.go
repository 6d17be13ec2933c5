package redisq

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/queue/redisq/redisqtest"
)

func TestShardStreamsSpreadOverTheSlots(t *testing.T) {
	for _, n := range []int{1, 2, 3, 6, 16} {
		streams := shardStreams("hotspotkit:s:0:async-compact", n)
		if len(streams) != n {
			t.Fatalf("%d shards: %v", n, streams)
		}
		for i, s := range streams {
			k := shardKeys(s)
			for _, d := range k.all() {
				if slotOf(d) != slotOf(s) {
					t.Errorf("%s: %s in slot %d, the stream in %d", s, d, slotOf(d), slotOf(s))
				}
			}
			if lo, hi := i*clusterSlots/n, (i+1)*clusterSlots/n; n > 1 && (slotOf(s) < lo || slotOf(s) >= hi) {
				t.Errorf("shard %d of %d (%s) in slot %d, want [%d, %d)", i, n, s, slotOf(s), lo, hi)
			}
		}
	}
	// The keys of one stream hash like the bare stream name, which is kept as it is.
	if k := shardKeys("a:b"); k.stream != "a:b" || k.stats != "{a:b}:stats" || slotOf("a:b") != slotOf(k.stats) {
		t.Errorf("keys of a:b: %+v", k)
	}
	if k := shardKeys("x{t}y"); k.dlq != "x{t}y:dlq" {
		t.Errorf("a tagged stream's keys: %+v", k)
	}
	// Known slots (CLUSTER KEYSLOT): "foo" 12182, "{user1000}.following" 3443.
	if slotOf("foo") != 12182 || slotOf("{user1000}.following") != 3443 {
		t.Errorf("slotOf: foo %d, {user1000}.following %d", slotOf("foo"), slotOf("{user1000}.following"))
	}
	for _, bad := range []string{"a{}b", "a}{"} {
		if err := checkStreamName(bad, 1); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if err := checkStreamName("a{t}", 3); err == nil {
		t.Errorf("a hash tag in a sharded stream's name accepted")
	}
}

// shardEnv is a queue of several shards: records of 7 slot keys, each key's records enqueued
// in order by one goroutine.
func (e *env) shardOptions(role Role, shards int) Options[int, rec] {
	o := e.options(role)
	o.Shards, o.ShardLease = shards, 300*time.Millisecond
	return o
}

// enqueueInOrder offers n records over 7 slots, each slot's records from one goroutine in
// increasing N, some as groups spanning slots (and so shards); it returns the sum of N.
func enqueueInOrder(t *testing.T, q *Queue[int, rec], n int) int64 {
	t.Helper()
	var wg sync.WaitGroup
	for slot := range 7 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := slot; i < n; i += 7 {
				out, err := q.Enqueue(context.Background(), rec{Slot: slot, N: int64(i + 1), Count: 1})
				if err != nil || out != queue.Queued {
					t.Errorf("enqueue: %v %v", out, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return int64(n) * int64(n+1) / 2
}

// slotsOnShards reads every shard's stream and returns, per slot key, the shards its entries
// are on.
func slotsOnShards(t *testing.T, rdb redis.UniversalClient, q *Queue[int, rec]) map[int]map[string]bool {
	t.Helper()
	out := map[int]map[string]bool{}
	for _, s := range q.Streams() {
		msgs, err := rdb.XRange(context.Background(), s, "-", "+").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			var r rec
			if err := json.Unmarshal([]byte(m.Values["d"].(string)), &r); err != nil {
				t.Fatal(err)
			}
			if out[r.Slot] == nil {
				out[r.Slot] = map[string]bool{}
			}
			out[r.Slot][s] = true
		}
	}
	return out
}

// TestShardsKeepAKeyOnOneShardInOrder: six shards, two consumers sharing them: each key's
// records are on one shard and written in order; everything is applied once; the run-wide
// counters sum over the shards; the leases are released at Close.
func TestShardsKeepAKeyOnOneShardInOrder(t *testing.T) {
	everyDB(t, func(t *testing.T, rdb *redis.Client, db *testDB) { shardsInOrder(t, rdb, db) })
}

// shardRecords is the shard tests' number of records.
const shardRecords = 1400

// produceShards starts a run on six shards (Fresh) and has a producer enqueue shardRecords
// records in each key's order; it returns the sum of their N.
func (e *env) produceShards() (*Queue[int, rec], int64) {
	po := e.shardOptions(RoleProducer, 6)
	po.Fresh = true
	p := e.start(po)
	want := enqueueInOrder(e.t, p, shardRecords)
	e.close(p)
	return p, want
}

func shardsInOrder(t *testing.T, rdb redis.UniversalClient, db *testDB) {
	e := newEnvOn(t, rdb, db)
	p, want := e.produceShards()
	const n = shardRecords
	used := map[string]bool{}
	for slot, shards := range slotsOnShards(t, rdb, p) {
		if len(shards) != 1 {
			t.Errorf("slot %d on %d shards", slot, len(shards))
		}
		for s := range shards {
			used[s] = true
		}
	}
	if len(used) < 3 {
		t.Errorf("7 keys on %d of 6 shards", len(used))
	}

	w := &ordered{w: e.writer, last: map[int]int64{}}
	var qs []*Queue[int, rec]
	for _, name := range []string{"A", "B"} {
		o := e.shardOptions(RoleConsumer, 6)
		// A lease that outlasts a busy machine's stalls: no shard changes hands but by
		// giving it back, after its batch.
		o.Consumer, o.Writer, o.ShardLease = name, w, 2*time.Second
		qs = append(qs, e.start(o))
	}
	for _, q := range qs {
		e.close(q)
	}
	if total, records := e.totals(); total != want || records != n {
		t.Fatalf("totals %d/%d, want %d/%d", total, records, want, n)
	}
	var acked, reclaimed int64
	for _, q := range qs {
		acked += q.StreamMetrics().AckedTotal
		reclaimed += q.StreamMetrics().ReclaimedTotal
	}
	// Order holds across batches while a shard's reader keeps it or hands it over; a batch
	// reclaimed (a lease lost to a stall) may come after later ones.
	if w.outOfOrder != 0 && reclaimed == 0 {
		t.Errorf("%d records written out of their key's order", w.outOfOrder)
	}
	rs, err := ReadRunStats(context.Background(), rdb, e.stream, DefaultGroup, 6)
	if err != nil {
		t.Fatal(err)
	}
	if acked != n || rs.Accepted != n || rs.Acked != n || rs.Applied+rs.Duplicate != n || rs.Length != 0 || rs.Pending != 0 {
		t.Errorf("acked %d, run stats %+v", acked, rs)
	}
	if got := e.appliedIDsOf(qs[0].Streams()); got != n {
		t.Errorf("%d applied ids, want %d", got, n)
	}
	ctx := context.Background()
	for _, s := range qs[0].Streams() {
		if v, err := rdb.Exists(ctx, shardKeys(s).lease).Result(); err != nil || v != 0 {
			t.Errorf("lease of %s left after Close (%v)", s, err)
		}
	}
	if v, _ := rdb.ZCard(ctx, qs[0].members).Result(); v != 0 {
		t.Errorf("%d consumers left registered after Close", v)
	}
}

// TestShardsOfAKilledConsumerAreTakenOver: consumer A owns every shard and dies (its client
// closed, two of its readers frozen: one holding a batch read, one a batch committed and not
// acknowledged); B takes the shards over once A's leases expire, reclaims what A held, and
// every record is applied once. A, thawed, finds its batches applied.
//
// On a redis-server only (TestOnACluster runs it on a cluster too): a real server's clock
// expires the leases, where miniredis's moves only when told. On both databases.
func TestShardsOfAKilledConsumerAreTakenOver(t *testing.T) {
	for _, db := range []*testDB{postgres, mariadb} {
		t.Run(db.name, func(t *testing.T) {
			rdb := onRedisServer(t)
			opts := *rdb.Options()
			killedConsumerTakenOver(t, rdb, db, func() redis.UniversalClient { return redis.NewClient(&opts) })
		})
	}
}

func killedConsumerTakenOver(t *testing.T, rdb redis.UniversalClient, db *testDB, newClient func() redis.UniversalClient) {
	e := newEnvOn(t, rdb, db)
	_, want := e.produceShards()
	const n = shardRecords

	frozen := make(chan string, 2)
	thaw := make(chan struct{})
	var thawOnce sync.Once
	thawAll := func() { thawOnce.Do(func() { close(thaw) }) }
	var mu sync.Mutex
	points := map[string]string{} // consumer → where it froze
	t.Cleanup(redisqtest.SetHook(func(consumer, point string, ids []string) {
		if !strings.HasPrefix(consumer, "A-") {
			return
		}
		mu.Lock()
		freeze := false
		if _, seen := points[consumer]; !seen && !hasValue(points, point) {
			freeze, points[consumer] = true, point
		}
		mu.Unlock()
		if freeze {
			frozen <- consumer + " at " + point
			<-thaw
		}
	}))
	aClient := newClient()
	ao := e.shardOptions(RoleConsumer, 6)
	ao.Consumer, ao.Client = "A", aClient
	a := e.start(ao)
	t.Cleanup(thawAll) // before a's Close in the cleanups, which run last first
	for range 2 {
		select {
		case where := <-frozen:
			t.Logf("A froze %s", where)
		case <-time.After(30 * time.Second):
			t.Fatal("A's readers never froze")
		}
	}
	_ = aClient.Close() // A is gone: no renewal, no acknowledgement
	killed := time.Now()

	bo := e.shardOptions(RoleConsumer, 6)
	bo.Consumer = "B"
	b := e.start(bo)
	e.close(b) // returns once every shard is empty: B took all of them over
	t.Logf("B drained every shard %s after A died (lease %s)", time.Since(killed).Round(time.Millisecond), bo.ShardLease)
	thawAll()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond) // its Redis is gone
	_ = a.Close(ctx)
	cancel()

	if total, records := e.totals(); total != want || records != n {
		t.Fatalf("totals %d/%d, want %d/%d", total, records, want, n)
	}
	sb := b.StreamMetrics()
	if sb.ReclaimedTotal == 0 || sb.DuplicateSkippedTotal == 0 {
		t.Errorf("B: %+v, want entries of A reclaimed, and A's committed batch skipped", sb)
	}
	if got := e.appliedIDsOf(b.Streams()); got != n {
		t.Errorf("%d applied ids, want %d", got, n)
	}
	rs, _ := b.RunStats(context.Background())
	if rs.Accepted != n || rs.Acked != n || rs.Applied+rs.Duplicate != n || rs.Length != 0 {
		t.Errorf("run stats %+v", rs)
	}
}

func hasValue(m map[string]string, v string) bool {
	for _, x := range m {
		if x == v {
			return true
		}
	}
	return false
}

func (e *env) appliedIDsOf(streams []string) int64 {
	e.t.Helper()
	var n int64
	in, args := e.db.inStreams(streams)
	if err := e.admin.QueryRow(context.Background(), `SELECT count(*) FROM queue_applied_entries WHERE `+in, args...).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

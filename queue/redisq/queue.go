package redisq

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotspotkit/hotspotkit/hist"
	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/queue/internal/core"
)

// ErrClosed is returned by Enqueue once Close has begun.
var ErrClosed = errors.New("redisq: closed")

// ErrOutcomeUnknown wraps an Enqueue error after which Redis may or may not have added the
// record (the connection broke, the call timed out): the caller must look the record up
// instead of assuming either.
var ErrOutcomeUnknown = errors.New("redisq: outcome unknown")

// errNotProducing is returned by Enqueue in a consumer-only process.
var errNotProducing = errors.New("redisq: this process only consumes (role consumer)")

// Queue is the Redis-streams backend. All methods are safe for concurrent use.
type Queue[K comparable, T any] struct {
	c      counters
	o      Options[K, T]
	rdb    redis.UniversalClient
	shards []*shard
	// members is the sorted set of the queue's live consumers (Shards > 1), member this
	// process's name in it and in the shards' leases.
	members, member string
	applied         applied // the applied-ids table's statements, in DB's dialect
	// token sets this queue's acknowledging calls apart from another process's that uses
	// the same consumer names (acknowledge).
	token string
	// ackCalls numbers the acknowledging calls of all its consumers, for their tokens: a
	// shard's reader taken again has the name of an earlier one, and must not be answered
	// with that one's kept reply.
	ackCalls atomic.Int64

	// producing
	sendWG sync.WaitGroup
	inline queue.Flusher[T] // PolicySync: the caller's own write

	// consuming
	gate     *gate
	workersM sync.Mutex
	workers  []*consumer[K, T]
	killed   int
	wg       sync.WaitGroup
	stopC    chan struct{} // closed when the drain is complete: consumers leave

	lagMu sync.Mutex
	lag   *hist.Histogram

	life  *core.Lifecycle // Close's handshake; reads and flushes run under life.Ctx()
	final atomic.Pointer[snapshot]
	last  atomic.Pointer[streamState]
}

// StreamMetrics are the backend's own counters; see the package doc for each field. The
// report's results.Stream converts from it.
type StreamMetrics struct {
	Length                int64 `json:"length"`
	PendingEntries        int64 `json:"pending_entries"`
	AckedTotal            int64 `json:"acked_total"`
	ReclaimedTotal        int64 `json:"reclaimed_total"`
	RedeliveredTotal      int64 `json:"redelivered_total"`
	DeadLetteredTotal     int64 `json:"dead_lettered_total"`
	DuplicateSkippedTotal int64 `json:"duplicate_skipped_total"`
}

// RunStats are the run-wide counters kept in Redis next to the stream: what every process of
// the run did together, including processes that were killed.
type RunStats struct {
	// Accepted entries (XADDs), Acked entries (acknowledged and deleted), and how they were
	// acknowledged: Applied by the flush that acknowledged them, Duplicate (already applied
	// by an earlier flush), Fallback (written on their own), DeadLettered.
	Accepted, Acked, Applied, Duplicate, Fallback, DeadLettered int64
	// Length is XLEN, Pending the group's pending count, DeadLetterLength the dead-letter
	// stream's length.
	Length, Pending, DeadLetterLength int64
}

// counters are the ones every backend keeps, and the stream's own.
type counters struct {
	core.Counters
	_            [64]byte
	acked        atomic.Int64
	reclaimed    atomic.Int64
	redelivered  atomic.Int64
	deadLettered atomic.Int64
	duplicates   atomic.Int64
}

type snapshot struct {
	m queue.Metrics
	s StreamMetrics
}

type streamState struct{ length, pending int64 }

// New validates o, prepares the stream and its consumer group, and starts the producers,
// consumers and reclaimer the role needs. Close it to stop them.
func New[K comparable, T any](ctx context.Context, o Options[K, T]) (*Queue[K, T], error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	q := &Queue[K, T]{
		o:     o,
		rdb:   o.Client,
		token: strconv.FormatInt(time.Now().UnixNano(), 36),
		gate:  newGate(),
		stopC: make(chan struct{}),
		life:  core.NewLifecycle(),
		lag:   hist.New(),
	}
	if o.DB != nil { // a producer alone may have none: it touches no table
		if q.applied, err = newApplied(o.DB.Dialect(), o.AppliedTable); err != nil {
			return nil, err
		}
	}
	for i, s := range shardStreams(o.Stream, o.Shards) {
		if q.applied != nil {
			if err := q.applied.holds(s); err != nil {
				return nil, err
			}
		}
		q.shards = append(q.shards, &shard{i: i, keys: shardKeys(s)})
	}
	q.members = tagged(o.Stream) + ":consumers"
	q.member = o.Consumer + "/" + q.token
	q.inline = o.Inline
	if q.inline == nil && o.DB != nil && o.Writer != nil {
		q.inline = queue.TxFlusher(o.DB, o.Writer)
	}
	if o.Fresh {
		if err := q.deleteKeys(ctx, true); err != nil {
			return nil, fmt.Errorf("redisq: resetting %s: %w", o.Stream, err)
		}
	}
	for _, sh := range q.shards {
		if err := q.ensureGroup(ctx, sh); err != nil {
			return nil, err
		}
	}
	if o.Role.consumes() {
		if err := q.ensureAppliedTable(ctx); err != nil {
			return nil, err
		}
	}
	for _, script := range []*redis.Script{addScript, ackScript, deadLetterScript, renewScript, leaseScript, releaseScript, heartbeatScript} {
		if err := script.Load(ctx, q.rdb).Err(); err != nil {
			return nil, fmt.Errorf("redisq: loading scripts: %w", err)
		}
	}
	if o.Role.produces() {
		// The senders are spread over the shards, at least one each.
		per := max((o.Senders+len(q.shards)-1)/len(q.shards), 1)
		for _, sh := range q.shards {
			sh.adds = make(chan *addReq, per*o.SendBatch)
			q.sendWG.Add(per)
			for j := range per {
				go q.send(sh, fmt.Sprintf("p:%s:%s:%d", o.Consumer, q.token, j))
			}
		}
	}
	if o.Role.consumes() {
		if len(q.shards) == 1 {
			for i := range o.Workers {
				q.startWorker(fmt.Sprintf("%s-w%d", o.Consumer, i), q.shards[0])
			}
			q.wg.Add(1)
			go q.reclaim(q.shards[0])
		} else {
			q.wg.Add(1)
			go q.balance()
		}
		if o.PruneInterval > 0 {
			q.wg.Add(1)
			go q.prune()
		}
	}
	return q, nil
}

// ensureGroup creates a shard's consumer group (and its stream) unless it exists. The group
// starts at 0 so that entries added before it existed are delivered too.
func (q *Queue[K, T]) ensureGroup(ctx context.Context, sh *shard) error {
	err := q.rdb.XGroupCreateMkStream(ctx, sh.keys.stream, q.o.Group, "0").Err()
	if err != nil && !strings.HasPrefix(err.Error(), "BUSYGROUP") {
		return fmt.Errorf("redisq: creating group %s on %s: %w", q.o.Group, sh.keys.stream, err)
	}
	return nil
}

func isNoGroup(err error) bool { return err != nil && strings.HasPrefix(err.Error(), "NOGROUP") }

// Stream is the stream key: Options.Stream, or with Shards > 1 the first shard's stream.
func (q *Queue[K, T]) Stream() string { return q.shards[0].keys.stream }

// Streams are the shards' stream keys, Options.Stream alone for one shard. They are also
// the stream column of the applied-ids table.
func (q *Queue[K, T]) Streams() []string { return q.eachShard(func(k keys) string { return k.stream }) }

// DeadLetterStream is the dead-letter stream key (the first shard's with Shards > 1).
func (q *Queue[K, T]) DeadLetterStream() string { return q.shards[0].keys.dlq }

// eachShard returns key(the shard's keys) for every shard.
func (q *Queue[K, T]) eachShard(key func(keys) string) []string {
	out := make([]string, len(q.shards))
	for i, sh := range q.shards {
		out[i] = key(sh.keys)
	}
	return out
}

// Close stops intake (later Enqueue calls get ErrClosed), waits for the records in flight to
// be answered and, in a consuming process, for the stream to be empty: every entry of the
// run acknowledged (or dead-lettered), by this process or another. Then it stops the
// consumers. When ctx expires first, reads and flushes are cancelled — their entries stay
// pending in Redis, nothing is lost — and in a process running both roles the entries left
// are counted abandoned and reported in the error. A producer-only process does not wait for
// consumers. Close is idempotent.
func (q *Queue[K, T]) Close(ctx context.Context) error {
	return q.life.Close(ctx, &q.c.Counters, q.gate.close, q.drain)
}

// drain runs once no Enqueue call is in flight: the senders finish, and a consuming process
// waits for the streams to be empty before its consumers leave (keeping the shards it owns,
// and taking those that others leave).
func (q *Queue[K, T]) drain(ctx context.Context) error {
	if q.o.Role.produces() {
		for _, sh := range q.shards {
			close(sh.adds) // nobody can send any more: no Enqueue is in flight and the bit is set
		}
		q.sendWG.Wait()
	}
	var err error
	if q.o.Role.consumes() {
		for !q.aborted() {
			st, serr := q.streamState(ctx)
			if serr == nil && st.length == 0 {
				break
			}
			select {
			case <-time.After(20 * time.Millisecond):
			case <-q.life.AbortC():
			}
		}
		q.workersM.Lock() // KillConsumer starts no replacement once stopC is closed
		close(q.stopC)
		q.workersM.Unlock()
		q.wg.Wait()
		if q.aborted() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			st, serr := q.streamState(sctx)
			cancel()
			switch {
			case serr != nil:
				err = fmt.Errorf("redisq: close: the drain was cut short and the stream cannot be read: %w", serr)
			case st.length > 0:
				if q.o.Role == RoleBoth {
					q.c.Abandoned.Add(st.length)
				}
				err = fmt.Errorf("redisq: close: %d entries left unacknowledged in %s: %w", st.length, q.o.Stream, context.Cause(ctx))
			}
		}
	}
	q.snapshotFinal()
	return err
}

func (q *Queue[K, T]) aborted() bool { return q.life.Aborted() }

func (q *Queue[K, T]) stopping() bool { return core.IsClosed(q.stopC) || q.life.Aborted() }

func (q *Queue[K, T]) closing() bool { return q.life.Closing() }

// streamState reads XLEN and the group's pending count, summed over the shards, and
// remembers them.
func (q *Queue[K, T]) streamState(ctx context.Context) (streamState, error) {
	pipe := q.rdb.Pipeline()
	xlens := make([]*redis.IntCmd, len(q.shards))
	pends := make([]*redis.XPendingCmd, len(q.shards))
	for i, sh := range q.shards {
		xlens[i] = pipe.XLen(ctx, sh.keys.stream)
		pends[i] = pipe.XPending(ctx, sh.keys.stream, q.o.Group)
	}
	_, _ = pipe.Exec(ctx)
	var st streamState
	for i := range q.shards {
		if err := xlens[i].Err(); err != nil {
			return streamState{}, err
		}
		st.length += xlens[i].Val()
		if err := pends[i].Err(); err == nil {
			st.pending += pends[i].Val().Count
		} else if !isNoGroup(err) && !errors.Is(err, redis.Nil) {
			return streamState{}, err
		}
	}
	q.last.Store(&st)
	return st, nil
}

// state returns the stream's current state, or the last one read when Redis does not answer
// quickly (the monitor calls Metrics several times a second and must not stall).
func (q *Queue[K, T]) state() streamState {
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if st, err := q.streamState(ctx); err == nil {
		return st
	}
	if st := q.last.Load(); st != nil {
		return *st
	}
	return streamState{}
}

func (q *Queue[K, T]) snapshotFinal() {
	st := q.state()
	q.final.Store(&snapshot{m: q.metrics(st), s: q.streamMetrics(st)})
}

// Metrics returns the counters (see the package doc); after Close they are final and no
// longer read Redis.
func (q *Queue[K, T]) Metrics() queue.Metrics {
	if f := q.final.Load(); f != nil {
		return f.m
	}
	return q.metrics(q.state())
}

func (q *Queue[K, T]) metrics(st streamState) queue.Metrics {
	return queue.Metrics(q.c.Metrics(int64(q.o.Capacity), max(st.length-st.pending, 0), st.length))
}

// StreamMetrics returns the backend's own counters; after Close they are final.
func (q *Queue[K, T]) StreamMetrics() StreamMetrics {
	if f := q.final.Load(); f != nil {
		return f.s
	}
	return q.streamMetrics(q.state())
}

func (q *Queue[K, T]) streamMetrics(st streamState) StreamMetrics {
	c := &q.c
	return StreamMetrics{
		Length:                st.length,
		PendingEntries:        st.pending,
		AckedTotal:            c.acked.Load(),
		ReclaimedTotal:        c.reclaimed.Load(),
		RedeliveredTotal:      c.redelivered.Load(),
		DeadLetteredTotal:     c.deadLettered.Load(),
		DuplicateSkippedTotal: c.duplicates.Load(),
	}
}

// RunStats reads the run-wide counters and lengths from Redis, summed over the shards.
func (q *Queue[K, T]) RunStats(ctx context.Context) (RunStats, error) {
	return ReadRunStats(ctx, q.rdb, q.o.Stream, q.o.Group, q.o.Shards)
}

// ReadRunStats reads the run-wide counters of the queue on stream (consumer group group,
// shards shards: Options.Stream, Group and Shards), summed over its shards; any process of
// the run can call it, with or without a Queue.
func ReadRunStats(ctx context.Context, rdb redis.UniversalClient, stream, group string, shards int) (RunStats, error) {
	var rs RunStats
	pipe := rdb.Pipeline()
	type reads struct {
		h         *redis.MapStringStringCmd
		xlen, dlq *redis.IntCmd
		pend      *redis.XPendingCmd
	}
	var all []reads
	for _, s := range shardStreams(stream, shards) {
		k := shardKeys(s)
		all = append(all, reads{h: pipe.HGetAll(ctx, k.stats), xlen: pipe.XLen(ctx, k.stream),
			dlq: pipe.XLen(ctx, k.dlq), pend: pipe.XPending(ctx, k.stream, group)})
	}
	_, _ = pipe.Exec(ctx)
	for _, r := range all {
		for _, err := range []error{r.h.Err(), r.xlen.Err(), r.dlq.Err()} {
			if err != nil {
				return rs, fmt.Errorf("redisq: reading the run's counters: %w", err)
			}
		}
		get := func(k string) int64 { n, _ := strconv.ParseInt(r.h.Val()[k], 10, 64); return n }
		rs.Accepted += get("accepted")
		rs.Acked += get("acked")
		rs.Applied += get("applied")
		rs.Duplicate += get("duplicate")
		rs.Fallback += get("fallback")
		rs.DeadLettered += get("dead_lettered")
		rs.Length += r.xlen.Val()
		rs.DeadLetterLength += r.dlq.Val()
		if r.pend.Err() == nil {
			rs.Pending += r.pend.Val().Count
		}
	}
	return rs, nil
}

// DeleteKeys removes the streams and their counters, and each dead-letter stream when it is
// empty (dead letters are evidence: they stay until someone looks). For a process that ran
// both roles on a Redis it shares, after the run was verified.
func (q *Queue[K, T]) DeleteKeys(ctx context.Context) error { return q.deleteKeys(ctx, false) }

// deleteKeys deletes every shard's keys, dead letters too when all or none are left, and the
// consumers' set. One DEL per shard: a cluster refuses a DEL of keys in several slots.
func (q *Queue[K, T]) deleteKeys(ctx context.Context, all bool) error {
	for _, sh := range q.shards {
		ks := []string{sh.keys.stream, sh.keys.stats, sh.keys.replies, sh.keys.lease}
		if all {
			ks = append(ks, sh.keys.dlq)
		} else if n, err := q.rdb.XLen(ctx, sh.keys.dlq).Result(); err != nil {
			return err
		} else if n == 0 {
			ks = append(ks, sh.keys.dlq)
		}
		if err := q.rdb.Del(ctx, ks...).Err(); err != nil {
			return err
		}
	}
	return q.rdb.Del(ctx, q.members).Err()
}

// PersistLag returns the persist-lag histogram (µs): for every record this process applied,
// commit time minus enqueue time (wall clocks, so it spans processes on one machine).
func (q *Queue[K, T]) PersistLag() *hist.Histogram {
	out := hist.New()
	q.lagMu.Lock()
	out.Merge(q.lag)
	q.lagMu.Unlock()
	return out
}

func (q *Queue[K, T]) recordLag(micros []int64) {
	q.lagMu.Lock()
	for _, v := range micros {
		q.lag.RecordMicros(max(v, 0))
	}
	q.lagMu.Unlock()
}

// Pause stops the consumers between batches (the stream then fills and the full policy is
// exercised). It returns once no consumer holds a batch or a read, which takes up to Block
// plus one flush. Pause after Close is a no-op.
func (q *Queue[K, T]) Pause() { q.gate.pause() }

// Resume lets paused consumers continue. Close resumes by itself.
func (q *Queue[K, T]) Resume() { q.gate.resume() }

// KillConsumer makes one consumer of this process die the way a killed process would: it
// stops at its next step without acknowledging what it holds (those entries are reclaimed
// after ReclaimIdle by the reclaimer, of this or another process), and a new consumer with a
// new name takes its place (on the same shard). It is fault injection: a drill of the reclaim
// path that kills no process (hotspotkit's kill-consumer fault).
func (q *Queue[K, T]) KillConsumer(ctx context.Context) (string, error) {
	if !q.o.Role.consumes() {
		return "", errors.New("redisq: this process runs no consumer")
	}
	q.workersM.Lock()
	if q.stopping() || len(q.workers) == 0 { // the drain is over, or no shard owned yet
		q.workersM.Unlock()
		return "", ErrClosed
	}
	victim := q.workers[0]
	q.killed++
	q.workersM.Unlock()
	victim.dead.Store(true)
	<-victim.done
	held := int64(0)
	if p, err := q.rdb.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: victim.sh.keys.stream, Group: q.o.Group,
		Start: "-", End: "+", Count: int64(q.o.BatchSize) * 2, Consumer: victim.name}).Result(); err == nil {
		held = int64(len(p))
	}
	name := fmt.Sprintf("%s.%d", victim.base, q.killed)
	q.workersM.Lock()
	replaced := !q.stopping() && !victim.leaving()
	if replaced {
		q.startWorkerLocked(name, victim.sh)
	}
	q.workersM.Unlock()
	msg := fmt.Sprintf("consumer %s killed holding %d unacknowledged entries (reclaimed after %s idle)", victim.name, held, q.o.ReclaimIdle)
	if replaced {
		msg += "; " + name + " took its place"
	}
	return msg, nil
}

func (q *Queue[K, T]) startWorker(name string, sh *shard) {
	q.workersM.Lock()
	q.startWorkerLocked(name, sh)
	q.workersM.Unlock()
}

// startWorkerLocked starts a consumer of shard sh named name, in the place of a dead one if
// there is one. With Shards > 1 it is the shard's reader.
func (q *Queue[K, T]) startWorkerLocked(name string, sh *shard) *consumer[K, T] {
	w := newConsumer(q, name, sh)
	if i := slices.IndexFunc(q.workers, func(c *consumer[K, T]) bool { return c.dead.Load() || c.leaving() }); i >= 0 {
		q.workers[i] = w
	} else {
		q.workers = append(q.workers, w)
	}
	if len(q.shards) > 1 {
		sh.reader = w
	}
	q.wg.Add(1)
	go w.run()
	return w
}

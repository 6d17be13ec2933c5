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

	"github.com/hotspotkit/hotspotkit/queue/internal/core"
	"github.com/hotspotkit/hotspotkit/queue/redisq/internal/testhook"
)

// ackTimeout bounds one acknowledgement script call.
const ackTimeout = 10 * time.Second

// The kinds an acknowledged entry can have (the ack script counts them apart).
const (
	kindApplied   = "f" // applied by the flush that acknowledges it
	kindDuplicate = "d" // its id was already in the applied-ids table
	kindFallback  = "s" // written in a transaction of its own after its batch failed
)

// entry is a stream entry on its way to the database.
type entry[T any] struct {
	id         string
	rec        T
	at         int64 // enqueue time, µs since the Unix epoch
	payload    string
	deliveries int64
	kind       string
}

// consumer reads, flushes and acknowledges entries of one shard under one consumer name.
// Workers read new entries; the reclaimer is a consumer too, fed by XAUTOCLAIM. With Shards >
// 1 a shard's one reader is both.
type consumer[K comparable, T any] struct {
	q      *Queue[K, T]
	sh     *shard
	name   string
	base   string        // name without the ".<n>" of a replacement (KillConsumer)
	dead   atomic.Bool   // KillConsumer: stop at the next step, acknowledge nothing more
	done   chan struct{} // closed when run returns
	leaveC chan struct{} // closed when it must stop after the batch in hand (shard given up)

	cursor      string // its XAUTOCLAIM cursor (a shard's reader)
	lastReclaim time.Time
}

func newConsumer[K comparable, T any](q *Queue[K, T], name string, sh *shard) *consumer[K, T] {
	base := name
	if i := strings.LastIndexByte(name, '.'); i > strings.LastIndexByte(name, '-') {
		base = name[:i]
	}
	return &consumer[K, T]{q: q, sh: sh, name: name, base: base, done: make(chan struct{}),
		leaveC: make(chan struct{}), cursor: "0-0", lastReclaim: time.Now()}
}

func (c *consumer[K, T]) leave()        { close(c.leaveC) }
func (c *consumer[K, T]) leaving() bool { return core.IsClosed(c.leaveC) }

// run is a worker: read a batch of new entries, flush it, acknowledge it, until Close has
// drained the stream (or given up), the worker was killed or its shard given up. A shard's
// reader (Shards > 1) reclaims its shard's idle entries between batches too.
func (c *consumer[K, T]) run() {
	q := c.q
	defer q.wg.Done()
	defer close(c.done)
	for !q.stopping() && !c.dead.Load() && !c.leaving() {
		if !q.gate.hold(q.stopC, c.leaveC) {
			return
		}
		msgs := c.readBatch()
		if len(msgs) > 0 && !c.dead.Load() {
			c.handle(msgs, nil)
		}
		if len(q.shards) > 1 && !c.dead.Load() {
			c.reclaimDue()
		}
		q.gate.release()
	}
}

// reclaimDue runs a reclaim pass on the reader's shard when one is due: every
// ReclaimInterval, or every quarter of ShardLease (for entries idle that long) while the
// shard is newly taken over.
func (c *consumer[K, T]) reclaimDue() {
	q := c.q
	interval, idle := q.o.ReclaimInterval, q.o.ReclaimIdle
	if time.Now().UnixMicro() < c.sh.fastUntil.Load() {
		interval, idle = min(interval, q.o.ShardLease/4), min(idle, q.o.ShardLease)
	}
	if time.Since(c.lastReclaim) < interval {
		return
	}
	c.lastReclaim = time.Now()
	c.cursor = c.reclaimPass(c.cursor, idle)
}

// readBatch reads up to BatchSize new entries: it blocks (at most Block) for the first, then
// keeps reading until the batch is full or FlushInterval has passed since its oldest record
// was enqueued.
func (c *consumer[K, T]) readBatch() []redis.XMessage {
	q := c.q
	var out []redis.XMessage
	var due time.Time
	for len(out) < q.o.BatchSize && !c.dead.Load() {
		block := q.o.Block
		if len(out) > 0 {
			block = time.Until(due)
			if block < time.Millisecond || q.closing() {
				break
			}
		}
		res, err := q.rdb.XReadGroup(q.life.Ctx(), &redis.XReadGroupArgs{
			Group: q.o.Group, Consumer: c.name, Streams: []string{c.sh.keys.stream, ">"},
			Count: int64(q.o.BatchSize - len(out)), Block: block, // block ≥ 1ms: never "forever"
		}).Result()
		if errors.Is(err, redis.Nil) {
			break
		}
		if err != nil {
			if isNoGroup(err) { // the run's creator reset the stream after we joined
				_ = q.ensureGroup(q.life.Ctx(), c.sh)
			}
			c.pause(q.o.RetryBackoff)
			break
		}
		for _, s := range res {
			out = append(out, s.Messages...)
		}
		if len(out) > 0 && due.IsZero() {
			due = time.UnixMicro(enqueuedAt(out[0])).Add(q.o.FlushInterval)
		}
	}
	return out
}

func enqueuedAt(m redis.XMessage) int64 {
	s, _ := m.Values["t"].(string)
	t, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Now().UnixMicro()
	}
	return t
}

// pause sleeps for d unless the queue is aborted first.
func (c *consumer[K, T]) pause(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.q.life.AbortC():
		return false
	}
}

// handle decodes msgs, dead-letters what cannot be decoded or was delivered too often, and
// flushes and acknowledges the rest. deliveries holds delivery counts for reclaimed entries
// (nil: first deliveries).
func (c *consumer[K, T]) handle(msgs []redis.XMessage, deliveries map[string]int64) {
	q := c.q
	batch := make([]entry[T], 0, len(msgs))
	var poison, overdue []entry[T]
	var reasons []string
	for _, m := range msgs {
		payload, _ := m.Values["d"].(string)
		e := entry[T]{id: m.ID, at: enqueuedAt(m), payload: payload, deliveries: 1}
		if n, ok := deliveries[m.ID]; ok {
			e.deliveries = n
		} else if deliveries != nil {
			e.deliveries = 2 // reclaimed, so delivered at least twice
		}
		rec, err := q.o.Codec.Decode([]byte(payload))
		switch {
		case err != nil:
			poison = append(poison, e)
			reasons = append(reasons, "decode: "+err.Error())
		case e.deliveries > int64(q.o.MaxDeliveries):
			e.rec = rec
			overdue = append(overdue, e)
		default:
			e.rec = rec
			batch = append(batch, e)
		}
	}
	for i := range poison {
		c.deadLetter(poison[i:i+1], reasons[i])
	}
	if len(overdue) > 0 {
		c.retire(overdue)
	}
	if len(batch) == 0 {
		return
	}
	for i := range batch {
		if batch[i].deliveries > 1 {
			q.c.redelivered.Add(1)
		}
	}
	c.hook(testhook.AfterRead, batch)
	if c.dead.Load() {
		return
	}
	done := c.flush(batch)
	if len(done) == 0 {
		return
	}
	c.hook(testhook.AfterCommit, done)
	if c.dead.Load() {
		return // committed, never acknowledged: the reclaimer skips them as duplicates
	}
	c.ack(done)
}

// hook calls the test hook (package redisqtest), if one is set.
func (c *consumer[K, T]) hook(point string, batch []entry[T]) {
	h := testhook.Get()
	if h == nil {
		return
	}
	ids := make([]string, len(batch))
	for i := range batch {
		ids[i] = batch[i].id
	}
	h(c.name, point, ids)
}

// flush writes batch in one transaction, retried MaxRetries times, then entry by entry. It
// returns the entries whose effect is committed (kind set), ready to acknowledge; entries it
// could not write stay pending for the reclaimer.
func (c *consumer[K, T]) flush(batch []entry[T]) []entry[T] {
	q := c.q
	defer c.keepAlive(batch)()
	write := func() error { return c.flushTx(batch, true) }
	wait := func(attempt int) bool {
		return !q.aborted() && !c.dead.Load() && c.pause(q.o.shared().RetryWait(attempt))
	}
	switch core.RetryBatch(&q.c.Counters, len(batch), q.o.MaxRetries, write, wait) {
	case core.BatchWritten:
		return batch
	case core.BatchGivenUp:
		return nil
	}
	done := batch[:0:0]
	for i := range batch {
		if q.aborted() || c.dead.Load() {
			break
		}
		one := batch[i : i+1]
		if err := c.flushTx(one, false); err != nil {
			continue // stays pending; the reclaimer retries it and dead-letters it in the end
		}
		if one[0].kind == kindApplied {
			one[0].kind = kindFallback
		}
		done = append(done, one[0])
	}
	return done
}

// keepAlive renews the batch's entries every ReclaimIdle/3 until the returned func is
// called, so that no reclaimer takes over a batch whose consumer is alive and flushing it
// (a long batch, retries with backoff). A consumer that dies stops renewing.
func (c *consumer[K, T]) keepAlive(batch []entry[T]) (stop func()) {
	q := c.q
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(max(q.o.ReclaimIdle/3, time.Millisecond))
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			if c.dead.Load() {
				return
			}
			ctx, cancel := context.WithTimeout(q.life.Ctx(), ackTimeout)
			_ = renewScript.Run(ctx, q.rdb, []string{c.sh.keys.stream}, q.o.Group, c.name,
				batch[0].id, batch[len(batch)-1].id, 2*len(batch)).Err()
			cancel()
		}
	}()
	return func() { close(done); wg.Wait() }
}

// flushTx is one flush transaction: record the ids, write the new records, commit. It sets
// each entry's kind. A batch flush (asBatch) is counted in the batch counters.
func (c *consumer[K, T]) flushTx(batch []entry[T], asBatch bool) (err error) {
	q := c.q
	ctx, cancel := q.o.shared().FlushContext(q.life.Ctx())
	defer cancel()
	tx, err := q.o.DB.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = tx.Rollback(rctx)
			cancel()
		}
	}()
	ids := make([]string, len(batch))
	for i := range batch {
		ids[i] = batch[i].id
	}
	isNew, ops, err := q.applied.record(ctx, tx, c.sh.keys.stream, ids)
	if err != nil {
		return fmt.Errorf("recording applied entry ids: %w", err)
	}
	recs := make([]T, 0, len(isNew))
	for i := range batch {
		batch[i].kind = kindDuplicate
		if isNew[batch[i].id] {
			batch[i].kind = kindApplied
			recs = append(recs, batch[i].rec)
		}
	}
	newRecords := len(recs)
	recs = c.arrange(recs)
	if len(recs) > 0 {
		n, err := q.o.Writer.WriteBatch(ctx, tx, recs)
		ops += n
		if err != nil {
			return fmt.Errorf("writing %d records: %w", len(recs), err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("committing: %w", err)
	}
	now := time.Now().UnixMicro()
	lags := make([]int64, 0, newRecords)
	for i := range batch {
		if batch[i].kind == kindApplied {
			lags = append(lags, now-batch[i].at)
		}
	}
	q.recordLag(lags)
	if asBatch {
		q.c.Batches.Add(1)
		q.c.SQLOps.Add(int64(ops))
		q.c.SQLRecords.Add(int64(len(recs)))
		q.c.Compacted.Add(int64(newRecords - len(recs)))
	}
	return nil
}

// arrange compacts recs per slot (Compaction) or sorts them stably by slot (Compare), so
// that concurrent consumers lock rows in one order.
func (c *consumer[K, T]) arrange(recs []T) []T {
	o := &c.q.o
	switch {
	case len(recs) == 0:
		return recs
	case o.Compaction:
		return core.Compact(recs, o.Key, o.Merge, o.Compare)
	case o.Compare != nil:
		slices.SortStableFunc(recs, func(a, b T) int { return o.Compare(o.Key(a), o.Key(b)) })
	}
	return recs
}

// ack acknowledges and deletes the committed entries in one script call, retried until it
// succeeds or the queue is aborted: their effect is committed, and an entry left pending
// would only come back as a duplicate.
func (c *consumer[K, T]) ack(done []entry[T]) {
	q := c.q
	args := make([]any, 0, 1+2*len(done))
	args = append(args, q.o.Group)
	for i := range done {
		args = append(args, done[i].id, done[i].kind)
	}
	res, ok := c.acknowledge(ackScript, []string{c.sh.keys.stream, c.sh.keys.stats}, args)
	if !ok || len(res) != len(done) {
		return
	}
	for i, n := range res {
		if n != 1 {
			continue // another consumer acknowledged it first, and counted it
		}
		q.c.acked.Add(1)
		switch done[i].kind {
		case kindApplied:
			q.c.Flushed.Add(1)
		case kindDuplicate:
			q.c.Flushed.Add(1)
			q.c.duplicates.Add(1)
		case kindFallback:
			q.c.SyncFallback.Add(1)
		}
	}
}

// acknowledge runs a script that acknowledges entries (ackScript, deadLetterScript) until it
// returns, or the queue is aborted or the consumer killed (ok false). Every attempt carries the
// same token, so an attempt after one whose reply was lost gets that reply back (replayHead).
func (c *consumer[K, T]) acknowledge(s *redis.Script, keys []string, args []any) (res []int64, ok bool) {
	q := c.q
	keys = append(keys, c.sh.keys.replies)
	args = append(args, c.name, q.token+"-"+strconv.FormatInt(q.ackCalls.Add(1), 10))
	for attempt := 1; ; attempt++ {
		// Under the queue's context: once Close gives up, an unanswered call is left to the
		// reclaimer, which finds its entries applied.
		res, err := runScript(q.life.Ctx(), ackTimeout, q.rdb, s, keys, args).Int64Slice()
		if err == nil {
			return res, true
		}
		if q.aborted() || c.dead.Load() || !c.pause(q.o.shared().RetryWait(min(attempt, 6))) {
			return nil, false
		}
	}
}

// retire handles entries delivered more than MaxDeliveries times: those already applied (a
// consumer kept dying after its commit) are acknowledged as duplicates, the rest go to the
// dead-letter stream.
func (c *consumer[K, T]) retire(overdue []entry[T]) {
	q := c.q
	ids := make([]string, len(overdue))
	for i := range overdue {
		ids[i] = overdue[i].id
	}
	applied, err := c.alreadyApplied(ids)
	if err != nil {
		return // stays pending; the next reclaim tries again
	}
	var dups, dead []entry[T]
	for _, e := range overdue {
		if slices.Contains(applied, e.id) {
			e.kind = kindDuplicate
			dups = append(dups, e)
		} else {
			dead = append(dead, e)
		}
	}
	if len(dups) > 0 {
		c.ack(dups)
	}
	if len(dead) > 0 {
		c.deadLetter(dead, fmt.Sprintf("delivered more than %d times", q.o.MaxDeliveries))
	}
}

// alreadyApplied returns which of ids are in the applied-ids table.
func (c *consumer[K, T]) alreadyApplied(ids []string) ([]string, error) {
	q := c.q
	ctx, cancel := q.o.shared().FlushContext(q.life.Ctx())
	defer cancel()
	tx, err := q.o.DB.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }() // read only
	return q.applied.present(ctx, tx, c.sh.keys.stream, ids)
}

// deadLetter moves entries to the dead-letter stream: acknowledged, copied and deleted in one
// script call.
func (c *consumer[K, T]) deadLetter(entries []entry[T], reason string) {
	q := c.q
	if len(reason) > 500 {
		reason = reason[:500]
	}
	args := make([]any, 0, 3+4*len(entries))
	args = append(args, q.o.Group, q.o.DeadLetterMaxLen, reason)
	for _, e := range entries {
		args = append(args, e.id, e.payload, e.at, e.deliveries)
	}
	res, _ := c.acknowledge(deadLetterScript, []string{c.sh.keys.stream, c.sh.keys.dlq, c.sh.keys.stats}, args)
	for _, n := range res {
		if n == 1 {
			q.c.acked.Add(1)
			q.c.deadLettered.Add(1)
			q.c.Abandoned.Add(1)
		}
	}
}

// reclaim takes over entries of sh idle longer than ReclaimIdle, every ReclaimInterval, and
// handles them like a batch (one shard; with more, each shard's reader reclaims its own).
// The XAUTOCLAIM cursor carries over from call to call, so a long pending list is scanned
// once around instead of from 0-0 every time.
func (q *Queue[K, T]) reclaim(sh *shard) {
	defer q.wg.Done()
	c := newConsumer(q, q.o.Consumer+"-reclaim", sh)
	defer close(c.done)
	q.every(q.o.ReclaimInterval, func() bool {
		if !q.gate.hold(q.stopC, nil) {
			return false
		}
		c.cursor = c.reclaimPass(c.cursor, q.o.ReclaimIdle)
		q.gate.release()
		return true
	})
}

// every runs pass every interval until it reports false, the consumers leave or Close's
// deadline expires.
func (q *Queue[K, T]) every(interval time.Duration, pass func() bool) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
		case <-q.stopC:
			return
		case <-q.life.AbortC():
			return
		}
		if !pass() {
			return
		}
	}
}

// reclaimPass claims entries idle for minIdle and handles them, batch by batch, until a call
// brings nothing or the scan wraps, and returns the cursor to continue from.
func (c *consumer[K, T]) reclaimPass(cursor string, minIdle time.Duration) string {
	q := c.q
	for !q.stopping() && !c.dead.Load() {
		msgs, next, err := q.rdb.XAutoClaim(q.life.Ctx(), &redis.XAutoClaimArgs{
			Stream: c.sh.keys.stream, Group: q.o.Group, Consumer: c.name,
			MinIdle: minIdle, Start: cursor, Count: int64(q.o.BatchSize),
		}).Result()
		if err != nil {
			if isNoGroup(err) {
				_ = q.ensureGroup(q.life.Ctx(), c.sh)
			}
			return cursor
		}
		cursor = next
		if len(msgs) > 0 {
			q.c.reclaimed.Add(int64(len(msgs)))
			c.handle(msgs, c.deliveryCounts(msgs))
		}
		if len(msgs) == 0 || next == "0-0" {
			return cursor
		}
	}
	return cursor
}

// deliveryCounts reads how often the just-claimed msgs have been delivered (XAUTOCLAIM counted
// this delivery already).
func (c *consumer[K, T]) deliveryCounts(msgs []redis.XMessage) map[string]int64 {
	q := c.q
	out := make(map[string]int64, len(msgs))
	p, err := q.rdb.XPendingExt(q.life.Ctx(), &redis.XPendingExtArgs{
		Stream: c.sh.keys.stream, Group: q.o.Group, Consumer: c.name,
		Start: msgs[0].ID, End: msgs[len(msgs)-1].ID, Count: int64(4*len(msgs) + 64),
	}).Result()
	if err != nil {
		return out // handle assumes 2 for a reclaimed entry it has no count for
	}
	for _, e := range p {
		out[e.ID] = e.RetryCount
	}
	return out
}

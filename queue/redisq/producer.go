package redisq

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/queue/internal/core"
)

// sendTimeout bounds one script call of a sender, so that an Enqueue always gets an answer.
const sendTimeout = 15 * time.Second

// maxBlockWait is the longest pause between two attempts of a blocked Enqueue (PolicyBlock).
const maxBlockWait = 50 * time.Millisecond

// addReq is a group of records (an EnqueueAll call's, or its part for one shard) on its way
// to Redis; the sender fills in added (or err) and signals done. The script adds the group's
// entries together or none of them.
type addReq struct {
	sh       *shard
	payloads [][]byte
	at       int64 // enqueue time, µs since the Unix epoch
	cap      int64 // the shard's capacity for this group (0: none)
	added    bool
	err      error
	done     chan struct{}
}

var addReqs = sync.Pool{New: func() any { return &addReq{done: make(chan struct{}, 1)} }}

// Enqueue offers rec: Queued once it is an entry of the stream. When the stream is full the
// FullPolicy decides (Dropped; WrittenInline, written by the caller in its own transaction;
// or waiting for room until ctx is done). A non-nil error always comes with Rejected; it
// wraps ErrOutcomeUnknown when Redis may have added the record all the same.
func (q *Queue[K, T]) Enqueue(ctx context.Context, rec T) (queue.Outcome, error) {
	return q.EnqueueAll(ctx, []T{rec})
}

// EnqueueAll offers recs as one unit (see queue.Interface): one script call adds all their
// entries or, when the stream has no room for all, none, and the FullPolicy applies to the
// group (sync: the caller writes all of them in one transaction). With Shards > 1 a group
// whose records go to several shards is checked for room on each of them first, then added to
// each (see the package doc, "Shards"). An error wrapping ErrOutcomeUnknown means Redis may
// have added the group, or part of it, all the same.
func (q *Queue[K, T]) EnqueueAll(ctx context.Context, recs []T) (queue.Outcome, error) {
	n := int64(len(recs))
	if n == 0 {
		return queue.Queued, nil
	}
	c := &q.c
	c.Enqueued.Add(n)
	if !q.o.Role.produces() {
		c.Rejected.Add(n)
		return queue.Rejected, errNotProducing
	}
	if !c.Enter(n) {
		return queue.Rejected, ErrClosed
	}
	defer c.Leave()
	reqs, err := q.split(recs)
	defer func() {
		for _, r := range reqs {
			r.release()
		}
	}()
	if err != nil {
		c.Rejected.Add(n)
		return queue.Rejected, err
	}
	at := time.Now()
	capacity := q.shardCapacity()
	var tooLarge error // the script would refuse it forever
	for _, r := range reqs {
		r.at = at.UnixMicro()
		tooLarge = cmp.Or(tooLarge, core.GroupTooLarge(int64(len(r.payloads)), capacity))
	}
	wait := time.Millisecond
	for {
		if tooLarge == nil {
			added, err := q.addGroup(ctx, reqs, capacity)
			switch {
			case err != nil:
				c.Rejected.Add(n)
				return queue.Rejected, err
			case added:
				return queue.Queued, nil
			}
		}
		switch q.o.FullPolicy {
		case queue.PolicyDrop:
			c.Dropped.Add(n)
			return queue.Dropped, nil
		case queue.PolicySync:
			return q.writeInline(ctx, recs, at)
		}
		if tooLarge != nil {
			c.Rejected.Add(n)
			return queue.Rejected, tooLarge
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			c.Rejected.Add(n)
			return queue.Rejected, fmt.Errorf("redisq: waiting for room in the stream: %w", context.Cause(ctx))
		case <-q.life.AbortC():
			c.Rejected.Add(n)
			return queue.Rejected, ErrClosed
		}
		wait = min(2*wait, maxBlockWait)
	}
}

// split encodes recs into one addReq per shard they go to, in the order of their shards'
// first records.
func (q *Queue[K, T]) split(recs []T) ([]*addReq, error) {
	var reqs []*addReq
	for _, rec := range recs {
		payload, err := q.o.Codec.Encode(rec)
		if err != nil {
			return reqs, fmt.Errorf("redisq: encoding a record: %w", err)
		}
		sh := q.shards[0]
		if len(q.shards) > 1 {
			sh = q.shardOf(q.o.Key(rec))
		}
		i := slices.IndexFunc(reqs, func(r *addReq) bool { return r.sh == sh })
		if i < 0 {
			r := addReqs.Get().(*addReq)
			r.sh = sh
			reqs, i = append(reqs, r), len(reqs)
		}
		reqs[i].payloads = append(reqs[i].payloads, payload)
	}
	return reqs, nil
}

// shardCapacity is the most entries one shard may hold (0: no cap).
func (q *Queue[K, T]) shardCapacity() int64 {
	s := int64(len(q.shards))
	return (int64(q.o.Capacity) + s - 1) / s
}

// release clears r and puts it back in the pool.
func (r *addReq) release() {
	clear(r.payloads)
	r.sh, r.payloads, r.added, r.err = nil, r.payloads[:0], false, nil
	addReqs.Put(r)
}

// addGroup adds a group that one or several shards share: added, not added because a shard
// had no room for its part, or an error. Within one shard the script checks the room. Across
// shards no script can (they are in different slots): the shards' lengths are read first, and
// when every part fits, each is added to its shard without a cap, so that the group goes in
// whole — a shard may pass its capacity by the parts of the groups that found room at the
// same moment.
func (q *Queue[K, T]) addGroup(ctx context.Context, reqs []*addReq, capacity int64) (bool, error) {
	if len(reqs) == 1 {
		reqs[0].cap = capacity
		return q.add(ctx, reqs[0])
	}
	if capacity > 0 {
		pipe := q.rdb.Pipeline()
		lens := make([]*redis.IntCmd, len(reqs))
		for i, r := range reqs {
			lens[i] = pipe.XLen(ctx, r.sh.keys.stream)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return false, fmt.Errorf("redisq: reading the shards' lengths: %w", err)
		}
		for i, r := range reqs {
			if lens[i].Val()+int64(len(r.payloads)) > capacity {
				return false, nil
			}
		}
	}
	for i, r := range reqs {
		r.cap = 0
		if i == 0 {
			select {
			case r.sh.adds <- r:
			case <-ctx.Done():
				return false, fmt.Errorf("redisq: enqueue: %w", context.Cause(ctx))
			}
			continue
		}
		r.sh.adds <- r // once a part is on its way, the others follow: the group goes whole
	}
	var errs []error
	for _, r := range reqs {
		<-r.done
		errs = append(errs, r.err)
		r.added, r.err = false, nil
	}
	if err := errors.Join(errs...); err != nil {
		return false, err
	}
	return true, nil
}

// add hands a group to its shard's senders and waits for Redis's answer: added, not added
// because the stream had no room for the whole group, or an error. Once handed over, the
// answer is awaited whatever ctx does: only the answer tells whether the group is in the
// stream.
func (q *Queue[K, T]) add(ctx context.Context, r *addReq) (bool, error) {
	select {
	case r.sh.adds <- r:
	case <-ctx.Done():
		return false, fmt.Errorf("redisq: enqueue: %w", context.Cause(ctx))
	}
	<-r.done
	added, err := r.added, r.err
	r.added, r.err = false, nil
	return added, err
}

// writeInline is PolicySync: the caller writes its group in its own transaction, outside the
// stream.
func (q *Queue[K, T]) writeInline(ctx context.Context, recs []T, at time.Time) (queue.Outcome, error) {
	batch := q.o.shared().InlineBatch(recs)
	write := func(ctx context.Context) error { _, err := q.inline.Flush(ctx, batch); return err }
	if err := core.WriteInline(ctx, q.life, &q.c.Counters, len(recs), write); err != nil {
		return queue.Rejected, fmt.Errorf("redisq: inline write of %d records (stream full): %w", len(recs), err)
	}
	lag := time.Since(at).Microseconds()
	lags := make([]int64, len(recs))
	for i := range lags {
		lags[i] = lag
	}
	q.recordLag(lags)
	return queue.WrittenInline, nil
}

// send is one sender of sh, named name (its field in sh's replies hash): it takes the groups
// waiting at this moment (at most SendBatch records, a group always whole) and adds them in
// one script call, so that concurrent Enqueue calls share a round trip.
func (q *Queue[K, T]) send(sh *shard, name string) {
	defer q.sendWG.Done()
	batch := make([]*addReq, 0, q.o.SendBatch)
	args := make([]any, 0, 2+4*q.o.SendBatch)
	calls := 0
	for r := range sh.adds {
		batch = append(batch[:0], r)
		records := len(r.payloads)
	fill:
		for records < q.o.SendBatch {
			select {
			case r, ok := <-sh.adds:
				if !ok {
					break fill
				}
				batch = append(batch, r)
				records += len(r.payloads)
			default:
				break fill
			}
		}
		calls++
		if q.aborted() { // Close gave up: what is left is not sent, and its callers are told
			for _, r := range batch {
				r.err = errNotSent
				r.done <- struct{}{}
			}
			continue
		}
		args = q.sendBatch(sh, batch, args, name, strconv.Itoa(calls))
	}
}

// errNotSent fails the groups a sender had not sent when Close gave up the drain: none of their
// records reached the stream.
var errNotSent = errors.New("redisq: not sent: the queue's close gave up before it was sent")

func (q *Queue[K, T]) sendBatch(sh *shard, batch []*addReq, args []any, name, token string) []any {
	args = args[:0]
	for _, r := range batch {
		args = append(args, len(r.payloads), r.at, r.cap)
		for _, p := range r.payloads {
			args = append(args, p)
		}
	}
	args = append(args, name, token)
	res, err := runScript(context.Background(), sendTimeout, q.rdb, addScript, []string{sh.keys.stream, sh.keys.stats, sh.keys.replies}, args).Int64Slice()
	if err == nil && len(res) != len(batch)+1 {
		err = fmt.Errorf("the script answered %d values for %d groups", len(res), len(batch))
	}
	if err != nil {
		// A script that failed midway may have added some records: none of them is known.
		err = fmt.Errorf("%w: adding %d groups of records to %s: %v", ErrOutcomeUnknown, len(batch), sh.keys.stream, err)
		for _, r := range batch {
			r.err = err
			r.done <- struct{}{}
		}
	} else {
		q.c.NoteDepth(res[len(batch)])
		for i, r := range batch {
			r.added = res[i] == 1
			r.done <- struct{}{}
		}
	}
	clear(args)
	return args[:0]
}

// runScript runs s within timeout (or until parent is done), and again while Redis answers
// that it did not run it (a cluster moving or failing over a slot: see notExecuted).
func runScript(parent context.Context, timeout time.Duration, rdb redis.UniversalClient, s *redis.Script, keys []string, args []any) *redis.Cmd {
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	wait := 10 * time.Millisecond
	for {
		cmd := s.Run(ctx, rdb, keys, args...)
		if !notExecuted(cmd.Err()) {
			return cmd
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return cmd
		}
		wait = min(2*wait, 250*time.Millisecond)
	}
}

// notExecuted says whether err is Redis refusing a command before running it: the slot is
// elsewhere or moving (MOVED, ASK, TRYAGAIN — what go-redis's cluster client had not
// followed within MaxRedirects), the cluster or the master is down, the node is a replica or
// still loading its data.
func notExecuted(err error) bool {
	var re redis.Error
	if err == nil || !errors.As(err, &re) {
		return false
	}
	msg := re.Error()
	for _, p := range []string{"MOVED ", "ASK ", "TRYAGAIN ", "CLUSTERDOWN ", "MASTERDOWN ", "LOADING ", "READONLY ", "NOREPLICAS "} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

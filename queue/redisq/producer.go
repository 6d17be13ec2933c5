package redisq

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/queue/internal/backend"
)

// sendTimeout bounds one script call of a sender, so that an Enqueue always gets an answer.
const sendTimeout = 15 * time.Second

// maxBlockWait is the longest pause between two attempts of a blocked Enqueue (PolicyBlock).
const maxBlockWait = 50 * time.Millisecond

// addReq is one group of records (an EnqueueAll call's) on its way to Redis; the sender
// fills in added (or err) and signals done. The script adds the group's entries together or
// none of them.
type addReq struct {
	payloads [][]byte
	at       int64 // enqueue time, µs since the Unix epoch
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

// EnqueueAll offers recs as one unit (see queue.Backend): one script call adds all their
// entries or, when the stream has no room for all, none, and the FullPolicy applies to the
// group (sync: the caller writes all of them in one transaction). An error wrapping
// ErrOutcomeUnknown means Redis may have added the group all the same.
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
	r := addReqs.Get().(*addReq)
	defer r.release()
	for _, rec := range recs {
		payload, err := q.o.Codec.Encode(rec)
		if err != nil {
			c.Rejected.Add(n)
			return queue.Rejected, fmt.Errorf("redisq: encoding a record: %w", err)
		}
		r.payloads = append(r.payloads, payload)
	}
	at := time.Now()
	r.at = at.UnixMicro()
	tooLarge := backend.GroupTooLarge(n, int64(q.o.Capacity)) // the script would refuse it forever
	wait := time.Millisecond
	for {
		if tooLarge == nil {
			added, err := q.add(ctx, r)
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

// release clears r and puts it back in the pool.
func (r *addReq) release() {
	clear(r.payloads)
	r.payloads, r.added, r.err = r.payloads[:0], false, nil
	addReqs.Put(r)
}

// add hands a group to a sender and waits for Redis's answer: added, not added because the
// stream had no room for the whole group, or an error. Once handed over, the answer is
// awaited whatever ctx does: only the answer tells whether the group is in the stream.
func (q *Queue[K, T]) add(ctx context.Context, r *addReq) (bool, error) {
	select {
	case q.adds <- r:
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
	if err := backend.WriteInline(ctx, q.life, &q.c.Counters, len(recs), write); err != nil {
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

// send is one sender: it takes the groups waiting at this moment (at most SendBatch records,
// a group always whole) and adds them in one script call, so that concurrent Enqueue calls
// share a round trip.
func (q *Queue[K, T]) send() {
	defer q.sendWG.Done()
	batch := make([]*addReq, 0, q.o.SendBatch)
	args := make([]any, 0, 1+3*q.o.SendBatch)
	for r := range q.adds {
		batch = append(batch[:0], r)
		records := len(r.payloads)
	fill:
		for records < q.o.SendBatch {
			select {
			case r, ok := <-q.adds:
				if !ok {
					break fill
				}
				batch = append(batch, r)
				records += len(r.payloads)
			default:
				break fill
			}
		}
		args = q.sendBatch(batch, args)
	}
}

func (q *Queue[K, T]) sendBatch(batch []*addReq, args []any) []any {
	args = append(args[:0], q.o.Capacity)
	for _, r := range batch {
		args = append(args, len(r.payloads), r.at)
		for _, p := range r.payloads {
			args = append(args, p)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), sendTimeout)
	res, err := addScript.Run(ctx, q.rdb, []string{q.keys.stream, q.keys.stats}, args...).StringSlice()
	cancel()
	if err == nil && len(res) != len(batch)+1 {
		err = fmt.Errorf("the script answered %d values for %d groups", len(res), len(batch))
	}
	if err != nil {
		// A script that failed midway may have added some records: none of them is known.
		err = fmt.Errorf("%w: adding %d groups of records to %s: %v", ErrOutcomeUnknown, len(batch), q.keys.stream, err)
		for _, r := range batch {
			r.err = err
			r.done <- struct{}{}
		}
	} else {
		if n, perr := strconv.ParseInt(res[len(batch)], 10, 64); perr == nil {
			q.c.NoteDepth(n)
		}
		for i, r := range batch {
			r.added = res[i] != ""
			r.done <- struct{}{}
		}
	}
	clear(args)
	return args[:0]
}

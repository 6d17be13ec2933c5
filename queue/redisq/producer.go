package redisq

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/hotspotkit/hotspotkit/queue"
)

// sendTimeout bounds one script call of a sender, so that an Enqueue always gets an answer.
const sendTimeout = 15 * time.Second

// maxBlockWait is the longest pause between two attempts of a blocked Enqueue (PolicyBlock).
const maxBlockWait = 50 * time.Millisecond

// addReq is one record on its way to Redis; the sender fills in id (or err) and signals done.
type addReq struct {
	payload []byte
	at      int64 // enqueue time, µs since the Unix epoch
	id      string
	err     error
	done    chan struct{}
}

var addReqs = sync.Pool{New: func() any { return &addReq{done: make(chan struct{}, 1)} }}

// Enqueue offers rec: Queued once it is an entry of the stream. When the stream is full the
// FullPolicy decides (Dropped; WrittenInline, written by the caller in its own transaction;
// or waiting for room until ctx is done). A non-nil error always comes with Rejected; it
// wraps ErrOutcomeUnknown when Redis may have added the record all the same.
func (q *Queue[K, T]) Enqueue(ctx context.Context, rec T) (queue.Outcome, error) {
	c := &q.c
	c.Enqueued.Add(1)
	if !q.o.Role.produces() {
		c.Rejected.Add(1)
		return queue.Rejected, errNotProducing
	}
	if !c.Enter() {
		return queue.Rejected, ErrClosed
	}
	defer c.Leave()
	payload, err := q.o.Codec.Encode(rec)
	if err != nil {
		c.Rejected.Add(1)
		return queue.Rejected, fmt.Errorf("redisq: encoding a record: %w", err)
	}
	at := time.Now()
	wait := time.Millisecond
	for {
		id, err := q.add(ctx, payload, at.UnixMicro())
		switch {
		case err != nil:
			c.Rejected.Add(1)
			return queue.Rejected, err
		case id != "":
			return queue.Queued, nil
		}
		switch q.o.FullPolicy {
		case queue.PolicyDrop:
			c.Dropped.Add(1)
			return queue.Dropped, nil
		case queue.PolicySync:
			return q.writeInline(ctx, rec, at)
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			c.Rejected.Add(1)
			return queue.Rejected, fmt.Errorf("redisq: waiting for room in the stream: %w", context.Cause(ctx))
		case <-q.life.AbortC():
			c.Rejected.Add(1)
			return queue.Rejected, ErrClosed
		}
		wait = min(2*wait, maxBlockWait)
	}
}

// add hands one record to a sender and waits for Redis's answer: the entry id, "" when the
// stream was full, or an error. Once handed over, the answer is awaited whatever ctx does:
// only the answer tells whether the record is in the stream.
func (q *Queue[K, T]) add(ctx context.Context, payload []byte, at int64) (string, error) {
	r := addReqs.Get().(*addReq)
	r.payload, r.at = payload, at
	select {
	case q.adds <- r:
	case <-ctx.Done():
		r.payload = nil
		addReqs.Put(r)
		return "", fmt.Errorf("redisq: enqueue: %w", context.Cause(ctx))
	}
	<-r.done
	id, err := r.id, r.err
	r.payload, r.id, r.err = nil, "", nil
	addReqs.Put(r)
	return id, err
}

// writeInline is PolicySync: the caller writes rec in its own transaction, outside the stream.
func (q *Queue[K, T]) writeInline(ctx context.Context, rec T, at time.Time) (queue.Outcome, error) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(q.life.Ctx(), cancel)
	_, err := q.inline.Flush(ctx, []T{rec})
	stop()
	cancel()
	if err != nil {
		q.c.Rejected.Add(1)
		return queue.Rejected, fmt.Errorf("redisq: inline write (stream full): %w", err)
	}
	q.c.SyncFallback.Add(1)
	q.recordLag([]int64{time.Since(at).Microseconds()})
	return queue.WrittenInline, nil
}

// send is one sender: it takes the records waiting at this moment (at most SendBatch) and
// adds them in one script call, so that concurrent Enqueue calls share a round trip.
func (q *Queue[K, T]) send() {
	defer q.sendWG.Done()
	batch := make([]*addReq, 0, q.o.SendBatch)
	args := make([]any, 0, 1+2*q.o.SendBatch)
	for r := range q.adds {
		batch = append(batch[:0], r)
	fill:
		for len(batch) < q.o.SendBatch {
			select {
			case r, ok := <-q.adds:
				if !ok {
					break fill
				}
				batch = append(batch, r)
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
		args = append(args, r.payload, r.at)
	}
	ctx, cancel := context.WithTimeout(context.Background(), sendTimeout)
	res, err := addScript.Run(ctx, q.rdb, []string{q.keys.stream, q.keys.stats}, args...).StringSlice()
	cancel()
	if err == nil && len(res) != len(batch)+1 {
		err = fmt.Errorf("the script answered %d values for %d records", len(res), len(batch))
	}
	if err != nil {
		// A script that failed midway may have added some records: none of them is known.
		err = fmt.Errorf("%w: adding %d records to %s: %v", ErrOutcomeUnknown, len(batch), q.keys.stream, err)
		for _, r := range batch {
			r.err = err
			r.done <- struct{}{}
		}
	} else {
		if n, perr := strconv.ParseInt(res[len(batch)], 10, 64); perr == nil {
			q.c.NoteDepth(n)
		}
		for i, r := range batch {
			r.id = res[i]
			r.done <- struct{}{}
		}
	}
	clear(args)
	return args[:0]
}

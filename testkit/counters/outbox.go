package counters

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/hotspotkit/hotspotkit/results"
)

// InsertOutbox records deltas in the outbox (usage_counter_deltas) inside the request's
// transaction, as one statement. The hot rows themselves are not touched.
func InsertOutbox(ctx context.Context, tx pgx.Tx, requestID string, deltas []Delta) error {
	args := deltaArrays(deltas)
	kinds := make([]string, len(deltas))
	slots := make([]int16, len(deltas))
	for i, d := range deltas {
		kinds[i], slots[i] = string(d.Kind), int16(d.Slot)
	}
	_, err := tx.Exec(ctx, `
		INSERT INTO usage_counter_deltas (request_id, kind, target_id, target_slot, requests, successes, failures,
			tokens, cost, response_time_ms, dns_failures, stream_errors, last_used_at, last_ip)
		SELECT $12, d.kind, d.id, d.slot, d.requests, d.successes, d.failures, d.tokens, d.cost,
			d.response_time_ms, d.dns_failures, d.stream_errors, d.last_used_at, d.last_ip
		FROM unnest($1::text[], $2::int8[], $3::int8[], $4::int8[], $5::int8[], $6::numeric[], $7::int8[],
		            $8::int8[], $9::int8[], $10::timestamptz[], $11::text[], $13::text[], $14::int2[])
		     AS d(id, requests, successes, failures, tokens, cost, response_time_ms, dns_failures,
		          stream_errors, last_used_at, last_ip, kind, slot)`,
		append(args, requestID, kinds, slots)...)
	if err != nil {
		return fmt.Errorf("outbox insert: %w", err)
	}
	return nil
}

// OutboxPendingSQL counts the deltas not yet applied.
const OutboxPendingSQL = `SELECT count(*) FROM usage_counter_deltas WHERE processed_at IS NULL`

// OutboxFlusher is the delayed-aggregation flush loop: it claims pending deltas with FOR UPDATE
// SKIP LOCKED, merges them per hot row and applies one UPDATE per table per batch, then marks
// them processed, all in one transaction. It runs on its own connection so it never queues
// behind the load for a pooled connection; when that connection is lost (a terminated backend,
// a restarted server) the next flush opens a new one.
type OutboxFlusher struct {
	// FlushTimeout bounds one flush, from taking the connection to COMMIT (0: no bound): a flush
	// whose server stops answering is cancelled, its connection dropped, and the next flush
	// opens another.
	FlushTimeout time.Duration

	connect   func(context.Context) (*pgx.Conn, error)
	conn      *pgx.Conn
	batchSize int
	interval  time.Duration

	pauseMu sync.Mutex
	resumed chan struct{} // non-nil while paused (Pause stops flushing): closed by Resume

	mu       sync.Mutex // serialises flushes on conn
	calls    atomic.Int64
	claimed  atomic.Int64
	targets  atomic.Int64
	errCount atomic.Int64

	stop chan struct{}
	done chan struct{}
}

// NewOutbox returns a flusher that uses connections from connect exclusively, one at a time.
func NewOutbox(connect func(context.Context) (*pgx.Conn, error), batchSize int, interval time.Duration) *OutboxFlusher {
	return &OutboxFlusher{connect: connect, batchSize: batchSize, interval: interval}
}

// Pause stops flushing (a flush in progress completes) until Resume.
func (o *OutboxFlusher) Pause() {
	o.pauseMu.Lock()
	defer o.pauseMu.Unlock()
	if o.resumed == nil {
		o.resumed = make(chan struct{})
	}
}

// Resume lets flushing continue.
func (o *OutboxFlusher) Resume() {
	o.pauseMu.Lock()
	defer o.pauseMu.Unlock()
	if o.resumed != nil {
		close(o.resumed)
		o.resumed = nil
	}
}

// waitResumed blocks while paused.
func (o *OutboxFlusher) waitResumed(ctx context.Context) error {
	o.pauseMu.Lock()
	resumeC := o.resumed
	o.pauseMu.Unlock()
	if resumeC == nil {
		return nil
	}
	select {
	case <-resumeC:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close closes the current connection.
func (o *OutboxFlusher) Close(ctx context.Context) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.conn == nil {
		return nil
	}
	err := o.conn.Close(ctx)
	o.conn = nil
	return err
}

// live returns an open connection, reconnecting when the last one was lost; o.mu is held.
func (o *OutboxFlusher) live(ctx context.Context) (*pgx.Conn, error) {
	if o.conn != nil && !o.conn.IsClosed() {
		return o.conn, nil
	}
	if o.conn != nil {
		_ = o.conn.Close(ctx)
		o.conn = nil
	}
	conn, err := o.connect(ctx)
	if err != nil {
		return nil, err
	}
	o.conn = conn
	return conn, nil
}

// Start runs the flush loop until Stop: flush, and while batches come back full flush again
// at once; otherwise sleep the interval.
func (o *OutboxFlusher) Start(ctx context.Context) {
	o.stop, o.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(o.done)
		for {
			n, err := o.FlushOnce(ctx)
			if err == nil && n == o.batchSize {
				continue
			}
			select {
			case <-o.stop:
				return
			case <-ctx.Done():
				return
			case <-time.After(o.interval):
			}
		}
	}()
}

// Stop ends the loop (a flush in progress completes, within FlushTimeout).
func (o *OutboxFlusher) Stop() {
	if o.stop != nil {
		close(o.stop)
		<-o.done
		o.stop = nil
	}
}

// FlushOnce claims, aggregates and applies one batch; it returns how many deltas it claimed.
func (o *OutboxFlusher) FlushOnce(ctx context.Context) (int, error) {
	if err := o.waitResumed(ctx); err != nil {
		return 0, err
	}
	if o.FlushTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.FlushTimeout)
		defer cancel()
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	conn, err := o.live(ctx)
	if err != nil {
		o.calls.Add(1)
		o.errCount.Add(1)
		return 0, err
	}
	n, targets, err := o.flush(ctx, conn)
	o.calls.Add(1)
	if err != nil {
		o.errCount.Add(1)
		return 0, err
	}
	o.claimed.Add(int64(n))
	o.targets.Add(int64(targets))
	return n, nil
}

func (o *OutboxFlusher) flush(ctx context.Context, conn *pgx.Conn) (claimed, targets int, err error) {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return 0, 0, err
	}
	defer tx.Rollback(ctx)
	rows, err := tx.Query(ctx, `
		SELECT id, kind, target_id, target_slot, requests, successes, failures, tokens, cost, response_time_ms,
		       dns_failures, stream_errors, last_used_at, last_ip
		FROM usage_counter_deltas
		WHERE processed_at IS NULL
		ORDER BY id
		LIMIT $1
		FOR UPDATE SKIP LOCKED`, o.batchSize)
	if err != nil {
		return 0, 0, err
	}
	var ids []int64
	var deltas []Delta
	for rows.Next() {
		var id int64
		var d Delta
		var kind string
		var slot int16
		var cost pgtype.Numeric
		var last pgtype.Timestamptz
		var ip pgtype.Text
		if err := rows.Scan(&id, &kind, &d.Target, &slot, &d.Requests, &d.Successes, &d.Failures, &d.Tokens, &cost,
			&d.ResponseTimeMs, &d.DNSFailures, &d.StreamErrors, &last, &ip); err != nil {
			rows.Close()
			return 0, 0, err
		}
		d.Kind, d.Slot = Kind(kind), int(slot)
		if d.Cost, err = moneyFromNumeric(cost); err != nil {
			rows.Close()
			return 0, 0, fmt.Errorf("outbox row %d: %w", id, err)
		}
		if last.Valid {
			d.LastUsedAt = last.Time
		}
		if ip.Valid {
			d.LastIP = ip.String
		}
		ids = append(ids, id)
		deltas = append(deltas, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, 0, err
	}
	if len(ids) == 0 {
		return 0, 0, nil
	}
	merged := Compact(deltas)
	if _, err := Apply(ctx, tx, merged); err != nil {
		return 0, 0, err
	}
	if _, err := tx.Exec(ctx, `UPDATE usage_counter_deltas SET processed_at = now() WHERE id = ANY($1)`, ids); err != nil {
		return 0, 0, err
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, 0, err
	}
	return len(ids), len(merged), nil
}

// Drain flushes until the outbox is empty. Flush errors are retried until ctx ends.
func (o *OutboxFlusher) Drain(ctx context.Context) error {
	var lastErr error
	for {
		n, err := o.FlushOnce(ctx)
		if err != nil {
			lastErr = err
			if ctx.Err() != nil {
				return errors.Join(context.Cause(ctx), lastErr)
			}
			select {
			case <-ctx.Done():
				return errors.Join(context.Cause(ctx), lastErr)
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		if n > 0 {
			continue
		}
		var pending int64
		o.mu.Lock()
		conn, err := o.live(ctx)
		if err == nil {
			err = conn.QueryRow(ctx, OutboxPendingSQL).Scan(&pending)
		}
		o.mu.Unlock()
		if err != nil {
			lastErr = err
			select {
			case <-ctx.Done():
				return errors.Join(context.Cause(ctx), lastErr)
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		if pending == 0 {
			return nil
		}
		// Rows exist but were locked by an unfinished request transaction: wait for it.
		select {
		case <-ctx.Done():
			return fmt.Errorf("outbox not drained: %d deltas pending: %w", pending, context.Cause(ctx))
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Stats are the loop's totals for the report.
func (o *OutboxFlusher) Stats() results.Flush {
	return results.Flush{Calls: o.calls.Load(), RowsClaimed: o.claimed.Load(), Targets: o.targets.Load(), Errors: o.errCount.Load()}
}

func moneyFromNumeric(n pgtype.Numeric) (Money, error) {
	if !n.Valid || n.NaN || n.InfinityModifier != pgtype.Finite {
		return 0, errors.New("cost is not a finite number")
	}
	v := n.Int.Int64()
	for e := n.Exp; e < -MoneyScale; e++ {
		if v%10 != 0 {
			return 0, fmt.Errorf("cost has more than %d decimals", MoneyScale)
		}
		v /= 10
	}
	for e := n.Exp; e > -MoneyScale; e-- {
		v *= 10
	}
	return Money(v), nil
}

package counters

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/sqldb"
)

// InsertOutbox records deltas in the outbox (counter_outbox) inside the request's
// transaction, as one statement: a row per delta, with its place in the requests' order
// (Delta.Order), its row, and the values of its columns as text. The hot rows themselves are
// not touched.
func InsertOutbox(ctx context.Context, tx sqldb.Tx, deltas []Delta) error {
	return dialectFor(tx).insertOutbox(ctx, tx, deltas)
}

// insertOutboxPostgres is InsertOutbox on PostgreSQL: the rows from arrays.
func insertOutboxPostgres(ctx context.Context, tx sqldb.Tx, deltas []Delta) error {
	n := len(deltas)
	requests, positions, lo, hi := make([]int64, n), make([]int32, n), make([]int32, n), make([]int32, n)
	tables, rows, masks, slots := make(Texts, n), make([]string, n), make([]int64, n), make([]int16, n)
	values := 0
	for i := range deltas {
		values += len(deltas[i].Values)
	}
	vals := make([]string, 0, values)
	for i, d := range deltas {
		requests[i], positions[i] = d.Order>>16, int32(d.Order&(maxPositions-1))
		tables[i], rows[i], masks[i], slots[i] = d.Table, d.Row, int64(d.Change.mask), int16(d.Slot)
		if d.Table == d.Change.table.spec.Name { // as it always is: the name boxed once
			tables[i] = d.Change.table.nameArg
		}
		lo[i] = int32(len(vals) + 1)
		for _, v := range d.Values {
			vals = append(vals, v.encode())
		}
		hi[i] = int32(len(vals))
	}
	_, err := tx.Exec(ctx, `
		INSERT INTO counter_outbox (request_index, position, table_name, row_key, slot, columns, vals)
		SELECT d.request_index, d.position, d.table_name, d.row_key, d.slot, d.columns, ($7::text[])[d.lo:d.hi]
		FROM unnest($1::int8[], $2::int4[], $3::text[], $4::text[], $5::int2[], $6::int8[], $8::int4[], $9::int4[])
		     AS d(request_index, position, table_name, row_key, slot, columns, lo, hi)`,
		requests, positions, tables, rows, slots, masks, vals, lo, hi)
	if err != nil {
		return fmt.Errorf("outbox insert: %w", err)
	}
	return nil
}

// OutboxPendingSQL counts the deltas not yet applied.
const OutboxPendingSQL = `SELECT count(*) FROM counter_outbox WHERE processed_at IS NULL`

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

	connect   func(context.Context) (sqldb.Conn, error)
	tables    map[string]*Table
	conn      sqldb.Conn
	sql       dialect // the statements of conn's dialect, chosen when the first connection opens
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

// NewOutbox returns a flusher of the deltas of tables that uses connections from connect
// exclusively, one at a time.
func NewOutbox(connect func(context.Context) (sqldb.Conn, error), tables []*Table, batchSize int, interval time.Duration) *OutboxFlusher {
	byName := make(map[string]*Table, len(tables))
	for _, t := range tables {
		byName[t.Name()] = t
	}
	return &OutboxFlusher{connect: connect, tables: byName, batchSize: batchSize, interval: interval}
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
func (o *OutboxFlusher) live(ctx context.Context) (sqldb.Conn, error) {
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
	if o.sql == nil {
		if o.sql, err = dialectOf(conn.Dialect()); err != nil {
			_ = conn.Close(ctx)
			return nil, err
		}
	}
	if err := o.sql.flusherSession(ctx, conn); err != nil {
		_ = conn.Close(ctx)
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

func (o *OutboxFlusher) flush(ctx context.Context, conn sqldb.Conn) (claimed, targets int, err error) {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return 0, 0, err
	}
	defer tx.Rollback(ctx)
	var ids []int64
	var deltas []Delta
	err = o.sql.claimOutbox(ctx, tx, o.batchSize, func(row outboxRow) error {
		d, err := o.delta(row)
		if err != nil {
			return fmt.Errorf("outbox row %d: %w", row.id, err)
		}
		ids = append(ids, row.id)
		deltas = append(deltas, d)
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	if len(ids) == 0 {
		return 0, 0, nil
	}
	merged := Compact(deltas)
	if _, err := o.sql.apply(ctx, tx, merged); err != nil {
		return 0, 0, err
	}
	if err := o.sql.markProcessed(ctx, tx, ids); err != nil {
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

// claimOutboxPostgres is claimOutbox on PostgreSQL.
func claimOutboxPostgres(ctx context.Context, tx sqldb.Tx, limit int, each func(outboxRow) error) error {
	rows, err := tx.Query(ctx, `
		SELECT id, request_index, position, table_name, row_key, slot, columns, vals
		FROM counter_outbox
		WHERE processed_at IS NULL
		ORDER BY id
		LIMIT $1
		FOR UPDATE SKIP LOCKED`, limit)
	if err != nil {
		return err
	}
	var row outboxRow
	return sqldb.ForEachRow(rows, []any{&row.id, &row.request, &row.position, &row.table, &row.key, &row.slot, &row.columns, &row.vals},
		func() error { return each(row) })
}

// outboxRow is a row of counter_outbox as the flush loop reads it.
type outboxRow struct {
	id, request int64
	position    int32
	table, key  string
	slot        int16
	columns     int64
	vals        []string
}

// delta is the delta an outbox row records.
func (o *OutboxFlusher) delta(row outboxRow) (Delta, error) {
	t := o.tables[row.table]
	if t == nil {
		return Delta{}, fmt.Errorf("no declared table %q", row.table)
	}
	mask := uint64(row.columns)
	if mask == 0 || mask>>len(t.spec.Columns) != 0 {
		return Delta{}, fmt.Errorf("columns %b are not %s's", mask, t.Name())
	}
	c := t.changeOf(mask)
	if len(row.vals) != len(c.valued) {
		return Delta{}, fmt.Errorf("%d values for %d columns", len(row.vals), len(c.valued))
	}
	vals := make([]Value, len(row.vals))
	for k, s := range row.vals {
		v, err := parseValue(t.types[c.valued[k]], s)
		if err != nil {
			return Delta{}, fmt.Errorf("%s.%s: %w", t.Name(), t.spec.Columns[c.valued[k]].Name, err)
		}
		vals[k] = v
	}
	return Delta{Key: Key{Table: row.table, Row: row.key, Slot: int(row.slot)}, Change: c, Values: vals,
		Order: Stamp(row.request, int(row.position))}, nil
}

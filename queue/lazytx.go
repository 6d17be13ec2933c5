package queue

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hotspotkit/hotspotkit/sqldb"
)

// beginLazily acquires a connection of pool for a transaction that begins with its first
// statement (TxFlusher on a pgx pool): a flush whose writer sends one batch costs two round
// trips (the batch, COMMIT) instead of three; over a network, one round trip less per batch.
// The statements sent under ctx are watched for its end once (sqldb.WatchPgxOnce), not by
// pgx one by one (a callback, a channel, two locks and four allocations a statement: a tenth
// of the client's processor time in an async run, whose writer sends every counter UPDATE
// in a round trip of its own); COMMIT and ROLLBACK are pgx's to watch, under their own.
func beginLazily(ctx context.Context, pool *pgxpool.Pool) (pgx.Tx, error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	use, unwatch := sqldb.WatchPgxOnce(ctx, conn)
	return &lazyTx{conn: conn, use: use, unwatch: unwatch}, nil
}

// lazyTx is a transaction on a pool connection whose BEGIN goes out with its first statement:
// with a batch, in the same round trip (pgx's Batch.BeginTx); with anything else, just before
// it. Once begun it is pgx's own transaction (savepoints, ErrTxCommitRollback, ErrTxClosed).
// The connection goes back to the pool on Commit or Rollback (pgxpool closes one that is still
// inside a transaction, e.g. after a failed COMMIT).
type lazyTx struct {
	conn    *pgxpool.Conn
	tx      pgx.Tx // nil until begun
	closed  bool
	use     func(context.Context) context.Context // the context a statement given ctx runs under
	unwatch func()                                // ends the watch of use's context; nil once ended
}

var _ pgx.Tx = (*lazyTx)(nil)

func (t *lazyTx) begin(ctx context.Context) (pgx.Tx, error) {
	if t.closed {
		return nil, pgx.ErrTxClosed
	}
	if t.tx == nil {
		tx, err := t.conn.Conn().Begin(t.use(ctx))
		if err != nil {
			return nil, err
		}
		t.tx = tx
	}
	return t.tx, nil
}

// SendBatch sends b; in a transaction not yet begun, behind the BEGIN, whose result it reads
// before it returns, so that the caller reads b's results as it queued them.
func (t *lazyTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	if t.closed {
		return pgx.FailedBatchResults(b, pgx.ErrTxClosed)
	}
	ctx = t.use(ctx)
	if t.tx != nil {
		return t.tx.SendBatch(ctx, b)
	}
	var with pgx.Batch
	with.BeginTx(pgx.TxOptions{})
	with.QueuedQueries = append(with.QueuedQueries, b.QueuedQueries...)
	br := t.conn.SendBatch(ctx, &with)
	if _, err := br.Exec(); err != nil {
		_ = br.Close()
		return pgx.FailedBatchResults(b, fmt.Errorf("begin: %w", err))
	}
	t.tx = br.Tx()
	return br
}

func (t *lazyTx) Commit(ctx context.Context) error {
	if t.closed {
		return pgx.ErrTxClosed
	}
	t.endWatch()
	defer t.release()
	if t.tx == nil {
		return nil // nothing was sent: nothing to commit
	}
	return t.tx.Commit(ctx)
}

func (t *lazyTx) Rollback(ctx context.Context) error {
	if t.closed {
		return pgx.ErrTxClosed
	}
	t.endWatch()
	defer t.release()
	if t.tx == nil {
		return nil
	}
	return t.tx.Rollback(ctx)
}

// release closes the transaction and gives its connection back (after endWatch).
func (t *lazyTx) release() {
	t.closed = true
	t.conn.Release()
}

// endWatch ends the watch of the statements' context: before COMMIT or ROLLBACK, which run
// under their own (a pipelined batch's COMMIT is not cut by the end of its staging's), and
// before the connection goes back.
func (t *lazyTx) endWatch() {
	if t.unwatch != nil {
		t.unwatch()
		t.unwatch = nil
	}
}

// Begin starts a savepoint (pgx's pseudo nested transaction).
func (t *lazyTx) Begin(ctx context.Context) (pgx.Tx, error) {
	tx, err := t.begin(ctx)
	if err != nil {
		return nil, err
	}
	return tx.Begin(t.use(ctx))
}

func (t *lazyTx) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	tx, err := t.begin(ctx)
	if err != nil {
		return 0, err
	}
	return tx.CopyFrom(t.use(ctx), table, columns, src)
}

// LargeObjects is not supported before the transaction has begun.
func (t *lazyTx) LargeObjects() pgx.LargeObjects {
	if t.tx == nil {
		return pgx.LargeObjects{}
	}
	return t.tx.LargeObjects()
}

func (t *lazyTx) Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	if t.closed {
		return nil, pgx.ErrTxClosed
	}
	return t.conn.Conn().Prepare(t.use(ctx), name, sql)
}

func (t *lazyTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	tx, err := t.begin(ctx)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	return tx.Exec(t.use(ctx), sql, args...)
}

func (t *lazyTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	tx, err := t.begin(ctx)
	if err != nil {
		return nil, err
	}
	return tx.Query(t.use(ctx), sql, args...)
}

func (t *lazyTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	tx, err := t.begin(ctx)
	if err != nil {
		return failedRow{err}
	}
	return tx.QueryRow(t.use(ctx), sql, args...)
}

// Conn is the transaction's connection. Its transaction may not have begun yet: send
// statements through the Tx, not through Conn.
func (t *lazyTx) Conn() *pgx.Conn { return t.conn.Conn() }

// failedRow is a row whose query was never sent.
type failedRow struct{ err error }

func (r failedRow) Scan(...any) error { return r.err }

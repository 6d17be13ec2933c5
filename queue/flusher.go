package queue

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hotspotkit/hotspotkit/hist"
	"github.com/hotspotkit/hotspotkit/sqldb"
)

// Flusher writes one batch in ONE transaction, all or nothing: a nil error means every record
// is committed, an error means none is. Records arrive in per-slot order; with compaction each
// slot appears once and the batch is sorted by slot (Options.Compare) so that concurrent
// batches cannot deadlock. The slice belongs to the queue and is reused after Flush returns,
// so Flush must not keep it. Flush is called concurrently by the workers and, under
// PolicySync, by callers of Enqueue with their group of records (compacted and sorted the
// same way when compaction is on).
type Flusher[T any] interface {
	Flush(ctx context.Context, records []T) (FlushResult, error)
}

// FlushResult describes a committed flush.
type FlushResult struct {
	// SQLOps is the number of statements sent to the database for this batch (BEGIN and
	// COMMIT not included).
	SQLOps int
	// Phases is where the flush's time went, as far as the Flusher can tell (TxFlusher fills
	// it). A Flusher that leaves it zero has its whole call counted as statements.
	Phases FlushPhases
}

// FlushPhases splits a committed flush's time: BEGIN (on a pgx pool, taking a connection:
// BEGIN itself goes with the first statement), the COPY statements the writer sent
// (TxFlusher times every CopyFrom on a pgx transaction and its savepoints), the rest of the
// writer's work (its other statements, the UPDATEs and claims, and whatever it computes
// between them), and COMMIT.
type FlushPhases struct {
	Begin, Copy, Statements, Commit time.Duration
}

func (p FlushPhases) total() time.Duration { return p.Begin + p.Copy + p.Statements + p.Commit }

// FlusherFunc adapts a function to a Flusher.
type FlusherFunc[T any] func(ctx context.Context, records []T) (FlushResult, error)

// Flush calls f.
func (f FlusherFunc[T]) Flush(ctx context.Context, records []T) (FlushResult, error) {
	return f(ctx, records)
}

// TxWriter writes records inside a transaction owned by the caller (the queue backend), which
// begins, commits or rolls it back. It returns the number of statements it sent. The
// transaction's Dialect says which database's statements to send; on PostgreSQL a writer
// that needs COPY, a pipelined batch or a savepoint takes the pgx transaction under it
// (sqldb.AsPgx).
type TxWriter[T any] interface {
	WriteBatch(ctx context.Context, tx sqldb.Tx, records []T) (sqlOps int, err error)
}

// TxFlusher adapts a TxWriter to a Flusher: Begin on db, WriteBatch, Commit; on any error the
// transaction is rolled back and the error returned. A Commit error is reported as a
// failure, so a batch whose commit outcome is unknown (connection lost during COMMIT) is
// retried: writers whose statements are not idempotent may then apply it twice. The Flusher
// it returns is a StagedFlusher, so a queue with Options.Pipeline writes a worker's next batch
// while the previous one commits.
//
// On PostgreSQL (db a pgx handle: sqldb.PgxPool, sqldb.PgxConn) the writer's transaction is
// pgx's, with two things of pgx's own: on a pool the BEGIN is not sent on its own but with
// the writer's first statement, in the same round trip when that is a batch (pgx.Tx's
// SendBatch), so a flush whose writer sends one batch costs two round trips (the batch,
// COMMIT) instead of three; and the time the writer spends in CopyFrom (on the transaction
// and its savepoints) is its own phase (FlushPhases.Copy). db is only safe with one worker
// and no PolicySync when it is a single connection.
func TxFlusher[T any](db sqldb.Beginner, w TxWriter[T]) Flusher[T] {
	f := txFlusher[T]{db: db, w: w}
	f.pgx, _ = sqldb.AsPgx(db)
	return f
}

// PgFlusher is TxFlusher on a pgx pool: what a service on pgx calls.
func PgFlusher[T any](pool *pgxpool.Pool, w TxWriter[T]) Flusher[T] {
	return TxFlusher(sqldb.PgxPool(pool), w)
}

// MySQLFlusher is TxFlusher on a database/sql pool of go-sql-driver/mysql (sqldb.OpenMySQL
// opens one with the settings a batch's statements want: see package sqldb).
func MySQLFlusher[T any](db *sql.DB, w TxWriter[T]) Flusher[T] {
	return TxFlusher(sqldb.MySQLDB(db), w)
}

// StagedFlusher is a Flusher that can also write a batch without committing it (Stage), so
// that a queue with Options.Pipeline can write a worker's next batch while the previous one
// commits. Stage must leave the records slice alone once it returns, as Flush does.
type StagedFlusher[T any] interface {
	Flusher[T]
	Stage(ctx context.Context, records []T) (Staged, error)
}

// Staged is a batch written in an open transaction: Commit it (an error means it is not
// committed, or, wrapping ErrCommitUnknown, that nobody knows) or Rollback it. Exactly one of
// the two is called.
type Staged interface {
	Commit(ctx context.Context) (FlushResult, error)
	Rollback(ctx context.Context)
}

type txFlusher[T any] struct {
	db  sqldb.Beginner
	pgx sqldb.Pgx // db's pgx handle; nil: db is not pgx's
	w   TxWriter[T]
}

var _ StagedFlusher[int] = txFlusher[int]{}

func (f txFlusher[T]) Flush(ctx context.Context, records []T) (FlushResult, error) {
	st, err := f.Stage(ctx, records)
	if err != nil {
		return FlushResult{}, err
	}
	return st.Commit(ctx)
}

func (f txFlusher[T]) Stage(ctx context.Context, records []T) (Staged, error) {
	t0 := time.Now()
	tx, copyTime, err := f.begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("queue: begin flush of %d records: %w", len(records), err)
	}
	t1 := time.Now()
	ops, err := f.w.WriteBatch(ctx, tx, records)
	if err != nil {
		// The flush context may be the reason for the failure; roll back on a live one so
		// the connection goes back to the pool instead of being closed.
		sqldb.Rollback(ctx, tx) // the write error is the one worth reporting
		return nil, fmt.Errorf("queue: write batch of %d records: %w", len(records), err)
	}
	var copied time.Duration
	if copyTime != nil {
		copied = *copyTime
	}
	return &txStaged{tx: tx, records: len(records), res: FlushResult{SQLOps: ops, Phases: FlushPhases{
		Begin: t1.Sub(t0), Copy: copied, Statements: time.Since(t1) - copied}}}, nil
}

// begin starts the batch's transaction, and on pgx times its COPY statements into copyTime:
// on a pgx pool lazily (BEGIN goes with the writer's first statement).
func (f txFlusher[T]) begin(ctx context.Context) (tx sqldb.Tx, copyTime *time.Duration, err error) {
	if f.pgx == nil {
		tx, err = f.db.Begin(ctx)
		return tx, nil, err
	}
	var ptx pgx.Tx
	if pool, ok := f.pgx.(*pgxpool.Pool); ok {
		ptx, err = beginLazily(ctx, pool)
	} else {
		ptx, err = f.pgx.Begin(ctx)
	}
	if err != nil {
		return nil, nil, err
	}
	copyTime = new(time.Duration)
	return sqldb.PgxTx(&timedTx{Tx: ptx, copy: copyTime}), copyTime, nil
}

// txStaged is TxFlusher's written, uncommitted batch.
type txStaged struct {
	tx      sqldb.Tx
	records int
	res     FlushResult
}

func (s *txStaged) Commit(ctx context.Context) (FlushResult, error) {
	t := time.Now()
	if err := s.tx.Commit(ctx); err != nil {
		if sqldb.CommitOutcomeUnknown(err) { // the connection broke: committed or not, nobody knows
			return FlushResult{}, fmt.Errorf("%w: commit batch of %d records: %w", ErrCommitUnknown, s.records, err)
		}
		return FlushResult{}, fmt.Errorf("queue: commit batch of %d records: %w", s.records, err)
	}
	s.res.Phases.Commit = time.Since(t)
	return s.res, nil
}

func (s *txStaged) Rollback(ctx context.Context) { sqldb.Rollback(ctx, s.tx) }

// timedTx is the pgx transaction a TxFlusher hands its TxWriter: it adds the time spent in
// CopyFrom, on it and on the savepoints begun from it, to copy.
type timedTx struct {
	pgx.Tx
	copy *time.Duration
}

func (t *timedTx) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	began := time.Now()
	n, err := t.Tx.CopyFrom(ctx, table, columns, src)
	*t.copy += time.Since(began)
	return n, err
}

func (t *timedTx) Begin(ctx context.Context) (pgx.Tx, error) {
	sp, err := t.Tx.Begin(ctx)
	if err != nil {
		return nil, err
	}
	return &timedTx{Tx: sp, copy: t.copy}, nil
}

// ErrCommitUnknown wraps a TxFlusher error whose COMMIT was sent but never answered (the
// connection broke): the batch may be committed or not. A retried batch must therefore be
// idempotent; a caller that wrote inline (PolicySync) must look its record up, not count it
// failed.
var ErrCommitUnknown = errors.New("queue: commit outcome unknown")

// Interface is what a service holds, whichever backend it chose: the in-memory Queue implements
// it, and so does the Redis-streams one (queue/redisq). The Metrics and the invariant in the
// package doc apply to every backend.
//
// EnqueueAll offers a group of records (a request's) as one unit: all are accepted
// together or none is. When the queue has no room for the whole group, the FullPolicy
// applies to the whole group: PolicySync writes every record of it in one Flush (one
// transaction), PolicyDrop drops them all, PolicyBlock waits until all fit (a
// group of more records than Capacity never can: it is rejected with ErrGroupTooLarge). So a
// caller never sees part of a group queued while the rest failed. Enqueue is EnqueueAll of
// one record. The counters count records, not calls: a rejected group adds all its records to
// rejected_total.
type Interface[T any] interface {
	Enqueue(ctx context.Context, rec T) (Outcome, error)
	EnqueueAll(ctx context.Context, recs []T) (Outcome, error)
	Close(ctx context.Context) error
	Metrics() Metrics
	PersistLag() *hist.Histogram
	Pause()
	Resume()
}

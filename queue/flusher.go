package queue

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/hotspotkit/hotspotkit/hist"
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
	// Phases is where the flush's time went, as far as the Flusher can tell (PgFlusher fills
	// it). A Flusher that leaves it zero has its whole call counted as statements.
	Phases FlushPhases
}

// FlushPhases splits a committed flush's time: BEGIN (on a ConnAcquirer, taking a connection:
// BEGIN itself goes with the first statement), the COPY statements the writer sent
// (PgFlusher times every CopyFrom on its transaction and its savepoints), the rest of the
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
// begins, commits or rolls it back. It returns the number of statements it sent.
type TxWriter[T any] interface {
	WriteBatch(ctx context.Context, tx pgx.Tx, records []T) (sqlOps int, err error)
}

// TxBeginner starts a transaction. *pgxpool.Pool satisfies it (and so does *pgx.Conn, which
// is only safe with one worker and no PolicySync).
type TxBeginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// rollbackTimeout bounds a rollback issued after the flush context was cancelled.
const rollbackTimeout = 5 * time.Second

// Rollback rolls tx back on a live context even when ctx is done (its cancellation may be why
// the transaction failed), so that the connection goes back to the pool instead of being
// closed. Its error is dropped: the one that led to it is the one worth reporting.
func Rollback(ctx context.Context, tx pgx.Tx) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
	defer cancel()
	_ = tx.Rollback(rctx)
}

// CommitOutcomeUnknown says whether a failed COMMIT may have committed: a server error means
// the server refused it; anything else (a broken connection, a timeout) may have come before
// or after the server committed.
func CommitOutcomeUnknown(err error) bool {
	var refused *pgconn.PgError
	return !errors.As(err, &refused)
}

// PgFlusher adapts a TxWriter to a Flusher: Begin on pool, WriteBatch, Commit; on any error the
// transaction is rolled back and the error returned. On a ConnAcquirer (*pgxpool.Pool) the
// BEGIN is sent with the writer's first statement, not on its own (ConnAcquirer). A Commit error is reported as a failure,
// so a batch whose commit outcome is unknown (connection lost during COMMIT) is retried:
// writers whose statements are not idempotent may then apply it twice. The Flusher it returns
// is a StagedFlusher, so a queue with Options.Pipeline writes a worker's next batch while the
// previous one commits.
func PgFlusher[T any](pool TxBeginner, w TxWriter[T]) Flusher[T] {
	return pgFlusher[T]{db: pool, w: w}
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

type pgFlusher[T any] struct {
	db TxBeginner
	w  TxWriter[T]
}

var _ StagedFlusher[int] = pgFlusher[int]{}

func (f pgFlusher[T]) Flush(ctx context.Context, records []T) (FlushResult, error) {
	st, err := f.Stage(ctx, records)
	if err != nil {
		return FlushResult{}, err
	}
	return st.Commit(ctx)
}

func (f pgFlusher[T]) Stage(ctx context.Context, records []T) (Staged, error) {
	t0 := time.Now()
	tx, err := f.begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("queue: begin flush of %d records: %w", len(records), err)
	}
	t1 := time.Now()
	timed := &timedTx{Tx: tx, copy: new(time.Duration)}
	ops, err := f.w.WriteBatch(ctx, timed, records)
	if err != nil {
		// The flush context may be the reason for the failure; roll back on a live one so
		// the connection goes back to the pool instead of being closed.
		Rollback(ctx, tx) // the write error is the one worth reporting
		return nil, fmt.Errorf("queue: write batch of %d records: %w", len(records), err)
	}
	copyTime := *timed.copy
	return &pgStaged{tx: tx, records: len(records), res: FlushResult{SQLOps: ops, Phases: FlushPhases{
		Begin: t1.Sub(t0), Copy: copyTime, Statements: time.Since(t1) - copyTime}}}, nil
}

// begin starts the batch's transaction: lazily on a ConnAcquirer (BEGIN goes with the writer's
// first statement), else with the TxBeginner's Begin.
func (f pgFlusher[T]) begin(ctx context.Context) (pgx.Tx, error) {
	if pool, ok := f.db.(ConnAcquirer); ok {
		return beginLazily(ctx, pool)
	}
	return f.db.Begin(ctx)
}

// pgStaged is PgFlusher's written, uncommitted batch.
type pgStaged struct {
	tx      pgx.Tx
	records int
	res     FlushResult
}

func (s *pgStaged) Commit(ctx context.Context) (FlushResult, error) {
	t := time.Now()
	if err := s.tx.Commit(ctx); err != nil {
		if CommitOutcomeUnknown(err) { // the connection broke: committed or not, nobody knows
			return FlushResult{}, fmt.Errorf("%w: commit batch of %d records: %w", ErrCommitUnknown, s.records, err)
		}
		return FlushResult{}, fmt.Errorf("queue: commit batch of %d records: %w", s.records, err)
	}
	s.res.Phases.Commit = time.Since(t)
	return s.res, nil
}

func (s *pgStaged) Rollback(ctx context.Context) { Rollback(ctx, s.tx) }

// timedTx is the transaction a PgFlusher hands its TxWriter: it adds the time spent in
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

// ErrCommitUnknown wraps a PgFlusher error whose COMMIT was sent but never answered (the
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

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
}

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
// transaction is rolled back and the error returned. A Commit error is reported as a failure,
// so a batch whose commit outcome is unknown (connection lost during COMMIT) is retried:
// writers whose statements are not idempotent may then apply it twice.
func PgFlusher[T any](pool TxBeginner, w TxWriter[T]) Flusher[T] {
	return pgFlusher[T]{db: pool, w: w}
}

type pgFlusher[T any] struct {
	db TxBeginner
	w  TxWriter[T]
}

func (f pgFlusher[T]) Flush(ctx context.Context, records []T) (FlushResult, error) {
	tx, err := f.db.Begin(ctx)
	if err != nil {
		return FlushResult{}, fmt.Errorf("queue: begin flush of %d records: %w", len(records), err)
	}
	ops, err := f.w.WriteBatch(ctx, tx, records)
	if err != nil {
		// The flush context may be the reason for the failure; roll back on a live one so
		// the connection goes back to the pool instead of being closed.
		Rollback(ctx, tx) // the write error is the one worth reporting
		return FlushResult{}, fmt.Errorf("queue: write batch of %d records: %w", len(records), err)
	}
	if err := tx.Commit(ctx); err != nil {
		if CommitOutcomeUnknown(err) { // the connection broke: committed or not, nobody knows
			return FlushResult{}, fmt.Errorf("%w: commit batch of %d records: %w", ErrCommitUnknown, len(records), err)
		}
		return FlushResult{}, fmt.Errorf("queue: commit batch of %d records: %w", len(records), err)
	}
	return FlushResult{SQLOps: ops}, nil
}

// ErrCommitUnknown wraps a PgFlusher error whose COMMIT was sent but never answered (the
// connection broke): the batch may be committed or not. A retried batch must therefore be
// idempotent; a caller that wrote inline (PolicySync) must look its record up, not count it
// failed.
var ErrCommitUnknown = errors.New("queue: commit outcome unknown")

// Backend is what a service holds, whichever backend it chose: the in-memory Queue implements
// it, and so does the Redis-streams one (queue/redisq). The Metrics and the invariant in the package doc apply to every
// backend.
//
// EnqueueAll offers a group of records (a request's) as one unit: all are accepted
// together or none is. When the queue has no room for the whole group, the FullPolicy
// applies to the whole group: PolicySync writes every record of it in one Flush (one
// transaction), PolicyDrop drops them all, PolicyBlock waits until all fit (a
// group of more records than Capacity never can: it is rejected with ErrGroupTooLarge). So a
// caller never sees part of a group queued while the rest failed. Enqueue is EnqueueAll of
// one record. The counters count records, not calls: a rejected group adds all its records to
// rejected_total.
type Backend[T any] interface {
	Enqueue(ctx context.Context, rec T) (Outcome, error)
	EnqueueAll(ctx context.Context, recs []T) (Outcome, error)
	Close(ctx context.Context) error
	Metrics() Metrics
	PersistLag() *hist.Histogram
	Pause()
	Resume()
}

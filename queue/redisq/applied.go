package redisq

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/hotspotkit/hotspotkit/sqldb"
)

// The applied-ids table: see the package doc ("Applied ids").

// AppliedTableSQL returns the statement that creates the applied-ids table named table (a
// name, or schema.name) unless it exists, in dialect d: what a consuming New runs when it
// finds no such table, and what a deployment whose database role may not create tables runs
// beforehand.
func AppliedTableSQL(d sqldb.Dialect, table string) (string, error) {
	s, err := newApplied(d, table)
	if err != nil {
		return "", err
	}
	return s.createSQL(), nil
}

// applied is one dialect's statements on the applied-ids table.
type applied interface {
	// name is the table's name, quoted.
	name() string
	// createSQL creates the table unless it exists.
	createSQL() string
	// holds says why the table cannot hold stream's ids (nil: it can).
	holds(stream string) error
	// exists says whether the table exists.
	exists(ctx context.Context, q sqldb.Querier) (bool, error)
	// lockCreation serialises, until tx ends, the processes that may create the table.
	lockCreation(ctx context.Context, tx sqldb.Tx) error
	// record records a batch's entry ids of stream in tx and says which were not there yet
	// (written by tx itself), and how many statements that took.
	record(ctx context.Context, tx sqldb.Tx, stream string, ids []string) (fresh map[string]bool, statements int, err error)
	// present returns which of ids of stream are there.
	present(ctx context.Context, q sqldb.Querier, stream string, ids []string) ([]string, error)
	// prune deletes stream's ids below bound and says how many.
	prune(ctx context.Context, tx sqldb.Tx, stream string, bound streamID) (int64, error)
}

// newApplied are the statements on table (a name, or schema.name) in dialect d.
func newApplied(d sqldb.Dialect, table string) (applied, error) {
	parts, err := tableParts(table)
	if err != nil {
		return nil, err
	}
	switch d {
	case sqldb.Postgres:
		return newPgApplied(parts), nil
	case sqldb.MySQL:
		return newMySQLApplied(parts), nil
	}
	return nil, fmt.Errorf("redisq: the applied-ids table has no statements for %s", d)
}

// tableParts splits a table name, optionally schema-qualified, into its parts.
func tableParts(table string) ([]string, error) {
	parts := strings.Split(table, ".")
	if len(parts) > 2 {
		return nil, fmt.Errorf("AppliedTable %q: want a name or schema.name", table)
	}
	for _, p := range parts {
		if p == "" || len(p) > 63 {
			return nil, fmt.Errorf("AppliedTable %q: a name must be 1 to 63 bytes", table)
		}
	}
	return parts, nil
}

// pgApplied is the table on PostgreSQL: a batch's ids go in as one array, and RETURNING
// names those that were new.
type pgApplied struct {
	table, create, insert, query, pruneSQL string
}

func newPgApplied(parts []string) *pgApplied {
	t := sqldb.Postgres.QuoteIdent(parts...)
	return &pgApplied{
		table: t,
		create: `CREATE TABLE IF NOT EXISTS ` + t + ` (
    stream   text NOT NULL,
    entry_id text NOT NULL,
    PRIMARY KEY (stream, entry_id)
)`,
		insert: `INSERT INTO ` + t + ` (stream, entry_id)
SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING RETURNING entry_id`,
		query: `SELECT entry_id FROM ` + t + ` WHERE stream = $1 AND entry_id = ANY($2::text[])`,
		pruneSQL: `DELETE FROM ` + t + ` WHERE stream = $1
AND (split_part(entry_id, '-', 1)::bigint, split_part(entry_id, '-', 2)::bigint) < ($2::bigint, $3::bigint)`,
	}
}

func (p *pgApplied) name() string       { return p.table }
func (p *pgApplied) createSQL() string  { return p.create }
func (p *pgApplied) holds(string) error { return nil }

func (p *pgApplied) exists(ctx context.Context, q sqldb.Querier) (bool, error) {
	var ok bool
	err := q.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, p.table).Scan(&ok)
	return ok, err
}

// lockCreation takes a transaction's advisory lock: two CREATE TABLE IF NOT EXISTS at once
// can both pass the check and one fail on the catalog's unique index.
func (p *pgApplied) lockCreation(ctx context.Context, tx sqldb.Tx) error {
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, p.table)
	return err
}

func (p *pgApplied) record(ctx context.Context, tx sqldb.Tx, stream string, ids []string) (map[string]bool, int, error) {
	rows, err := tx.Query(ctx, p.insert, stream, ids)
	if err != nil {
		return nil, 1, err
	}
	fresh, err := sqldb.CollectRows[string](rows)
	if err != nil {
		return nil, 1, err
	}
	isNew := make(map[string]bool, len(fresh))
	for _, id := range fresh {
		isNew[id] = true
	}
	return isNew, 1, nil
}

func (p *pgApplied) present(ctx context.Context, q sqldb.Querier, stream string, ids []string) ([]string, error) {
	rows, err := q.Query(ctx, p.query, stream, ids)
	if err != nil {
		return nil, err
	}
	return sqldb.CollectRows[string](rows)
}

func (p *pgApplied) prune(ctx context.Context, tx sqldb.Tx, stream string, bound streamID) (int64, error) {
	return tx.Exec(ctx, p.pruneSQL, stream, int64(bound.ms), int64(bound.seq))
}

// ensureAppliedTable creates the applied-ids table unless it exists. A role that may not
// create tables passes when the table is there: it is looked up first. Processes of a run
// that start together take a lock, so one creates it and the others find it.
func (q *Queue[K, T]) ensureAppliedTable(ctx context.Context) error {
	tx, err := q.o.DB.Begin(ctx)
	if err != nil {
		return fmt.Errorf("redisq: checking the applied-ids table: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	exists, err := q.applied.exists(ctx, tx)
	if err != nil {
		return fmt.Errorf("redisq: checking the applied-ids table %s: %w", q.applied.name(), err)
	}
	if exists {
		return nil
	}
	if err := q.applied.lockCreation(ctx, tx); err != nil {
		return fmt.Errorf("redisq: creating the applied-ids table %s: %w", q.applied.name(), err)
	}
	if _, err := tx.Exec(ctx, q.applied.createSQL()); err != nil {
		return fmt.Errorf("redisq: creating the applied-ids table %s: %w", q.applied.name(), err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("redisq: creating the applied-ids table %s: %w", q.applied.name(), err)
	}
	return nil
}

// streamID is a stream entry id, ms-seq.
type streamID struct{ ms, seq uint64 }

func parseStreamID(s string) (streamID, error) {
	ms, seq, ok := strings.Cut(s, "-")
	a, err1 := strconv.ParseUint(ms, 10, 64)
	b, err2 := strconv.ParseUint(seq, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		return streamID{}, fmt.Errorf("redisq: %q is not a stream entry id", s)
	}
	return streamID{a, b}, nil
}

func (a streamID) less(b streamID) bool { return a.ms < b.ms || (a.ms == b.ms && a.seq < b.seq) }

// pruneBound returns the id below which no entry of sh's stream can be delivered again: the
// first entry's, or, with the stream empty, the one after the last id it generated. The last
// generated id is read first, so an entry added between the two reads lies above it.
func (q *Queue[K, T]) pruneBound(ctx context.Context, sh *shard) (streamID, error) {
	pipe := q.rdb.Pipeline()
	info := pipe.XInfoStream(ctx, sh.keys.stream)
	first := pipe.XRangeN(ctx, sh.keys.stream, "-", "+", 1)
	_, _ = pipe.Exec(ctx)
	if err := errors.Join(info.Err(), first.Err()); err != nil {
		return streamID{}, fmt.Errorf("redisq: reading %s's first entry: %w", sh.keys.stream, err)
	}
	if msgs := first.Val(); len(msgs) > 0 {
		return parseStreamID(msgs[0].ID)
	}
	last, err := parseStreamID(info.Val().LastGeneratedID)
	if err != nil {
		return streamID{}, err
	}
	last.seq++ // the empty stream keeps nothing up to its last id
	return last, nil
}

// pruneBelow deletes sh's applied ids below bound and returns how many.
func (q *Queue[K, T]) pruneBelow(ctx context.Context, sh *shard, bound streamID) (int64, error) {
	if bound.ms > math.MaxInt64 || bound.seq > math.MaxInt64 {
		return 0, nil // beyond bigint: no id of ours gets there
	}
	tx, err := q.o.DB.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	n, err := q.applied.prune(ctx, tx, sh.keys.stream, bound)
	if err != nil {
		return 0, fmt.Errorf("redisq: pruning %s: %w", q.applied.name(), err)
	}
	return n, tx.Commit(ctx)
}

// pruner is the state of a process's pruning: per shard, the bound its previous pass read.
type pruner struct {
	prev  map[*shard]streamID
	known map[*shard]bool
}

// prunePass reads each shard's bound and deletes the ids below the one the previous pass read
// (or below this one, should the stream have been reset to lower ids since): an id goes once
// its entry has been out of the stream for at least one PruneInterval, so that a consumer
// still writing a batch that another one took over and wrote finds its ids there. Every
// consuming process prunes every shard, whoever reads it.
func (q *Queue[K, T]) prunePass(ctx context.Context, p *pruner) (int64, error) {
	if p.prev == nil {
		p.prev, p.known = map[*shard]streamID{}, map[*shard]bool{}
	}
	var total int64
	var errs []error
	for _, sh := range q.shards {
		b, err := q.pruneBound(ctx, sh)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		below, ok := p.prev[sh], p.known[sh]
		if b.less(below) {
			below = b
		}
		p.prev[sh], p.known[sh] = b, true
		if !ok {
			continue
		}
		n, err := q.pruneBelow(ctx, sh, below)
		total += n
		errs = append(errs, err)
	}
	return total, errors.Join(errs...)
}

// prune runs a pruning pass every PruneInterval until the consumers leave.
func (q *Queue[K, T]) prune() {
	defer q.wg.Done()
	var p pruner
	q.every(q.o.PruneInterval, func() bool {
		_, _ = q.prunePass(q.life.Ctx(), &p) // a failed pass is tried again on the next tick
		return true
	})
}

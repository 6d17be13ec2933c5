// Package candidates is the request-candidate persistence hot spot: every request dispatches
// one candidate (two when it is retried on another provider) and records each candidate's
// lifecycle — pending, streaming, then success, failed or cancelled — in request_candidates,
// one row per slot (request_id, candidate_index, retry_index). It compares awaiting every
// write inline with handing the writes to the async queue, with and without merging the
// writes of a slot before the flush, and verifies every slot's final row exactly.
//
// It owns the suite's SQL (its table, request_candidates.sql, and the guarded upsert, in
// PostgreSQL's dialect and in MySQL's and MariaDB's), its lifecycle generator, the merge rules
// and the verification; the engine owns everything else.
package candidates

import (
	"context"
	"embed"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit"
)

// sqlFiles are the suite's own tables (request_candidates.sql, and MySQL's in mysql/); package
// schema creates the shared ones.
//
//go:embed *.sql mysql/*.sql
var sqlFiles embed.FS

// Name is the suite's (and binary's) name.
const Name = "request_candidate_persistence_baseline"

// Suite implements testkit.Suite, Flagger, Validator, Reconciler and SummaryWriter.
type Suite struct {
	persistence string
	retryRate   float64
	failureRate float64
}

// New returns the suite.
func New() *Suite { return &Suite{persistence: PersistTerminal} }

var (
	_ testkit.Flagger       = (*Suite)(nil)
	_ testkit.Validator     = (*Suite)(nil)
	_ testkit.Reconciler    = (*Suite)(nil)
	_ testkit.SummaryWriter = (*Suite)(nil)
)

var modes = []testkit.Mode{testkit.Sync, testkit.Async, testkit.AsyncCompact}

// Info describes the suite.
func (*Suite) Info() testkit.Info {
	return testkit.Info{
		Name:    Name,
		Summary: "request-candidate lifecycle records upserted per slot (request, candidate, retry)",
		Description: `Each request dispatches a candidate and records its lifecycle in request_candidates,
one row per slot (request_id, candidate_index, retry_index). --retry-rate sends a share of the
requests on to a second candidate (candidate_index 1) after the first fails; --failure-rate
makes a share end failed (a tenth of those cancelled). --persistence chooses the writes:
  full       pending, streaming, terminal: three writes per candidate
  terminal   the dispatched record (pending) and the terminal one: two per candidate
  none       no writes (measures the harness)
Every write is an upsert whose SQL guards the order (a stored terminal status survives a late
pending or streaming write; streaming survives pending; present columns replace NULL ones;
extra_data merges; created_at keeps the earliest).
  sync           each write awaited inline, one statement each, the request's writes in one
                 transaction (all or nothing)
  async          writes enqueued; workers upsert each batch with one statement per layer in
                 which no slot repeats (a slot's writes stay in order)
  async-compact  as async, but a slot's writes in a batch are merged first: one statement
                 per batch
Every slot's final row, the rows per request_id and the counts by status are then checked
exactly against the lifecycles the seed generates.`,
		Example:      Name + " --requests 6000 --concurrency 6000 --persistence terminal --modes sync,async,async-compact --output /tmp/candidates.json",
		Modes:        modes,
		DefaultModes: modes,
		HotTables:    []string{"request_candidates"},
		// Two or three queue records per request (more with retries): the queue holds as
		// many requests as the one-record suites'.
		Defaults:      map[string]string{"queue-capacity": strconv.Itoa(3 * testkit.DefaultQueueCapacity)},
		QueueBackends: []string{testkit.BackendMemory, testkit.BackendRedis},
		SQL:           sqlFiles,
	}
}

// Flags registers the suite's flags.
func (s *Suite) Flags(fs *pflag.FlagSet) {
	fs.StringVar(&s.persistence, "persistence", PersistTerminal, "which candidate states are written: full (pending, streaming, terminal), terminal (dispatch + terminal) or none")
	fs.Float64Var(&s.retryRate, "retry-rate", 0, "share of requests (0..1) whose first candidate fails and that go on to a second candidate")
	fs.Float64Var(&s.failureRate, "failure-rate", 0, "share of requests (0..1) that end failed; a tenth of those end cancelled")
}

// Validate rejects flag values that make no sense, before any work starts.
func (s *Suite) Validate(testkit.Config) error {
	var errs []string
	switch s.persistence {
	case PersistFull, PersistTerminal, PersistNone:
	default:
		errs = append(errs, fmt.Sprintf("--persistence %q: want full, terminal or none", s.persistence))
	}
	if s.retryRate < 0 || s.retryRate > 1 {
		errs = append(errs, fmt.Sprintf("--retry-rate %g: want 0..1", s.retryRate))
	}
	if s.failureRate < 0 || s.failureRate > 1 {
		errs = append(errs, fmt.Sprintf("--failure-rate %g: want 0..1", s.failureRate))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

func (s *Suite) lifecycle(r *testkit.Run) lifecycle {
	return lifecycle{seed: uint64(r.Config().Seed), persistence: s.persistence, retryRate: s.retryRate, failureRate: s.failureRate}
}

// Seed writes nothing: request_candidates starts empty.
func (*Suite) Seed(context.Context, *testkit.Run) error { return nil }

// Workload returns one request in r.Mode().
func (s *Suite) Workload(ctx context.Context, r *testkit.Run) (*testkit.Workload, error) {
	g, d := s.lifecycle(r), dialectOf(r.Dialect())
	switch r.Mode() {
	case testkit.Sync:
		return &testkit.Workload{Op: syncOp(r, g, d)}, nil
	case testkit.Async, testkit.AsyncCompact:
		return testkit.AsyncWorkload(ctx, r, testkit.AsyncSpec[slot, record]{
			Records: g.writes,
			Key:     keyOf,
			Merge:   merge,
			Compare: compareSlots,
			Writer:  func(bool) testkit.TxWriter[record] { return batchWriter{d} },
		})
	}
	return nil, fmt.Errorf("mode %q not supported", r.Mode())
}

// syncOp awaits a request's writes inline, in one transaction: each write is its own upsert
// statement, in lifecycle order, as a gateway sends a candidate's state when it changes, but
// the request commits once, so a failure leaves none of it behind. The guarded upserts make
// the transaction idempotent: run again after a COMMIT whose outcome was unknown (a retry
// under --max-tries), it leaves every slot's row as it was.
func syncOp(r *testkit.Run, g lifecycle, d dialect) testkit.Op {
	return r.SyncTx(func(ctx context.Context, tx sqldb.Tx, i int64) error {
		writes := g.writes(i)
		for k := range writes {
			if err := d.upsert(ctx, tx, writes[k:k+1]); err != nil {
				return err
			}
		}
		return nil
	})
}

// Persisted finds every request's final record: its last candidate's row in a terminal status.
func (s *Suite) Persisted(ctx context.Context, r *testkit.Run, n int64) ([]int32, error) {
	g := s.lifecycle(r)
	if g.persistence == PersistNone {
		return nil, testkit.ErrNothingToReconcile
	}
	rows, err := r.Admin().Query(ctx, `
		SELECT request_id, candidate_index FROM request_candidates
		WHERE retry_index = 0 AND status IN ('success', 'failed', 'cancelled')`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	counts := make([]int32, n)
	for rows.Next() {
		var id string
		var cand int32
		if err := rows.Scan(&id, &cand); err != nil {
			return nil, err
		}
		i, err := strconv.ParseInt(strings.TrimPrefix(id, "req-"), 10, 64)
		if err != nil || i < 0 || i >= n {
			return nil, fmt.Errorf("request_candidates row with unexpected request_id %q", id)
		}
		if cand == g.lastCandidate(i) {
			counts[i]++
		}
	}
	return counts, rows.Err()
}

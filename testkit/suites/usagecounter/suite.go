// Package usagecounter is the usage-counter hot spot: every request records one usage row
// and bumps the counters of the api key, provider key, model and provider it used — with
// --hot-keys 1, the same four rows for every request. It owns the suite's SQL, its seed and
// its exact verification; the engine (testkit) owns everything else.
package usagecounter

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/counters"
)

// Name is the suite's (and binary's) name.
const Name = "usage_counter_hotspot_baseline"

// Per-request constants: 10 input + 20 output tokens at 0.001 each request.
const (
	inputTokens  = 10
	outputTokens = 20
	totalTokens  = inputTokens + outputTokens
	cost         = counters.Money(100_000) // 0.001
)

// Suite implements testkit.Suite.
type Suite struct{}

// New returns the suite.
func New() *Suite { return &Suite{} }

// Info describes the suite.
func (*Suite) Info() testkit.Info {
	return testkit.Info{
		Name:    Name,
		Summary: "usage accounting onto hot api key / provider key / model / provider counter rows",
		Description: `Each request records one usage row (10+20 tokens, cost 0.001) and adds it to the
counters of its api key (+1 request, +30 tokens, +cost, last_used_at), provider key (+1 request,
+1 success, +30 tokens, +cost, +response time), model (+1 usage) and provider (+cost monthly).
  sync           one transaction per request: INSERT usage, UPDATE each hot row (lock waits)
  outbox         one transaction per request: INSERT usage + 4 delta rows; a flush loop claims
                 deltas (FOR UPDATE SKIP LOCKED), aggregates them per row and applies them
  async          the request enqueues its usage; workers INSERT usage rows in batches and apply
                 every counter increment as its own UPDATE, in order
  async-compact  as async, but increments for the same row are merged first: one UPDATE per
                 hot row per batch
Every counter is then checked exactly against the requests that succeeded.`,
		Example:       Name + " --requests 20000 --concurrency 1000 --modes sync,outbox,async,async-compact --output /tmp/counter.json",
		Modes:         counters.Modes,
		DefaultModes:  counters.Modes,
		HotTables:     []string{"api_keys", "provider_api_keys", "global_models", "providers"},
		QueueBackends: []string{testkit.BackendMemory, testkit.BackendRedis},
		Slots:         true,
		TotalSQL:      `SELECT total_requests, total_tokens, total_cost FROM api_keys_totals WHERE id = 'key-hot-0'`,
	}
}

// hot row ids for hot index h.
func userID(h int) string        { return "user-hot-" + strconv.Itoa(h) }
func apiKeyID(h int) string      { return "key-hot-" + strconv.Itoa(h) }
func providerKeyID(h int) string { return "pkey-hot-" + strconv.Itoa(h) }
func modelID(h int) string       { return "model-hot-" + strconv.Itoa(h) }
func providerID(h int) string    { return "provider-hot-" + strconv.Itoa(h) }

// Seed creates --hot-keys sets of hot rows with zeroed counters, each split into --slots.
func (*Suite) Seed(ctx context.Context, r *testkit.Run) error {
	if err := testkit.ExecAll(ctx, r.Admin(), []string{
		`INSERT INTO users (id, name) SELECT 'user-hot-' || h, 'hot user ' || h FROM generate_series(0, $1 - 1) h`,
		`INSERT INTO api_keys (id, user_id) SELECT 'key-hot-' || h, 'user-hot-' || h FROM generate_series(0, $1 - 1) h`,
		`INSERT INTO providers (id, name) SELECT 'provider-hot-' || h, 'provider ' || h FROM generate_series(0, $1 - 1) h`,
		`INSERT INTO provider_api_keys (id, provider_id) SELECT 'pkey-hot-' || h, 'provider-hot-' || h FROM generate_series(0, $1 - 1) h`,
		`INSERT INTO global_models (id, name) SELECT 'model-hot-' || h, 'gpt-5' FROM generate_series(0, $1 - 1) h`,
	}, r.Config().HotKeys); err != nil {
		return err
	}
	return counters.SeedSlots(ctx, r.Admin(), r.Slots())
}

// usageRow is one request's usage record.
type usageRow struct {
	index      int64
	requestID  string
	hot        int
	slot       int // of every hot row it adds to (counters.Slots.Pick)
	responseMs int32
	at         time.Time
}

// epoch anchors last_used_at so that it is deterministic per request index.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// rowFor is request i's usage row as written in tx (nil where no session writes it: its slot
// is then the one counters.Slots.Of picks; see counters.Slots.InTx).
func rowFor(r *testkit.Run, tx pgx.Tx, i int64) usageRow {
	id := requestID(i)
	return usageRow{
		index:      i,
		requestID:  id,
		slot:       counters.SlotsOf(r).For(tx, i, id),
		hot:        int(i % int64(r.Config().HotKeys)),
		responseMs: responseMs(i),
		at:         epoch.Add(time.Duration(i) * time.Millisecond),
	}
}

func requestID(i int64) string { return "req-" + strconv.FormatInt(i, 10) }

func responseMs(i int64) int32 { return int32(50 + i%100) }

// deltas are the four counter increments of one usage row, in key order, to its slot.
func (u usageRow) deltas() []counters.Delta {
	return counters.InSlot([]counters.Delta{
		{Key: counters.Key{Kind: counters.APIKeyUsage, Target: apiKeyID(u.hot)}, Requests: 1, Tokens: totalTokens, Cost: cost, LastUsedAt: u.at},
		{Key: counters.Key{Kind: counters.ModelUsage, Target: modelID(u.hot)}, Requests: 1},
		{Key: counters.Key{Kind: counters.ProviderKeyUsage, Target: providerKeyID(u.hot)}, Requests: 1, Successes: 1, Tokens: totalTokens, Cost: cost, ResponseTimeMs: int64(u.responseMs)},
		{Key: counters.Key{Kind: counters.ProviderMonthly, Target: providerID(u.hot)}, Cost: cost},
	}, u.slot)
}

// queueSlot is the row's queue slot: its api key, and the slot of it the row adds to, so that
// the slots of one hot key can belong to different queue workers.
func (u usageRow) queueSlot() counters.Key {
	return counters.Key{Kind: counters.APIKeyUsage, Target: apiKeyID(u.hot), Slot: u.slot}
}

// usageColumns are the columns a usage row is written with.
var usageColumns = []string{"request_id", "user_id", "api_key_id", "provider_api_key_id", "provider_id", "model_id",
	"input_tokens", "output_tokens", "total_tokens", "cost", "response_time_ms", "created_at"}

func (u usageRow) values() []any {
	return []any{u.requestID, userID(u.hot), apiKeyID(u.hot), providerKeyID(u.hot), providerID(u.hot), modelID(u.hot),
		int32(inputTokens), int32(outputTokens), int32(totalTokens), cost.Numeric(), u.responseMs, u.at}
}

// copyThreshold is the batch size from which COPY (three round trips with its savepoint)
// beats one INSERT … ON CONFLICT statement.
const copyThreshold = 64

// insertUsage writes rows and returns the ones that were new: a row whose request_id is
// already there is skipped, so a redelivered or retried request never counts twice. The fast
// path for batches is COPY inside a savepoint; only when that hits an existing request_id (a retry after
// a commit whose outcome was unknown) does it fall back to INSERT … ON CONFLICT DO NOTHING.
// It returns the number of statements sent.
func insertUsage(ctx context.Context, tx pgx.Tx, rows []usageRow) ([]usageRow, int, error) {
	if len(rows) < copyThreshold {
		fresh, err := insertUsageIdempotent(ctx, tx, rows)
		return fresh, 1, err
	}
	sp, err := tx.Begin(ctx)
	if err != nil {
		return nil, 0, err
	}
	_, err = sp.CopyFrom(ctx, pgx.Identifier{"usage"}, usageColumns,
		pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) { return rows[i].values(), nil }))
	if err == nil {
		return rows, 1, sp.Commit(ctx) // releases the savepoint
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != pgerrcode.UniqueViolation {
		return nil, 1, fmt.Errorf("copy usage: %w", err)
	}
	if err := sp.Rollback(ctx); err != nil {
		return nil, 1, err
	}
	fresh, err := insertUsageIdempotent(ctx, tx, rows)
	return fresh, 2, err
}

func insertUsageIdempotent(ctx context.Context, tx pgx.Tx, rows []usageRow) ([]usageRow, error) {
	n := len(rows)
	ids, users, keys, pkeys, providers, models := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	rt := make([]int32, n)
	created := make([]time.Time, n)
	for i, u := range rows {
		ids[i], users[i], keys[i], pkeys[i] = u.requestID, userID(u.hot), apiKeyID(u.hot), providerKeyID(u.hot)
		providers[i], models[i], rt[i], created[i] = providerID(u.hot), modelID(u.hot), u.responseMs, u.at
	}
	res, err := tx.Query(ctx, `
		INSERT INTO usage (request_id, user_id, api_key_id, provider_api_key_id, provider_id, model_id,
			input_tokens, output_tokens, total_tokens, cost, response_time_ms, created_at)
		SELECT u.id, u.user_id, u.key_id, u.pkey_id, u.provider_id, u.model_id, $7, $8, $9, $10, u.rt, u.created
		FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $11::int4[], $12::timestamptz[])
		     AS u(id, user_id, key_id, pkey_id, provider_id, model_id, rt, created)
		ON CONFLICT (request_id) DO NOTHING
		RETURNING request_id`,
		ids, users, keys, pkeys, providers, models, inputTokens, outputTokens, totalTokens, cost.Numeric(), rt, created)
	if err != nil {
		return nil, fmt.Errorf("insert usage: %w", err)
	}
	inserted, err := pgx.CollectRows(res, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("insert usage: %w", err)
	}
	isNew := make(map[string]bool, len(inserted))
	for _, id := range inserted {
		isNew[id] = true
	}
	fresh := make([]usageRow, 0, len(inserted))
	for _, u := range rows {
		if isNew[u.requestID] {
			fresh = append(fresh, u)
		}
	}
	return fresh, nil
}

// Workload returns one request in r.Mode().
func (s *Suite) Workload(ctx context.Context, r *testkit.Run) (*testkit.Workload, error) {
	switch r.Mode() {
	case testkit.Sync:
		return &testkit.Workload{Op: r.SyncTx(func(ctx context.Context, tx pgx.Tx, i int64) error {
			_, err := writeEach(ctx, tx, []usageRow{rowFor(r, tx, i)})
			return err
		})}, nil
	case counters.Outbox:
		return counters.OutboxWorkload(ctx, r, r.SyncTx(func(ctx context.Context, tx pgx.Tx, i int64) error {
			u := rowFor(r, tx, i)
			fresh, _, err := insertUsage(ctx, tx, []usageRow{u})
			if err != nil || len(fresh) == 0 {
				return err
			}
			return counters.InsertOutbox(ctx, tx, u.requestID, u.deltas())
		}))
	case testkit.Async, testkit.AsyncCompact:
		return testkit.AsyncWorkload(ctx, r, testkit.AsyncSpec[counters.Key, event]{
			Records: func(i int64) []event { return []event{{first: rowFor(r, nil, i)}} },
			Key:     func(e event) counters.Key { return e.first.queueSlot() },
			Worker:  counters.SlotsOf(r).Worker(),
			Merge:   mergeEvents,
			Compare: counters.CompareKeys,
			Writer: func(compact bool) queue.TxWriter[event] {
				if compact {
					return writerFunc(writeCompacted)
				}
				return writerFunc(writeEach)
			},
			Codec: eventCodec{}, // --queue-backend redis (codec.go)
		})
	}
	return nil, fmt.Errorf("mode %q not supported", r.Mode())
}

// event is the queue record: a usage row, and with compaction the later rows of the same api
// key slot (the queue's slot) folded into it.
type event struct {
	first usageRow
	more  []usageRow
}

func mergeEvents(pending *event, newer event) {
	pending.more = append(pending.more, newer.first)
	pending.more = append(pending.more, newer.more...)
}

func flatten(events []event) []usageRow {
	n := 0
	for _, e := range events {
		n += 1 + len(e.more)
	}
	rows := make([]usageRow, 0, n)
	for _, e := range events {
		rows = append(rows, e.first)
		rows = append(rows, e.more...)
	}
	return rows
}

// writerFunc adapts a function over usage rows to a queue.TxWriter of events.
type writerFunc func(ctx context.Context, tx pgx.Tx, rows []usageRow) (int, error)

func (f writerFunc) WriteBatch(ctx context.Context, tx pgx.Tx, events []event) (int, error) {
	return f(ctx, tx, flatten(events))
}

// writeEach inserts the rows in one statement, then applies every counter increment of every
// new row as its own UPDATE, in order: what batching alone buys.
func writeEach(ctx context.Context, tx pgx.Tx, rows []usageRow) (int, error) {
	fresh, ops, err := insertUsage(ctx, tx, rows)
	if err != nil {
		return ops, err
	}
	for _, u := range fresh {
		n, err := counters.ApplyEach(ctx, tx, u.deltas())
		ops += n
		if err != nil {
			return ops, err
		}
	}
	return ops, nil
}

// writeCompacted inserts the rows in one statement, then merges the increments of the new rows
// per hot row and sends one array-based UPDATE per table.
func writeCompacted(ctx context.Context, tx pgx.Tx, rows []usageRow) (int, error) {
	fresh, ops, err := insertUsage(ctx, tx, rows)
	if err != nil {
		return ops, err
	}
	deltas := make([]counters.Delta, 0, 4*len(fresh))
	for _, u := range fresh {
		deltas = append(deltas, u.deltas()...)
	}
	n, err := counters.Apply(ctx, tx, deltas)
	return ops + n, err
}

// Persisted finds every request's usage row by request_id.
func (*Suite) Persisted(ctx context.Context, r *testkit.Run, n int64) ([]int32, error) {
	counts := make([]int32, n)
	rows, err := r.Admin().Query(ctx, `SELECT request_id FROM usage`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		i, err := strconv.ParseInt(strings.TrimPrefix(id, "req-"), 10, 64)
		if err != nil || i < 0 || i >= n {
			return nil, fmt.Errorf("usage row with unexpected request_id %q", id)
		}
		counts[i]++
	}
	return counts, rows.Err()
}

// expected totals per hot index.
type totals struct {
	requests, tokens, responseMs int64
	cost                         counters.Money
	lastUsed                     time.Time
}

// Verify checks every hot counter, the usage rows and the outbox exactly.
func (s *Suite) Verify(ctx context.Context, r *testkit.Run, res testkit.Result) ([]results.Check, error) {
	hot := r.Config().HotKeys
	want := make([]totals, hot)
	var applied int64
	n := res.Len()
	for i := int64(0); i < n; i++ {
		if !res.Applied(i) {
			continue
		}
		u := rowFor(r, nil, i)
		t := &want[u.hot]
		t.requests++
		t.tokens += totalTokens
		t.cost += cost
		t.responseMs += int64(u.responseMs)
		if u.at.After(t.lastUsed) {
			t.lastUsed = u.at
		}
		applied++
	}
	c := r.NewChecks()
	got, err := readTotals(ctx, r)
	if err != nil {
		return nil, err
	}
	var sum totals
	for _, t := range want {
		sum.requests += t.requests
		sum.tokens += t.tokens
		sum.cost += t.cost
		sum.responseMs += t.responseMs
	}
	c.Int("api_keys.total_requests (all hot keys)", sum.requests, got.keyRequests)
	c.Int("api_keys.total_tokens", sum.tokens, got.keyTokens)
	c.Money("api_keys.total_cost", sum.cost, got.keyCost)
	c.Int("provider_api_keys.request_count", sum.requests, got.pkeyRequests)
	c.Int("provider_api_keys.success_count", sum.requests, got.pkeySuccess)
	c.Int("provider_api_keys.total_tokens", sum.tokens, got.pkeyTokens)
	c.Money("provider_api_keys.total_cost", sum.cost, got.pkeyCost)
	c.Int("provider_api_keys.total_response_time_ms", sum.responseMs, got.pkeyResponseMs)
	c.Int("global_models.usage_count", sum.requests, got.modelUsage)
	c.Money("providers.monthly_used", sum.cost, got.providerMonthly)

	// Per hot logical row (the sum over its slots): every row of every hot table must hold
	// exactly its own share.
	reqs, toks, rts, costs, lasts := make([]int64, hot), make([]int64, hot), make([]int64, hot), make([]pgtype.Numeric, hot), make([]pgtype.Timestamptz, hot)
	for h, t := range want {
		reqs[h], toks[h], rts[h], costs[h] = t.requests, t.tokens, t.responseMs, t.cost.Numeric()
		lasts[h] = pgtype.Timestamptz{Time: t.lastUsed, Valid: !t.lastUsed.IsZero()}
	}
	matching, err := testkit.QueryInt(ctx, r.Admin(), `
		SELECT count(*) FROM unnest($1::int8[], $2::int8[], $3::int8[], $4::numeric[], $5::timestamptz[])
		     WITH ORDINALITY AS w(requests, tokens, rt, cost, last_used, h)
		JOIN api_keys_totals k ON k.id = 'key-hot-' || (w.h - 1)
		JOIN provider_api_keys_totals p ON p.id = 'pkey-hot-' || (w.h - 1)
		JOIN global_models_totals m ON m.id = 'model-hot-' || (w.h - 1)
		JOIN providers_totals v ON v.id = 'provider-hot-' || (w.h - 1)
		WHERE k.total_requests = w.requests AND k.total_tokens = w.tokens AND k.total_cost = w.cost
		  AND k.last_used_at IS NOT DISTINCT FROM w.last_used
		  AND p.request_count = w.requests AND p.success_count = w.requests AND p.error_count = 0
		  AND p.total_tokens = w.tokens AND p.total_cost = w.cost AND p.total_response_time_ms = w.rt
		  AND m.usage_count = w.requests AND v.monthly_used = w.cost`,
		reqs, toks, rts, costs, lasts)
	if err != nil {
		return nil, err
	}
	c.Int("hot key sets whose every counter is exact", int64(hot), matching)
	if err := counters.CheckSlots(ctx, r, c, "api_keys", "provider_api_keys", "global_models", "providers"); err != nil {
		return nil, err
	}

	usageRows, err := testkit.QueryInt(ctx, r.Admin(), `SELECT count(*) FROM usage`)
	if err != nil {
		return nil, err
	}
	c.Int("usage rows = applied requests", applied, usageRows)
	pending, err := testkit.QueryInt(ctx, r.Admin(), counters.OutboxPendingSQL)
	if err != nil {
		return nil, err
	}
	c.Int("outbox pending deltas", 0, pending)
	if r.Mode() == counters.Outbox {
		processed, err := testkit.QueryInt(ctx, r.Admin(), `SELECT count(*) FROM usage_counter_deltas WHERE processed_at IS NOT NULL`)
		if err != nil {
			return nil, err
		}
		c.Int("outbox processed deltas = 4 × applied requests", 4*applied, processed)
	}
	return c.List(), nil
}

type gotTotals struct {
	keyRequests, keyTokens, pkeyRequests, pkeySuccess, pkeyTokens, pkeyResponseMs, modelUsage int64
	keyCost, pkeyCost, providerMonthly                                                        string
}

func readTotals(ctx context.Context, r *testkit.Run) (gotTotals, error) {
	var g gotTotals
	err := r.Admin().QueryRow(ctx, `
		SELECT (SELECT sum(total_requests) FROM api_keys)::int8, (SELECT sum(total_tokens) FROM api_keys)::int8,
		       (SELECT sum(total_cost) FROM api_keys)::numeric(38,8)::text,
		       (SELECT sum(request_count) FROM provider_api_keys)::int8, (SELECT sum(success_count) FROM provider_api_keys)::int8,
		       (SELECT sum(total_tokens) FROM provider_api_keys)::int8, (SELECT sum(total_cost) FROM provider_api_keys)::numeric(38,8)::text,
		       (SELECT sum(total_response_time_ms) FROM provider_api_keys)::int8,
		       (SELECT sum(usage_count) FROM global_models)::int8, (SELECT sum(monthly_used) FROM providers)::numeric(38,8)::text`).
		Scan(&g.keyRequests, &g.keyTokens, &g.keyCost, &g.pkeyRequests, &g.pkeySuccess, &g.pkeyTokens, &g.pkeyCost,
			&g.pkeyResponseMs, &g.modelUsage, &g.providerMonthly)
	if err != nil {
		return g, fmt.Errorf("reading hot counters: %w", err)
	}
	return g, nil
}

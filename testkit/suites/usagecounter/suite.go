// Package usagecounter is the usage-counter hot spot: every request records one usage row
// and bumps the counters of the api key, provider key, model and provider it used — with
// --hot-keys 1, the same four rows for every request. It declares the suite on package
// counters (the rows, each request's deltas, the usage row as its claim) and owns that SQL;
// counters and the engine own everything else.
package usagecounter

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/counters"
	"github.com/hotspotkit/hotspotkit/testkit/decimal"
	"github.com/hotspotkit/hotspotkit/testkit/suites/gateway"
)

// Name is the suite's (and binary's) name.
const Name = "usage_counter_hotspot_baseline"

// Per-request constants: 10 input + 20 output tokens at 0.001 each request.
const (
	inputTokens  = 10
	outputTokens = 20
	totalTokens  = inputTokens + outputTokens
	cost         = decimal.Decimal(100_000) // 0.001
)

// New returns the suite.
func New() *counters.Suite {
	return counters.New(counters.Declaration{
		Info: testkit.Info{
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
			Example:   Name + " --requests 20000 --concurrency 1000 --modes sync,outbox,async,async-compact --output /tmp/counter.json",
			HotTables: []string{"api_keys", "provider_api_keys", "global_models", "providers"},
			TotalSQL:  `SELECT total_requests, total_tokens, total_cost FROM api_keys_totals WHERE id = 'key-hot-0'`,
		},
		SeedSQL: []string{
			`INSERT INTO users (id, name) SELECT 'user-hot-' || h, 'hot user ' || h FROM generate_series(0, $1 - 1) h`,
			`INSERT INTO api_keys (id, user_id) SELECT 'key-hot-' || h, 'user-hot-' || h FROM generate_series(0, $1 - 1) h`,
			`INSERT INTO providers (id, name) SELECT 'provider-hot-' || h, 'provider ' || h FROM generate_series(0, $1 - 1) h`,
			`INSERT INTO provider_api_keys (id, provider_id) SELECT 'pkey-hot-' || h, 'provider-hot-' || h FROM generate_series(0, $1 - 1) h`,
			`INSERT INTO global_models (id, name) SELECT 'model-hot-' || h, 'gpt-5' FROM generate_series(0, $1 - 1) h`,
		},
		Request:    request,
		Claim:      insertUsage,
		ClaimAll:   claimUsage,
		ClaimTable: "usage",
		ClaimIndex: "split_part(request_id, '-', 2)::int8",
		MySQL: &counters.DialectSQL{
			SeedSQL: []string{
				gateway.UsersSeedMySQL,
				gateway.APIKeysSeedMySQL,
				gateway.ProvidersSeedMySQL,
				`INSERT INTO provider_api_keys (id, provider_id) SELECT CONCAT('pkey-hot-', h), CONCAT('provider-hot-', h) FROM ` +
					counters.HotSetsMySQL,
				`INSERT INTO global_models (id, name) SELECT CONCAT('model-hot-', h), 'gpt-5' FROM ` + counters.HotSetsMySQL,
			},
			Claim:      insertUsageMySQL,
			ClaimIndex: gateway.RequestIndexMySQL,
		},
		// The usage suite pushes the most records through Redis: there the compact codec pays.
		Codec: counters.RecordCodec(),
	})
}

// hotRows is what every request of one hot set names alike: its rows' ids, as texts, as
// arguments (each in an any once, not once per row and statement: counters.Texts) and as the
// counters' rows. A request's deltas and its usage row take them from here (hotRowsOf)
// instead of composing five texts each time.
type hotRows struct {
	user, apiKey, providerKey, provider, model string
	// args are the five ids in an any each, in usageColumns' order (user to model).
	args                                             [5]any
	apiKeyRow, modelRow, providerKeyRow, providerRow counters.Key
}

func newHotRows(h int) *hotRows {
	n := strconv.Itoa(h)
	r := &hotRows{user: "user-hot-" + n, apiKey: "key-hot-" + n, providerKey: "pkey-hot-" + n, provider: "provider-hot-" + n,
		model: "model-hot-" + n}
	r.args = [5]any{r.user, r.apiKey, r.providerKey, r.provider, r.model}
	r.apiKeyRow, r.modelRow = gateway.Row(gateway.APIKeys, r.apiKey), gateway.Row(gateway.GlobalModels, r.model)
	r.providerKeyRow, r.providerRow = gateway.Row(gateway.ProviderAPIKeys, r.providerKey), gateway.Row(gateway.Providers, r.provider)
	return r
}

// keptHotRows is how many hot sets' rows are kept once made; a set beyond (--hot-keys above
// it) has them made at every use.
const keptHotRows = 4096

var hotRowsKept [keptHotRows]atomic.Pointer[hotRows]

// hotRowsOf is hot set h's rows.
func hotRowsOf(h int) *hotRows {
	if h < 0 || h >= keptHotRows {
		return newHotRows(h)
	}
	if r := hotRowsKept[h].Load(); r != nil {
		return r
	}
	r := newHotRows(h)
	hotRowsKept[h].Store(r)
	return r
}

// epoch anchors last_used_at so that it is deterministic per request index.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func usedAt(i int64) time.Time { return epoch.Add(time.Duration(i) * time.Millisecond) }
func responseMs(i int64) int32 { return int32(50 + i%100) }

// What a usage adds to each of its hot rows.
var (
	apiKeyUsage      = gateway.APIKeys.MustChange("total_requests", "total_tokens", "total_cost", "last_used_at")
	modelUsage       = gateway.GlobalModels.MustChange("usage_count")
	providerKeyUsage = gateway.ProviderAPIKeys.MustChange("request_count", "success_count", "error_count", "total_tokens",
		"total_cost", "total_response_time_ms")
)

// request is request i's usage, one part: its four counter increments, in key order.
func request(i int64, h int) [][]counters.Delta {
	one, tokens, amount := counters.Int(1), counters.Int(totalTokens), counters.Amount(cost)
	rows := hotRowsOf(h)
	p := counters.NewPart(4, 12)
	p.Add(apiKeyUsage, rows.apiKeyRow, one, tokens, amount, counters.Time(usedAt(i)))
	p.Add(modelUsage, rows.modelRow, one)
	p.Add(providerKeyUsage, rows.providerKeyRow, one, one, counters.Int(0), tokens, amount, counters.Int(int64(responseMs(i))))
	p.Add(gateway.ProviderMonthly, rows.providerRow, amount)
	return [][]counters.Delta{p.Deltas()}
}

// usageColumns are the columns a usage row is written with.
var usageColumns = []string{"request_id", "user_id", "api_key_id", "provider_api_key_id", "provider_id", "model_id",
	"input_tokens", "output_tokens", "total_tokens", "cost", "response_time_ms", "created_at"}

func usageValues(u counters.Source) []any {
	ids := &hotRowsOf(u.Hot).args
	return []any{counters.RequestID(u.Request), ids[0], ids[1], ids[2], ids[3], ids[4], int32(inputTokens), int32(outputTokens),
		int32(totalTokens), cost.Numeric(), responseMs(u.Request), usedAt(u.Request)}
}

// claimUsage is the pipelined claim (counters.Declaration.ClaimAll): the usage rows of a batch in
// one INSERT, which fails on a request_id already there.
func claimUsage(rows []counters.Source) []counters.Statement {
	sql, args := insertUsageSQL(rows)
	return []counters.Statement{{SQL: sql, Args: args, Rows: int64(len(rows))}}
}

// insertUsageSQL is the INSERT of rows' usage rows from arrays; its first argument is their
// request ids.
func insertUsageSQL(rows []counters.Source) (string, []any) {
	n := len(rows)
	ids := make([]string, n)
	users, keys, pkeys, providers, models := make(counters.Texts, n), make(counters.Texts, n), make(counters.Texts, n), make(counters.Texts, n), make(counters.Texts, n)
	rt := make([]int32, n)
	created := make([]time.Time, n)
	for i, u := range rows {
		hot := &hotRowsOf(u.Hot).args
		ids[i], rt[i], created[i] = counters.RequestID(u.Request), responseMs(u.Request), usedAt(u.Request)
		users[i], keys[i], pkeys[i], providers[i], models[i] = hot[0], hot[1], hot[2], hot[3], hot[4]
	}
	return `
		INSERT INTO usage (request_id, user_id, api_key_id, provider_api_key_id, provider_id, model_id,
			input_tokens, output_tokens, total_tokens, cost, response_time_ms, created_at)
		SELECT u.id, u.user_id, u.key_id, u.pkey_id, u.provider_id, u.model_id, $7, $8, $9, $10, u.rt, u.created
		FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $11::int4[], $12::timestamptz[])
		     AS u(id, user_id, key_id, pkey_id, provider_id, model_id, rt, created)`,
		[]any{ids, users, keys, pkeys, providers, models, int32(inputTokens), int32(outputTokens), int32(totalTokens), cost.Numeric(), rt, created}
}

// copyThreshold is the batch size from which COPY (three round trips with its savepoint)
// beats one INSERT … ON CONFLICT statement.
const copyThreshold = 64

// insertUsage is the claim: it writes the requests' usage rows and returns the ones that were
// new; a row whose request_id is already there is skipped, so a redelivered or retried request
// never counts twice. The fast path for batches is COPY inside a savepoint; only when that hits
// an existing request_id (a retry after a commit whose outcome was unknown) does it fall back to
// INSERT … ON CONFLICT DO NOTHING. It returns the number of statements sent.
func insertUsage(ctx context.Context, tx sqldb.Tx, rows []counters.Source) ([]counters.Source, int, error) {
	if len(rows) == 1 {
		fresh, err := insertOneUsage(ctx, tx, rows)
		return fresh, 1, err
	}
	if len(rows) < copyThreshold {
		fresh, err := insertUsageIdempotent(ctx, tx, rows)
		return fresh, 1, err
	}
	ptx, err := sqldb.RequirePgx(tx)
	if err != nil {
		return nil, 0, err
	}
	sp, err := ptx.Begin(ctx)
	if err != nil {
		return nil, 0, err
	}
	_, err = sp.CopyFrom(ctx, pgx.Identifier{"usage"}, usageColumns,
		pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) { return usageValues(rows[i]), nil }))
	if err == nil {
		return rows, 1, sp.Commit(ctx) // releases the savepoint
	}
	if !sqldb.IsUniqueViolation(err) {
		return nil, 1, fmt.Errorf("copy usage: %w", err)
	}
	if err := sp.Rollback(ctx); err != nil {
		return nil, 1, err
	}
	fresh, err := insertUsageIdempotent(ctx, tx, rows)
	return fresh, 2, err
}

// insertOneUsageSQL is the INSERT of one usage row, as a service writes it (and pgbench's twin
// of the sync request, testkit/pgbench): nothing when its request_id is there.
const insertOneUsageSQL = `INSERT INTO usage (request_id, user_id, api_key_id, provider_api_key_id, provider_id, model_id,
		input_tokens, output_tokens, total_tokens, cost, response_time_ms, created_at)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
	ON CONFLICT (request_id) DO NOTHING`

// costText is a usage's cost as its text, which pgx sends as it is (a numeric's binary form
// costs the client a big.Int per request).
var costText = cost.String()

// insertOneUsage is the claim of a batch of one (a sync request's): rows when it inserted
// the row, none when the request_id was there.
func insertOneUsage(ctx context.Context, tx sqldb.Tx, rows []counters.Source) ([]counters.Source, error) {
	u := rows[0]
	ids := &hotRowsOf(u.Hot).args
	n, err := tx.Exec(ctx, insertOneUsageSQL, counters.RequestID(u.Request), ids[0], ids[1], ids[2], ids[3], ids[4],
		int32(inputTokens), int32(outputTokens), int32(totalTokens), costText, responseMs(u.Request), usedAt(u.Request))
	if err != nil {
		return nil, fmt.Errorf("insert usage: %w", err)
	}
	if n == 0 {
		return nil, nil
	}
	return rows, nil
}

func insertUsageIdempotent(ctx context.Context, tx sqldb.Tx, rows []counters.Source) ([]counters.Source, error) {
	sql, args := insertUsageSQL(rows)
	ids := args[0].([]string)
	res, err := tx.Query(ctx, sql+`
		ON CONFLICT (request_id) DO NOTHING
		RETURNING request_id`, args...)
	if err != nil {
		return nil, fmt.Errorf("insert usage: %w", err)
	}
	inserted, err := sqldb.CollectRows[string](res)
	if err != nil {
		return nil, fmt.Errorf("insert usage: %w", err)
	}
	isNew := make(map[string]bool, len(inserted))
	for _, id := range inserted {
		isNew[id] = true
	}
	fresh := make([]counters.Source, 0, len(inserted))
	for i, u := range rows {
		if isNew[ids[i]] {
			delete(isNew, ids[i]) // a request repeated in the batch is claimed once
			fresh = append(fresh, u)
		}
	}
	return fresh, nil
}

// insertUsageMySQL is the claim on MySQL: the usage rows of the batch in one multi-row INSERT,
// and only when one was there already (a retried or redelivered request) one INSERT per row,
// a duplicate request_id not new (counters.ClaimRowsMySQL).
func insertUsageMySQL(ctx context.Context, tx sqldb.Tx, rows []counters.Source) ([]counters.Source, int, error) {
	isNew, ops, err := counters.ClaimRowsMySQL(ctx, tx, len(rows), func(from, to int) (string, []any) {
		return counters.InsertMySQL("usage", usageColumns, from, to, func(i int, vals []any) []any {
			u := rows[i]
			ids := &hotRowsOf(u.Hot).args
			return append(vals, counters.RequestID(u.Request), ids[0], ids[1], ids[2], ids[3], ids[4], inputTokens, outputTokens, totalTokens, counters.MySQLValue(counters.Amount(cost)), responseMs(u.Request),
				counters.MySQLValue(counters.Time(usedAt(u.Request))))
		})
	})
	if err != nil {
		return nil, ops, fmt.Errorf("insert usage: %w", err)
	}
	return counters.Fresh(rows, isNew), ops, nil
}

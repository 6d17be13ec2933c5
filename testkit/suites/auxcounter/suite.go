// Package auxcounter is the auxiliary-counter hot spot: besides its usage, every request bumps
// three rows — its proxy node's counters, its management token's usage (count, last used time
// and IP) and its api key's last used time; with --hot-keys 1, the same three rows for every
// request. It owns the suite's SQL, its seed and its exact verification; the engine (testkit)
// owns everything else.
//
// # Exactly once
//
// The aux counters have no row per request, so nothing in them says whether a write was
// applied already. Every write path therefore inserts one guard row per record it carries —
// (request, kind): a request makes one record per hot row — into aux_applied_records in the
// same transaction (ON CONFLICT DO NOTHING RETURNING) and applies only the records that came
// back new. Per mode:
//   - sync: one transaction per request: the three guard rows, then one single-row UPDATE per
//     hot row, in key order. A retry (--max-tries) after a COMMIT whose outcome was unknown
//     finds the guard rows and changes nothing.
//   - outbox: one transaction per request: the three guard rows and, when they were new, the
//     request's three delta rows. The flush loop claims, applies and marks deltas processed
//     in one transaction, so a delta is applied exactly once.
//   - async, async-compact: a batch whose COMMIT outcome was unknown is retried by the queue,
//     later perhaps record by record (after its retries failed) — and had perhaps committed.
//     Keys per source record rather than a fingerprint per batch stay exact however the queue
//     re-batches, and a retry that races an unfinished commit waits on the unique key
//     instead of reading past it. The price is one guard row per record, written in bulk:
//     one statement per batch.
//
// The reference writes a request's three rows in three transactions, so a failure between
// them leaves part of the request behind; here a request is one transaction in sync and
// outbox, so it is all there or not at all, and reconciliation finds every request in the
// guard table.
//
// A request enqueues three records, and --queue-capacity counts records: for the same
// capacity in requests as a one-record suite, pass three times as much. A closed-loop burst
// that overflows the queue under --queue-full sync writes the overflow inline, one record per
// transaction on the hot rows, and so brings back the lock waits compaction removes.
//
// Its own table is the guard (aux_guard.sql); the counter rows are the shared ones of schema.
package auxcounter

import (
	"context"
	"embed"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/counters"
)

// sqlFiles are the suite's own tables (aux_guard.sql); package schema creates the shared ones.
//
//go:embed aux_guard.sql
var sqlFiles embed.FS

// Name is the suite's (and binary's) name.
const Name = "usage_aux_counter_hotspot_baseline"

// Suite implements testkit.Suite and testkit.Reconciler.
type Suite struct{}

// New returns the suite.
func New() *Suite { return &Suite{} }

// Info describes the suite.
func (*Suite) Info() testkit.Info {
	return testkit.Info{
		Name:    Name,
		Summary: "auxiliary writes onto hot proxy node / management token / api key last-used rows",
		Description: `Each request makes three auxiliary writes: its proxy node's counters (+1 request; +1 failed on every 10th request, +1 DNS failure on every 25th, +1
stream error on every 40th), its management token's usage (+1; last_used_at and last IP of the
request, the newest wins) and its api key's last_used_at (the maximum wins).
  sync           one transaction per request: three guard rows, then one single-row UPDATE
                 per hot row (lock waits on each)
  outbox         one transaction per request: three guard rows and three delta rows; a flush
                 loop claims deltas (FOR UPDATE SKIP LOCKED), merges them per row and applies them
  async          the request enqueues three records (slot: the hot row); workers apply every
                 record as its own UPDATE, in order
  async-compact  as async, but the records of one row are merged first (counters summed, the
                 newest last_used_at and its IP kept): one UPDATE per hot row per batch
Every write is exactly-once: it inserts a guard row per record (aux_applied_records) in its
own transaction and applies only the records that were new, so a request or batch retried
after a COMMIT whose outcome was unknown counts nothing twice. Every counter, timestamp and IP is then
checked exactly, per hot row, against the requests that succeeded.`,
		Example:      Name + " --requests 20000 --concurrency 1000 --modes sync,outbox,async,async-compact --output /tmp/aux.json",
		Modes:        counters.Modes,
		DefaultModes: counters.Modes,
		HotTables:    []string{"proxy_nodes", "management_tokens", "api_keys"},
		// Three queue records per request: the queue holds as many requests as the others'.
		Defaults: map[string]string{"queue-capacity": strconv.Itoa(3 * queue.DefaultCapacity)},
		// Memory only until its records have a codec (--queue-backend redis is refused).
		QueueBackends: []string{testkit.BackendMemory, testkit.BackendRedis},
		SQL:           sqlFiles,
		Slots:         true,
		TotalSQL:      `SELECT total_requests, failed_requests FROM proxy_nodes_totals WHERE id = 'proxy-hot-0'`,
	}
}

// hot row ids for hot index h.
func proxyID(h int) string  { return "proxy-hot-" + strconv.Itoa(h) }
func tokenID(h int) string  { return "token-hot-" + strconv.Itoa(h) }
func apiKeyID(h int) string { return "key-hot-" + strconv.Itoa(h) }

func requestID(i int64) string { return "req-" + strconv.FormatInt(i, 10) }

func hotOf(r *testkit.Run, i int64) int { return int(i % int64(r.Config().HotKeys)) }

// epoch anchors last_used_at so that it is deterministic per request index.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func usedAt(i int64) time.Time { return epoch.Add(time.Duration(i) * time.Millisecond) }

func clientIP(i int64) string { return fmt.Sprintf("10.0.%d.%d", i/256%256, i%256) }

// The proxy node's failure counters count every 10th, 25th and 40th request.
func failed(i int64) bool      { return i%10 == 0 }
func dnsFailure(i int64) bool  { return i%25 == 0 }
func streamError(i int64) bool { return i%40 == 0 }

func one(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// rowsOf are request i's three hot rows, in the order it writes them, each in the slot it
// picks writing in tx (nil where no session writes: a queue record; see counters.Slots.InTx).
func rowsOf(r *testkit.Run, tx pgx.Tx, i int64) [3]counters.Key {
	h, slot := hotOf(r, i), counters.SlotsOf(r).For(tx, i, requestID(i))
	return [3]counters.Key{
		{Kind: counters.ProxyNode, Target: proxyID(h), Slot: slot},
		{Kind: counters.ManagementToken, Target: tokenID(h), Slot: slot},
		{Kind: counters.APIKeyLastUsed, Target: apiKeyID(h), Slot: slot},
	}
}

// deltaOf is request i's change to hot row k.
func deltaOf(i int64, k counters.Key) counters.Delta {
	d := counters.Delta{Key: k}
	switch k.Kind {
	case counters.ProxyNode:
		d.Requests, d.Failures, d.DNSFailures, d.StreamErrors = 1, one(failed(i)), one(dnsFailure(i)), one(streamError(i))
	case counters.ManagementToken:
		d.Requests, d.LastUsedAt, d.LastIP = 1, usedAt(i), clientIP(i)
	case counters.APIKeyLastUsed:
		d.LastUsedAt = usedAt(i)
	}
	return d
}

// Seed creates --hot-keys proxy nodes, management tokens and api keys with zeroed counters,
// each split into --slots.
func (*Suite) Seed(ctx context.Context, r *testkit.Run) error {
	if err := testkit.ExecAll(ctx, r.Admin(), []string{
		`INSERT INTO proxy_nodes (id) SELECT 'proxy-hot-' || h FROM generate_series(0, $1 - 1) h`,
		`INSERT INTO management_tokens (id) SELECT 'token-hot-' || h FROM generate_series(0, $1 - 1) h`,
		`INSERT INTO api_keys (id, user_id) SELECT 'key-hot-' || h, 'user-hot-' || h FROM generate_series(0, $1 - 1) h`,
	}, r.Config().HotKeys); err != nil {
		return err
	}
	return counters.SeedSlots(ctx, r.Admin(), r.Slots())
}

// Workload returns one request in r.Mode().
func (*Suite) Workload(ctx context.Context, r *testkit.Run) (*testkit.Workload, error) {
	switch r.Mode() {
	case testkit.Sync:
		return &testkit.Workload{Op: r.SyncTx(func(ctx context.Context, tx pgx.Tx, i int64) error {
			_, err := guardedWriter{}.WriteBatch(ctx, tx, recordsOf(r, tx, i))
			return err
		})}, nil
	case counters.Outbox:
		return counters.OutboxWorkload(ctx, r, r.SyncTx(func(ctx context.Context, tx pgx.Tx, i int64) error {
			deltas, err := unapplied(ctx, tx, recordsOf(r, tx, i))
			if err != nil || len(deltas) == 0 {
				return err
			}
			return counters.InsertOutbox(ctx, tx, requestID(i), deltas)
		}))
	case testkit.Async, testkit.AsyncCompact:
		return testkit.AsyncWorkload(ctx, r, testkit.AsyncSpec[counters.Key, record]{
			Records: func(i int64) []record { return recordsOf(r, nil, i) },
			Key:     slotOf,
			Worker:  counters.SlotsOf(r).Worker(),
			Merge:   mergeRecords,
			Compare: counters.CompareKeys,
			Writer:  func(compact bool) queue.TxWriter[record] { return guardedWriter{compact: compact} },
		})
	}
	return nil, fmt.Errorf("mode %q not supported", r.Mode())
}

// recordsOf are request i's three records, one per hot row, in key order, as written in tx
// (nil: a queue record).
func recordsOf(r *testkit.Run, tx pgx.Tx, i int64) []record {
	recs := make([]record, 0, 3)
	for _, k := range rowsOf(r, tx, i) {
		recs = append(recs, record{Delta: deltaOf(i, k), Sources: []int64{i}})
	}
	return recs
}

// record is a delta for one hot row (the async queue's slot) and the requests whose deltas it
// holds, in arrival order.
type record struct {
	Delta   counters.Delta
	Sources []int64
}

// slotOf is the record's queue slot: its hot row (with --slots, the one slot of it).
func slotOf(rec record) counters.Key { return rec.Delta.Key }

// mergeRecords folds a newer record for the same row into the pending one (counters.Delta.Merge:
// counters add up, the newest last_used_at wins and brings its IP).
func mergeRecords(pending *record, newer record) {
	pending.Delta.Merge(newer.Delta)
	pending.Sources = append(pending.Sources, newer.Sources...)
}

// guardedWriter applies a batch exactly once: it claims the batch's source records in the
// guard table, then applies the deltas of the new ones, compacted (one UPDATE per table) or
// each record as its own UPDATE, in order.
type guardedWriter struct{ compact bool }

func (w guardedWriter) WriteBatch(ctx context.Context, tx pgx.Tx, batch []record) (int, error) {
	deltas, err := unapplied(ctx, tx, batch)
	if err != nil {
		return 1, err
	}
	apply := counters.ApplyEach
	if w.compact {
		apply = counters.Apply
	}
	n, err := apply(ctx, tx, deltas)
	return 1 + n, err
}

// source is one record a request enqueued: the request and the kind of row it writes.
type source struct {
	request int64
	kind    counters.Kind
}

// unapplied inserts a guard row for every source record of batch and returns the deltas of
// those no transaction applied before: each record's delta as it is when all are new (the
// normal case), otherwise rebuilt from its new sources only.
func unapplied(ctx context.Context, tx pgx.Tx, batch []record) ([]counters.Delta, error) {
	var requests []int64
	var kinds []string
	for _, rec := range batch {
		for _, i := range rec.Sources {
			requests = append(requests, i)
			kinds = append(kinds, string(rec.Delta.Kind))
		}
	}
	rows, err := tx.Query(ctx, `
		INSERT INTO aux_applied_records (request_index, kind)
		SELECT * FROM unnest($1::int8[], $2::text[])
		ON CONFLICT DO NOTHING
		RETURNING request_index, kind`, requests, kinds)
	if err != nil {
		return nil, fmt.Errorf("guarding the batch: %w", err)
	}
	var fresh []source
	var s source
	_, err = pgx.ForEachRow(rows, []any{&s.request, &s.kind}, func() error {
		fresh = append(fresh, s)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("guarding the batch: %w", err)
	}
	deltas := make([]counters.Delta, 0, len(batch))
	if len(fresh) == len(requests) {
		for _, rec := range batch {
			deltas = append(deltas, rec.Delta)
		}
		return deltas, nil
	}
	isNew := make(map[source]bool, len(fresh))
	for _, s := range fresh {
		isNew[s] = true
	}
	for _, rec := range batch {
		var d counters.Delta
		for _, i := range rec.Sources {
			s := source{i, rec.Delta.Kind}
			if !isNew[s] {
				continue
			}
			delete(isNew, s) // a source repeated in the batch is applied once
			if d.Kind == "" {
				d = deltaOf(i, rec.Delta.Key)
			} else {
				d.Merge(deltaOf(i, rec.Delta.Key))
			}
		}
		if d.Kind != "" {
			deltas = append(deltas, d)
		}
	}
	return deltas, nil
}

// Persisted finds each request in the guard table: once when any of its records is there,
// twice when more than three are (the key makes that impossible; a partial request shows as
// persisted, and then as wrong counters).
func (*Suite) Persisted(ctx context.Context, r *testkit.Run, n int64) ([]int32, error) {
	const sql = `SELECT request_index, count(*) FROM aux_applied_records GROUP BY request_index`
	counts := make([]int32, n)
	rows, err := r.Admin().Query(ctx, sql)
	if err != nil {
		return nil, err
	}
	var i, writes int64
	_, err = pgx.ForEachRow(rows, []any{&i, &writes}, func() error {
		if i < 0 || i >= n {
			return fmt.Errorf("aux write of unexpected request %d", i)
		}
		counts[i] = int32((writes + 2) / 3)
		return nil
	})
	return counts, err
}

// expected is what the applied requests of one hot index add up to.
type expected struct {
	requests, failed, dns, stream int64
	newest                        int64 // newest applied request, -1 when none
}

// Verify checks every hot row exactly, and the outbox and the guard table.
func (s *Suite) Verify(ctx context.Context, r *testkit.Run, res testkit.Result) ([]results.Check, error) {
	hot := r.Config().HotKeys
	want := make([]expected, hot)
	for h := range want {
		want[h].newest = -1
	}
	var sum expected
	sum.newest = -1
	n := res.Len()
	for i := int64(0); i < n; i++ {
		if !res.Applied(i) {
			continue
		}
		for _, e := range []*expected{&want[hotOf(r, i)], &sum} {
			e.requests++
			e.failed += one(failed(i))
			e.dns += one(dnsFailure(i))
			e.stream += one(streamError(i))
			e.newest = max(e.newest, i)
		}
	}
	c := r.NewChecks()
	var got expected
	var tokenUses int64
	if err := r.Admin().QueryRow(ctx, `
		SELECT coalesce(sum(total_requests), 0)::int8, coalesce(sum(failed_requests), 0)::int8,
		       coalesce(sum(dns_failures), 0)::int8, coalesce(sum(stream_errors), 0)::int8,
		       (SELECT coalesce(sum(usage_count), 0)::int8 FROM management_tokens)
		FROM proxy_nodes`).Scan(&got.requests, &got.failed, &got.dns, &got.stream, &tokenUses); err != nil {
		return nil, fmt.Errorf("reading hot rows: %w", err)
	}
	c.Int("proxy_nodes.total_requests = applied requests", sum.requests, got.requests)
	c.Int("proxy_nodes.failed_requests = applied requests with index % 10 = 0", sum.failed, got.failed)
	c.Int("proxy_nodes.dns_failures = applied requests with index % 25 = 0", sum.dns, got.dns)
	c.Int("proxy_nodes.stream_errors = applied requests with index % 40 = 0", sum.stream, got.stream)
	c.Int("management_tokens.usage_count = applied requests", sum.requests, tokenUses)
	if err := newestChecks(ctx, r, c, sum.newest); err != nil {
		return nil, err
	}

	// Per hot row: every row of every hot table must hold exactly its own share.
	reqs, fails, dns, streams := make([]int64, hot), make([]int64, hot), make([]int64, hot), make([]int64, hot)
	lasts, ips := make([]pgtype.Timestamptz, hot), make([]pgtype.Text, hot)
	for h, w := range want {
		reqs[h], fails[h], dns[h], streams[h] = w.requests, w.failed, w.dns, w.stream
		if w.newest >= 0 {
			lasts[h] = pgtype.Timestamptz{Time: usedAt(w.newest), Valid: true}
			ips[h] = pgtype.Text{String: clientIP(w.newest), Valid: true}
		}
	}
	exact, err := testkit.QueryInt(ctx, r.Admin(), `
		SELECT count(*) FROM unnest($1::int8[], $2::int8[], $3::int8[], $4::int8[], $5::timestamptz[], $6::text[])
		     WITH ORDINALITY AS w(requests, failed, dns, stream, last_used_at, ip, h)
		JOIN proxy_nodes_totals p ON p.id = 'proxy-hot-' || (w.h - 1)
		JOIN management_tokens_totals m ON m.id = 'token-hot-' || (w.h - 1)
		JOIN api_keys_totals k ON k.id = 'key-hot-' || (w.h - 1)
		WHERE p.total_requests = w.requests AND p.failed_requests = w.failed
		  AND p.dns_failures = w.dns AND p.stream_errors = w.stream
		  AND m.usage_count = w.requests AND m.last_used_at IS NOT DISTINCT FROM w.last_used_at
		  AND m.last_used_ip IS NOT DISTINCT FROM w.ip
		  AND k.last_used_at IS NOT DISTINCT FROM w.last_used_at`,
		reqs, fails, dns, streams, lasts, ips)
	if err != nil {
		return nil, err
	}
	c.Int("hot row sets whose every counter, timestamp and IP is exact", int64(hot), exact)
	if err := counters.CheckSlots(ctx, r, c, "proxy_nodes", "management_tokens", "api_keys"); err != nil {
		return nil, err
	}

	var outboxPending, outboxProcessed, guards int64
	if err := r.Admin().QueryRow(ctx, `
		SELECT (SELECT count(*) FROM usage_counter_deltas WHERE processed_at IS NULL),
		       (SELECT count(*) FROM usage_counter_deltas WHERE processed_at IS NOT NULL),
		       (SELECT count(*) FROM aux_applied_records)`).Scan(&outboxPending, &outboxProcessed, &guards); err != nil {
		return nil, fmt.Errorf("counting rows: %w", err)
	}
	var wantProcessed int64
	if r.Mode() == counters.Outbox {
		wantProcessed = 3 * sum.requests
	}
	c.Int("outbox pending deltas", 0, outboxPending)
	c.Int("outbox processed deltas = 3 × applied requests (outbox mode only)", wantProcessed, outboxProcessed)
	c.Int("guard rows = 3 × applied requests", 3*sum.requests, guards)
	return c.List(), nil
}

// newestChecks compares the row the newest applied request wrote with what it wrote: its
// time on the management token and api key, its IP on the token.
func newestChecks(ctx context.Context, r *testkit.Run, c *testkit.Checks, newest int64) error {
	if newest < 0 {
		return nil
	}
	h := hotOf(r, newest)
	var tokenAt, keyAt pgtype.Timestamptz
	var ip pgtype.Text
	if err := r.Admin().QueryRow(ctx, `
		SELECT m.last_used_at, m.last_used_ip, k.last_used_at
		FROM management_tokens_totals m, api_keys_totals k WHERE m.id = $1 AND k.id = $2`, tokenID(h), apiKeyID(h)).
		Scan(&tokenAt, &ip, &keyAt); err != nil {
		return fmt.Errorf("reading the newest request's rows: %w", err)
	}
	want := usedAt(newest).Format(time.RFC3339Nano)
	c.Text("management_tokens.last_used_at = newest applied request's", want, timeText(tokenAt))
	c.Text("management_tokens.last_used_ip = newest applied request's", clientIP(newest), textOrNull(ip))
	c.Text("api_keys.last_used_at = newest applied request's", want, timeText(keyAt))
	return nil
}

func timeText(t pgtype.Timestamptz) string {
	if !t.Valid {
		return "NULL"
	}
	return t.Time.UTC().Format(time.RFC3339Nano)
}

func textOrNull(t pgtype.Text) string {
	if !t.Valid {
		return "NULL"
	}
	return t.String
}

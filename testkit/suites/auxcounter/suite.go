// Package auxcounter is the auxiliary-counter hot spot: besides its usage, every request bumps
// three rows — its proxy node's counters, its management token's usage (count, last used time
// and IP) and its api key's last used time; with --hot-keys 1, the same three rows for every
// request. It declares the suite on package counters (the rows, each request's three parts,
// the guard row as its claim) and owns that SQL; counters and the engine own everything else.
//
// # Exactly once
//
// The aux counters have no row per request, so nothing in them says whether a write was
// applied already. Every write path therefore inserts one guard row per record it carries —
// (request, kind): a request makes one record per hot row — into aux_applied_records in the
// same transaction (ON CONFLICT DO NOTHING RETURNING; on MySQL one multi-row INSERT, then,
// after a duplicate key, one per row) and applies only the records that came back new. Per mode:
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
// A request enqueues three records, and --queue-capacity counts records: its default is three
// times a one-record suite's, the same capacity in requests. A closed-loop burst
// that overflows the queue under --queue-full sync writes the overflow inline, one record per
// transaction on the hot rows, and so brings back the lock waits compaction removes.
//
// Its own table is the guard (aux_guard.sql, MySQL's in mysql/); the counter rows are the
// shared ones of schema.
package auxcounter

import (
	"embed"
	"fmt"
	"strconv"
	"time"

	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/counters"
	"github.com/hotspotkit/hotspotkit/testkit/suites/gateway"
)

// sqlFiles are the suite's own tables (aux_guard.sql, and MySQL's in mysql/); package schema
// creates the shared ones.
//
//go:embed aux_guard.sql mysql/*.sql
var sqlFiles embed.FS

// Name is the suite's (and binary's) name.
const Name = "usage_aux_counter_hotspot_baseline"

// New returns the suite.
func New() *counters.Suite {
	d := counters.Declaration{
		Info: testkit.Info{
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
			Example:   Name + " --requests 20000 --concurrency 1000 --modes sync,outbox,async,async-compact --output /tmp/aux.json",
			HotTables: []string{"proxy_nodes", "management_tokens", "api_keys"},
			SQL:       sqlFiles,
			TotalSQL:  `SELECT total_requests, failed_requests FROM proxy_nodes_totals WHERE id = 'proxy-hot-0'`,
		},
		SeedSQL: []string{
			`INSERT INTO proxy_nodes (id) SELECT 'proxy-hot-' || h FROM generate_series(0, $1 - 1) h`,
			`INSERT INTO management_tokens (id) SELECT 'token-hot-' || h FROM generate_series(0, $1 - 1) h`,
			`INSERT INTO api_keys (id, user_id) SELECT 'key-hot-' || h, 'user-hot-' || h FROM generate_series(0, $1 - 1) h`,
		},
		Request: request,
		MySQL: &counters.DialectSQL{SeedSQL: []string{
			`INSERT INTO proxy_nodes (id) SELECT CONCAT('proxy-hot-', h) FROM ` + counters.HotSetsMySQL,
			`INSERT INTO management_tokens (id) SELECT CONCAT('token-hot-', h) FROM ` + counters.HotSetsMySQL,
			gateway.APIKeysSeedMySQL,
		}},
	}
	guard.Declare(&d)
	return counters.New(d)
}

// guard is the claim: a guard row per part of a request, (request, kind), in the suite's own
// table; kind names the part's row (its kind among the gateway's counter rows).
var guard = counters.PartClaim{Table: "aux_applied_records", RequestColumn: "request_index", PartColumn: "kind",
	PartLabels: []string{"proxy_node", "management_token", "api_key_last_used"}}

// What a request writes to each of its rows, one part (and queue record) each, in order.
var (
	proxyUse   = gateway.ProxyNodes.MustChange("total_requests", "failed_requests", "dns_failures", "stream_errors")
	tokenUse   = gateway.ManagementTokens.MustChange("usage_count", "last_used_at", "last_used_ip")
	apiKeyUsed = gateway.APIKeys.MustChange("last_used_at")
)

// epoch anchors last_used_at so that it is deterministic per request index.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func usedAt(i int64) time.Time { return epoch.Add(time.Duration(i) * time.Millisecond) }

func clientIP(i int64) string { return fmt.Sprintf("10.0.%d.%d", i/256%256, i%256) }

// one counts every n-th request.
func one(i, n int64) int64 {
	if i%n == 0 {
		return 1
	}
	return 0
}

// request is request i's three writes to hot set h: the proxy node's counters (its failures on
// every 10th, 25th and 40th request), the management token's use and the api key's last use.
func request(i int64, h int) [][]counters.Delta {
	set := strconv.Itoa(h)
	at := counters.Time(usedAt(i))
	return [][]counters.Delta{
		{proxyUse.Delta(gateway.Row(gateway.ProxyNodes, "proxy-hot-"+set), counters.Int(1), counters.Int(one(i, 10)),
			counters.Int(one(i, 25)), counters.Int(one(i, 40)))},
		{tokenUse.Delta(gateway.Row(gateway.ManagementTokens, "token-hot-"+set), counters.Int(1), at, counters.Text(clientIP(i)))},
		{apiKeyUsed.Delta(gateway.Row(gateway.APIKeys, "key-hot-"+set), at)},
	}
}

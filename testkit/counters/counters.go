// Package counters owns the hot counter rows that usage accounting updates — api keys,
// provider keys, models, provider monthly totals, wallets, quotas, proxy nodes, management
// tokens — as deltas: how a delta folds into another for the same row (slot compaction), how
// deltas are written (one array-based UPDATE per table per batch, or one UPDATE per delta in
// order), the outbox that defers them (usage_counter_deltas, claimed with SKIP LOCKED,
// aggregated per row and applied by a flush loop; Outbox is its mode, the loop a
// testkit.Flusher the engine pauses and reports on), and slotted rows (slots.go: --slots splits
// each hot logical row into N physical rows, a write adds to one, reads sum them through the
// schema's *_totals views).
//
// On these it builds counter-style suites from a Declaration (suite.go): a suite says which hot
// rows it seeds, which deltas each request makes and how a write is claimed once, and gets its
// seed, every mode, reconciliation and an exact verification (verify.go) from here. It is a
// library on package testkit's API; it knows nothing of the engine.
package counters

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/hotspotkit/hotspotkit/queue"
)

// Kind names a hot counter row type (and so its table).
type Kind string

// The kinds of hot rows. Each maps to one table and one SET clause in kinds.
const (
	APIKeyUsage      Kind = "api_key"           // api_keys: requests, tokens, cost, last_used_at
	ProviderKeyUsage Kind = "provider_api_key"  // provider_api_keys: requests, successes, failures, tokens, cost, response time
	ModelUsage       Kind = "model"             // global_models: usage_count += requests
	ProviderMonthly  Kind = "provider_monthly"  // providers: monthly_used += cost
	APIKeyQuota      Kind = "api_key_quota"     // api_keys: quota_used += cost
	WalletDebit      Kind = "wallet"            // wallets: balance -= cost
	ProxyNode        Kind = "proxy_node"        // proxy_nodes: total/failed/dns/stream counters
	ManagementToken  Kind = "management_token"  // management_tokens: usage_count, last_used_at, last_used_ip
	APIKeyLastUsed   Kind = "api_key_last_used" // api_keys: last_used_at only
)

// Key is one physical hot row: the slot that deltas are compacted into. Slot 0 is the one row
// of an unslotted logical row; with --slots N a logical row is the N rows of slots 1..N (see
// slots.go), and a delta with Slot > 0 adds to exactly that one.
type Key struct {
	Kind   Kind
	Target string
	Slot   int
}

// CompareKeys orders keys by kind, target, then slot. Every writer applies deltas in this
// order, so two transactions touching the same rows lock them in the same order and cannot
// deadlock.
func CompareKeys(a, b Key) int {
	if c := cmp.Compare(a.Kind, b.Kind); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Target, b.Target); c != 0 {
		return c
	}
	return cmp.Compare(a.Slot, b.Slot)
}

// slotted reports whether the delta names one slot of a slotted row.
func (k Key) slotted() bool { return k.Slot > 0 }

// Delta is a change to one hot row. Counters add up; LastUsedAt keeps the maximum and LastIP
// follows the latest LastUsedAt (on a tie, the newer delta wins).
type Delta struct {
	Key
	Requests       int64
	Successes      int64
	Failures       int64
	Tokens         int64
	Cost           Money
	ResponseTimeMs int64
	DNSFailures    int64
	StreamErrors   int64
	LastUsedAt     time.Time // zero: leaves last_used_at unchanged
	LastIP         string    // empty: leaves the IP unchanged
}

// Merge folds a newer delta for the same row into d.
func (d *Delta) Merge(n Delta) {
	d.Requests += n.Requests
	d.Successes += n.Successes
	d.Failures += n.Failures
	d.Tokens += n.Tokens
	d.Cost += n.Cost
	d.ResponseTimeMs += n.ResponseTimeMs
	d.DNSFailures += n.DNSFailures
	d.StreamErrors += n.StreamErrors
	if !n.LastUsedAt.IsZero() && !n.LastUsedAt.Before(d.LastUsedAt) {
		d.LastUsedAt = n.LastUsedAt
		if n.LastIP != "" {
			d.LastIP = n.LastIP
		}
	}
}

// Compact merges deltas per row and returns one delta per row, sorted by CompareKeys: the
// queue's compaction (queue.Compact) applied to deltas.
func Compact(deltas []Delta) []Delta {
	return queue.Compact(deltas, func(d Delta) Key { return d.Key }, (*Delta).Merge, CompareKeys)
}

// kinds are the hot row types: each one's table, the key column of its rows, and the SET
// clause that applies a delta to a row (d is the unnest of the delta arrays, see updateArgs;
// last_used_at never moves backwards), with the columns the clause changes and the delta
// field each column takes (what verification checks, verify.go).
var kinds = map[Kind]kind{
	APIKeyUsage: {table: "api_keys", set: `total_requests = t.total_requests + d.requests,
		total_tokens = t.total_tokens + d.tokens, total_cost = t.total_cost + d.cost,
		last_used_at = GREATEST(t.last_used_at, d.last_used_at)`,
		columns: []column{requests("total_requests"), tokens("total_tokens"), cost("total_cost"), newest("last_used_at")}},
	ProviderKeyUsage: {table: "provider_api_keys", set: `request_count = t.request_count + d.requests,
		success_count = t.success_count + d.successes, error_count = t.error_count + d.failures,
		total_tokens = t.total_tokens + d.tokens, total_cost = t.total_cost + d.cost,
		total_response_time_ms = t.total_response_time_ms + d.response_time_ms`,
		columns: []column{requests("request_count"), count("success_count", func(d Delta) int64 { return d.Successes }),
			failures("error_count"), tokens("total_tokens"), cost("total_cost"),
			count("total_response_time_ms", func(d Delta) int64 { return d.ResponseTimeMs })}},
	ModelUsage:      {table: "global_models", set: `usage_count = t.usage_count + d.requests`, columns: []column{requests("usage_count")}},
	ProviderMonthly: {table: "providers", set: `monthly_used = t.monthly_used + d.cost, updated_at = now()`, columns: []column{cost("monthly_used")}},
	APIKeyQuota:     {table: "api_keys", set: `quota_used = t.quota_used + d.cost`, columns: []column{cost("quota_used")}},
	WalletDebit: {table: "wallets", key: "user_id", set: `balance = t.balance - d.cost, updated_at = now()`,
		columns: []column{{name: "balance", money: func(d Delta) Money { return -d.Cost }}}},
	ProxyNode: {table: "proxy_nodes", set: `total_requests = t.total_requests + d.requests,
		failed_requests = t.failed_requests + d.failures, dns_failures = t.dns_failures + d.dns_failures,
		stream_errors = t.stream_errors + d.stream_errors`,
		columns: []column{requests("total_requests"), failures("failed_requests"),
			count("dns_failures", func(d Delta) int64 { return d.DNSFailures }),
			count("stream_errors", func(d Delta) int64 { return d.StreamErrors })}},
	ManagementToken: {table: "management_tokens", set: `usage_count = t.usage_count + d.requests,
		last_used_ip = CASE WHEN d.last_used_at IS NOT NULL AND d.last_ip IS NOT NULL
			AND (t.last_used_at IS NULL OR d.last_used_at >= t.last_used_at) THEN d.last_ip ELSE t.last_used_ip END,
		last_used_at = GREATEST(t.last_used_at, d.last_used_at)`,
		columns: []column{requests("usage_count"), newest("last_used_at"), {name: "last_used_ip", ip: true}}},
	APIKeyLastUsed: {table: "api_keys", set: `last_used_at = GREATEST(t.last_used_at, d.last_used_at)`, columns: []column{newest("last_used_at")}},
}

// kind is one hot row type (kinds).
type kind struct {
	table, key, set string // key: "" is id
	columns         []column
}

// keyColumn is the column a kind's rows are keyed by: wallets by their user, every other
// hot table by id.
func (k kind) keyColumn() string {
	if k.key == "" {
		return "id"
	}
	return k.key
}

// deltaParams are a delta's columns in parameter order ($1 …), as updateArgs and scalarArgs
// send them; a slotted statement adds the slot after them.
var deltaParams = []struct{ name, typ string }{
	{"id", "text"}, {"requests", "int8"}, {"successes", "int8"}, {"failures", "int8"}, {"tokens", "int8"},
	{"cost", "numeric"}, {"response_time_ms", "int8"}, {"dns_failures", "int8"}, {"stream_errors", "int8"},
	{"last_used_at", "timestamptz"}, {"last_ip", "text"}, {"slot", "int2"},
}

// deltaFrom is the relation d of the deltas a statement applies: the unnest of the arrays of
// updateArgs, or for a single delta (the per-request path, the plain single-row UPDATE a
// hand-written gateway would send) scalar parameters. Unslotted deltas leave the slot out.
func deltaFrom(arrays, slotted bool) string {
	params := deltaParams
	if !slotted {
		params = params[:len(params)-1]
	}
	values, names := make([]string, len(params)), make([]string, len(params))
	for i, p := range params {
		values[i], names[i] = fmt.Sprintf("$%d::%s", i+1, p.typ), p.name
		if arrays {
			values[i] += "[]"
		}
	}
	source := "(SELECT " + strings.Join(values, ", ") + ")"
	if arrays {
		source = "unnest(" + strings.Join(values, ", ") + ")"
	}
	return "\n\tFROM " + source + "\n\t     AS d(" + strings.Join(names, ", ") + ")"
}

// Kinds lists every known kind in CompareKeys order.
func Kinds() []Kind {
	ks := make([]Kind, 0, len(kinds))
	for k := range kinds {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// updateArgs turns deltas of one kind into the unnest arrays of deltaFrom, the slots last when
// they are slotted.
func updateArgs(ds []Delta) []any {
	args := deltaArrays(ds)
	if len(ds) > 0 && ds[0].slotted() {
		slots := make([]int16, len(ds))
		for i, d := range ds {
			slots[i] = int16(d.Slot)
		}
		args = append(args, slots)
	}
	return args
}

// deltaArrays are the arrays of deltaFrom without the slot.
func deltaArrays(ds []Delta) []any {
	n := len(ds)
	ids := make([]string, n)
	req, succ, fail, tok, rt, dns, stream := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	cost := make([]pgtype.Numeric, n)
	last := make([]pgtype.Timestamptz, n)
	ip := make([]pgtype.Text, n)
	for i, d := range ds {
		ids[i] = d.Target
		req[i], succ[i], fail[i], tok[i] = d.Requests, d.Successes, d.Failures, d.Tokens
		rt[i], dns[i], stream[i] = d.ResponseTimeMs, d.DNSFailures, d.StreamErrors
		cost[i] = d.Cost.Numeric()
		last[i] = pgtype.Timestamptz{Time: d.LastUsedAt, Valid: !d.LastUsedAt.IsZero()}
		ip[i] = pgtype.Text{String: d.LastIP, Valid: d.LastIP != ""}
	}
	return []any{ids, req, succ, fail, tok, cost, rt, dns, stream, last, ip}
}

// updateSQL is the UPDATE of deltas of kind k: arrays of them or one (scalar parameters),
// slotted or not. Every statement is composed once (updateStatements), not per request.
func updateSQL(k Kind, arrays, slotted bool) (string, error) {
	s, ok := updateStatements[statementKey{k, arrays, slotted}]
	if !ok {
		return "", fmt.Errorf("counters: unknown kind %q", k)
	}
	return s, nil
}

// statementKey names one of updateStatements.
type statementKey struct {
	kind            Kind
	arrays, slotted bool
}

// updateStatements are the UPDATEs of every kind, arrays or scalars, slotted or not.
var updateStatements = func() map[statementKey]string {
	out := make(map[statementKey]string, 4*len(kinds))
	for k, kd := range kinds {
		for _, arrays := range []bool{false, true} {
			for _, slotted := range []bool{false, true} {
				out[statementKey{k, arrays, slotted}] = "UPDATE " + kd.table + " t SET " + kd.set + deltaFrom(arrays, slotted) + whereKey(kd, slotted)
			}
		}
	}
	return out
}()

// whereKey matches a kind's row with its delta, by its key column; a slotted delta also by its
// slot. An unslotted delta's row is the only one of its id (slot 0), so the default path sends
// the statement it sent before slots existed.
func whereKey(k kind, slotted bool) string {
	where := "\n\tWHERE t." + k.keyColumn() + " = d.id"
	if slotted {
		where += " AND t.slot = d.slot"
	}
	return where
}

// scalarArgs is updateArgs for one delta.
func scalarArgs(d Delta) []any {
	args := []any{d.Target, d.Requests, d.Successes, d.Failures, d.Tokens, d.Cost.Numeric(), d.ResponseTimeMs,
		d.DNSFailures, d.StreamErrors, pgtype.Timestamptz{Time: d.LastUsedAt, Valid: !d.LastUsedAt.IsZero()},
		pgtype.Text{String: d.LastIP, Valid: d.LastIP != ""}}
	if d.slotted() {
		args = append(args, int16(d.Slot))
	}
	return args
}

// Apply writes deltas compacted: it merges them per row and sends one UPDATE per kind, in
// key order, pipelined in one round trip. It returns the number of statements sent.
func Apply(ctx context.Context, tx pgx.Tx, deltas []Delta) (int, error) {
	var b pgx.Batch
	groups, err := queueApply(&b, deltas)
	if err != nil || len(groups) == 0 {
		return 0, err
	}
	br := tx.SendBatch(ctx, &b)
	if err := readApply(br, groups); err != nil {
		br.Close()
		return len(groups), err
	}
	return len(groups), br.Close()
}

// queueApply queues Apply's UPDATEs of deltas on b, merged per row, one per kind in key
// order, and returns the deltas of each, in the order their results come back (readApply).
func queueApply(b *pgx.Batch, deltas []Delta) ([][]Delta, error) {
	merged := Compact(deltas)
	var groups [][]Delta
	for start := 0; start < len(merged); {
		end := start
		for end < len(merged) && merged[end].Kind == merged[start].Kind && merged[end].slotted() == merged[start].slotted() {
			end++
		}
		sql, err := updateSQL(merged[start].Kind, true, merged[start].slotted())
		if err != nil {
			return nil, err
		}
		b.Queue(sql, updateArgs(merged[start:end])...)
		groups = append(groups, merged[start:end])
		start = end
	}
	return groups, nil
}

// readApply reads the results of queueApply's UPDATEs: every delta's row must exist.
func readApply(br pgx.BatchResults, groups [][]Delta) error {
	for _, g := range groups {
		tag, err := br.Exec()
		if err == nil {
			err = checkAffected(g, tag.RowsAffected())
		}
		if err != nil {
			return fmt.Errorf("applying %d %s deltas: %w", len(g), g[0].Kind, err)
		}
	}
	return nil
}

// ApplyEach writes every delta as its own single-row UPDATE, one round trip each, in the
// order given (no compaction). It returns the number of statements sent.
func ApplyEach(ctx context.Context, tx pgx.Tx, deltas []Delta) (int, error) {
	for i, d := range deltas {
		sql, err := updateSQL(d.Kind, false, d.slotted())
		if err != nil {
			return i, err
		}
		tag, err := tx.Exec(ctx, sql, scalarArgs(d)...)
		if err == nil {
			err = checkAffected(deltas[i:i+1], tag.RowsAffected())
		}
		if err != nil {
			return i + 1, fmt.Errorf("applying a %s delta to %s: %w", d.Kind, d.Target, err)
		}
	}
	return len(deltas), nil
}

// checkAffected fails when a delta's target row does not exist: a counter must never be
// dropped silently.
func checkAffected(ds []Delta, affected int64) error {
	if affected != int64(len(ds)) {
		return fmt.Errorf("%d of %d target rows exist", affected, len(ds))
	}
	return nil
}

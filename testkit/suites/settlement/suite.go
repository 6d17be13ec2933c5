// Package settlement is the usage-settlement hot spot: every request settles one pending usage
// row — locks it, writes its settlement snapshot, marks it settled — and debits the cost from
// the user's wallet, adds it to the api key's quota and to the provider's monthly total; with
// --hot-keys 1, the same three rows for every request. It owns the suite's SQL, its seed and
// its exact verification; the engine (testkit) owns everything else.
//
// # Idempotence
//
// Settling is idempotent by request_id. The snapshot insert (ON CONFLICT (request_id) DO
// NOTHING … RETURNING) decides: only a usage whose snapshot this transaction created is marked
// settled and debited, and the usage row is locked first, so two deliveries of one settlement
// serialise on it and the second finds the snapshot. A settlement of a usage that is already
// settled is rejected as a no-op success, not an error: the settlement the caller asked for
// exists, and a redelivered message (or a batch retried after a COMMIT whose outcome was
// unknown) must be acknowledged, not retried forever. The same rule makes the async writers
// exact under the queue's retries and one-by-one fallback, which re-send records that may
// already be committed. --redeliver-every delivers some settlements twice to show it.
//
// # Seed
//
// Each run seeds one pending usage per request (request i settles usage "req-i", which belongs
// to hot set i % --hot-keys) with generate_series, so 60000 rows take a fraction of a second.
// --duration with a --requests (given or the default) still stops at --requests, so that many
// are seeded. A run bound by --duration alone (--requests 0, or a --levels ladder level
// without --requests) cannot know its request count up front: it seeds --pending-usages rows,
// by default DurationSeedPerSecond per second of --duration (above what sync and outbox reach
// here; an async run that outruns it should pass --pending-usages), and requests past the seed
// fail with errNotSeeded: counted as failed, never applied, their usages left pending.
//
// Its own table is the settlement snapshot (settlement_snapshots.sql); usage, wallets and the
// counter rows are the shared ones of schema.
package settlement

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/spf13/pflag"

	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/counters"
)

// sqlFiles are the suite's own tables (settlement_snapshots.sql); package schema creates the shared ones.
//
//go:embed settlement_snapshots.sql
var sqlFiles embed.FS

// Name is the suite's (and binary's) name.
const Name = "usage_settlement_hotspot_baseline"

// DurationSeedPerSecond is how many pending usages a duration-bound run seeds per second of
// --duration when --pending-usages is not given.
const DurationSeedPerSecond = 20000

// initialBalance is every hot wallet's balance before the run.
const initialBalance = 1_000_000 * counters.Unit

// A usage's cost varies with its request index so that sums are not N × a constant:
// costBase + (i·costMul mod costMod)·costStep, in Money units (0.00100000 … 0.00233700).
// Seed computes the same formula in SQL from these constants.
const (
	costBase counters.Money = 100_000 // 0.001
	costMul                 = 37
	costMod                 = 101
	costStep counters.Money = 1_337
)

func costOf(i int64) counters.Money { return costBase + counters.Money(i*costMul%costMod)*costStep }

// Suite implements testkit.Suite, testkit.Reconciler, testkit.Flagger and testkit.Validator.
type Suite struct {
	pendingUsages  int64
	redeliverEvery int64
}

// New returns the suite.
func New() *Suite { return &Suite{} }

var (
	_ testkit.Flagger    = (*Suite)(nil)
	_ testkit.Validator  = (*Suite)(nil)
	_ testkit.Reconciler = (*Suite)(nil)
)

// Info describes the suite.
func (*Suite) Info() testkit.Info {
	return testkit.Info{
		Name:    Name,
		Summary: "usage settlement onto hot wallet / api key quota / provider monthly rows",
		Description: `Each request settles one pending usage row (seeded per run; its cost varies by request,
0.001–0.0023): it locks the row (SELECT … FOR UPDATE), writes its settlement snapshot (INSERT …
ON CONFLICT (request_id) DO NOTHING), marks it settled, debits the cost from the user's wallet
and adds it to the api key's quota_used and the provider's monthly_used.
  sync           one transaction per request: all of the above; the wallet row, updated first,
                 is where requests queue (lock waits)
  outbox         one transaction per request: lock, snapshot, status and 3 delta rows; a flush
                 loop claims deltas (FOR UPDATE SKIP LOCKED), sums them per row and applies them
  async          the request enqueues its settlement (slot: the wallet it debits); workers settle
                 a batch (lock, snapshots, statuses: one statement each) and apply every debit of
                 every new settlement as its own UPDATE, in order
  async-compact  as async, but the settlements of one wallet are folded together and the debits
                 summed per row: one UPDATE per hot row per batch
Settling is idempotent: a usage already settled (a redelivery, a retried batch) is a no-op
success and is never debited twice (--redeliver-every N shows it). Every balance and total is
then checked exactly (NUMERIC) against the requests that succeeded, every applied usage is
checked settled exactly once with its snapshot, and every other usage still pending.`,
		Example:      Name + " --requests 20000 --concurrency 1000 --modes sync,outbox,async,async-compact --output /tmp/settlement.json",
		Modes:        counters.Modes,
		DefaultModes: counters.Modes,
		HotTables:    []string{"wallets", "providers", "api_keys"},
		// Memory only until its records have a codec (--queue-backend redis is refused).
		QueueBackends: []string{testkit.BackendMemory, testkit.BackendRedis},
		SQL:           sqlFiles,
		Slots:         true,
		TotalSQL:      `SELECT balance FROM wallets_totals WHERE user_id = 'user-hot-0'`,
	}
}

// Flags adds the suite's own flags.
func (s *Suite) Flags(fs *pflag.FlagSet) {
	fs.Int64Var(&s.pendingUsages, "pending-usages", 0, fmt.Sprintf(
		"pending usage rows seeded per run (0: one per --requests; a run bound by --duration alone: %d per second of --duration, and requests past them fail)", DurationSeedPerSecond))
	fs.Int64Var(&s.redeliverEvery, "redeliver-every", 0,
		"deliver every Nth settlement twice, as an at-least-once queue would; the second must change nothing (0: off)")
}

// Validate rejects suite flags that make no sense.
func (s *Suite) Validate(c testkit.Config) error {
	switch {
	case s.pendingUsages < 0:
		return errors.New("--pending-usages must not be negative")
	case s.redeliverEvery < 0:
		return errors.New("--redeliver-every must not be negative")
	case s.pendingUsages > 0 && c.Requests > 0 && s.pendingUsages < c.Requests:
		return fmt.Errorf("--pending-usages %d is less than --requests %d: every request needs a usage to settle", s.pendingUsages, c.Requests)
	}
	return nil
}

// seeded is the number of pending usages run r starts from.
func (s *Suite) seeded(r *testkit.Run) int64 {
	switch {
	case s.pendingUsages > 0:
		return s.pendingUsages
	case r.Requests() > 0:
		return r.Requests()
	}
	return DurationSeedPerSecond * int64(math.Ceil(r.Config().Duration.Seconds()))
}

// hot row ids for hot set h.
func userID(h int) string     { return "user-hot-" + strconv.Itoa(h) }
func apiKeyID(h int) string   { return "key-hot-" + strconv.Itoa(h) }
func providerID(h int) string { return "provider-hot-" + strconv.Itoa(h) }

func requestID(i int64) string { return "req-" + strconv.FormatInt(i, 10) }

func hotOf(r *testkit.Run, i int64) int { return int(i % int64(r.Config().HotKeys)) }

// Seed creates --hot-keys sets of a funded wallet (with its user), an api key and a provider,
// each split into --slots (the balance on the first), and the pending usages, in one
// transaction.
func (s *Suite) Seed(ctx context.Context, r *testkit.Run) error {
	hot := r.Config().HotKeys
	return pgx.BeginFunc(ctx, r.Admin(), func(tx pgx.Tx) error {
		for _, st := range []struct {
			table, sql string
			args       []any
		}{
			{"users", `INSERT INTO users (id, name) SELECT 'user-hot-' || h, 'hot user ' || h FROM generate_series(0, $1 - 1) h`, []any{hot}},
			{"wallets", `INSERT INTO wallets (user_id, balance) SELECT 'user-hot-' || h, $2 FROM generate_series(0, $1 - 1) h`,
				[]any{hot, initialBalance.Numeric()}},
			{"api_keys", `INSERT INTO api_keys (id, user_id) SELECT 'key-hot-' || h, 'user-hot-' || h FROM generate_series(0, $1 - 1) h`, []any{hot}},
			{"providers", `INSERT INTO providers (id, name) SELECT 'provider-hot-' || h, 'provider ' || h FROM generate_series(0, $1 - 1) h`, []any{hot}},
			{"usage", `INSERT INTO usage (request_id, user_id, api_key_id, provider_api_key_id, provider_id, model_id,
				input_tokens, output_tokens, total_tokens, cost)
			  SELECT 'req-' || i, 'user-hot-' || i % $1, 'key-hot-' || i % $1, 'pkey-hot-' || i % $1,
			         'provider-hot-' || i % $1, 'model-hot-' || i % $1, 10, 20, 30,
			         ($3::int8 + (i * $4::int8 % $5::int8) * $6::int8) * 0.00000001
			  FROM generate_series(0::int8, $2 - 1) i`,
				[]any{hot, s.seeded(r), int64(costBase), costMul, costMod, int64(costStep)}},
		} {
			if _, err := tx.Exec(ctx, st.sql, st.args...); err != nil {
				return fmt.Errorf("seeding %s: %w", st.table, err)
			}
		}
		return counters.SeedSlots(ctx, tx.Conn(), r.Slots())
	})
}

// errNotSeeded fails a request of a duration-bound run that outran its seeded usages.
var errNotSeeded = errors.New("no pending usage seeded for this request (raise --pending-usages)")

// Workload returns one request in r.Mode().
func (s *Suite) Workload(ctx context.Context, r *testkit.Run) (*testkit.Workload, error) {
	var wl *testkit.Workload
	var err error
	slots := counters.SlotsOf(r)
	switch r.Mode() {
	case testkit.Sync:
		wl = &testkit.Workload{Op: s.redelivering(r.SyncTx(func(ctx context.Context, tx pgx.Tx, i int64) error {
			return settleAndDebit(ctx, tx, i, slots.For(tx, i, requestID(i)))
		}))}
	case counters.Outbox:
		wl, err = counters.OutboxWorkload(ctx, r, s.redelivering(r.SyncTx(func(ctx context.Context, tx pgx.Tx, i int64) error {
			return settleToOutbox(ctx, tx, i, slots.For(tx, i, requestID(i)))
		})))
	case testkit.Async, testkit.AsyncCompact:
		wl, err = testkit.AsyncWorkload(ctx, r, testkit.AsyncSpec[counters.Key, claims]{
			Records: func(i int64) []claims {
				c := claims{Hot: hotOf(r, i), Slot: slots.For(nil, i, requestID(i)), Requests: []int64{i}}
				if s.redelivered(i) {
					return []claims{c, {Hot: c.Hot, Slot: c.Slot, Requests: []int64{i}}}
				}
				return []claims{c}
			},
			Key:     claims.wallet,
			Worker:  slots.Worker(),
			Merge:   func(pending *claims, newer claims) { pending.Requests = append(pending.Requests, newer.Requests...) },
			Compare: counters.CompareKeys,
			Writer:  func(compact bool) queue.TxWriter[claims] { return batchWriter{compact: compact} },
		})
	default:
		return nil, fmt.Errorf("mode %q not supported", r.Mode())
	}
	if err != nil {
		return nil, err
	}
	wl.Op = onlySeeded(s.seeded(r), wl.Op)
	return wl, nil
}

func (s *Suite) redelivered(i int64) bool { return s.redeliverEvery > 0 && i%s.redeliverEvery == 0 }

// redelivering runs op a second time for the requests --redeliver-every picks.
func (s *Suite) redelivering(op testkit.Op) testkit.Op {
	if s.redeliverEvery == 0 {
		return op
	}
	return func(ctx context.Context, req *testkit.Request) error {
		if err := op(ctx, req); err != nil || !s.redelivered(req.Index) {
			return err
		}
		return op(ctx, req)
	}
}

func onlySeeded(seeded int64, op testkit.Op) testkit.Op {
	return func(ctx context.Context, req *testkit.Request) error {
		if req.Index >= seeded {
			return errNotSeeded
		}
		return op(ctx, req)
	}
}

// settleAndDebit is one sync request: settle the usage and apply its debits in place, to slot.
func settleAndDebit(ctx context.Context, tx pgx.Tx, i int64, slot int) error {
	fresh, _, err := settle(ctx, tx, []int64{i})
	if err != nil {
		return err
	}
	_, err = debit(ctx, tx, fresh, func(string) int { return slot }, false)
	return err
}

// settleToOutbox is one outbox request: settle the usage and leave its debits (to slot) to the
// outbox.
func settleToOutbox(ctx context.Context, tx pgx.Tx, i int64, slot int) error {
	fresh, _, err := settle(ctx, tx, []int64{i})
	if err != nil || len(fresh) == 0 {
		return err
	}
	return counters.InsertOutbox(ctx, tx, fresh[0].requestID, counters.InSlot(fresh[0].debits(), slot))
}

// claims is the async queue record: settlements debiting one wallet slot (hot set and slot:
// the queue's slot), in arrival order; compaction appends the later ones.
type claims struct {
	Hot      int
	Slot     int
	Requests []int64
}

// wallet is the queue's slot of a claim: the wallet slot it debits, so that with --slots the
// slots of one wallet can belong to different workers.
func (c claims) wallet() counters.Key {
	return counters.Key{Kind: counters.WalletDebit, Target: userID(c.Hot), Slot: c.Slot}
}

// batchWriter settles a batch of claims and applies the debits of the new settlements:
// compacted (summed per hot row, one UPDATE per table) or each as its own UPDATE, in order.
type batchWriter struct{ compact bool }

func (w batchWriter) WriteBatch(ctx context.Context, tx pgx.Tx, batch []claims) (int, error) {
	var requests []int64
	slotOf := make(map[string]int)
	for _, c := range batch {
		requests = append(requests, c.Requests...)
		for _, i := range c.Requests {
			slotOf[requestID(i)] = c.Slot
		}
	}
	fresh, ops, err := settle(ctx, tx, requests)
	if err != nil {
		return ops, err
	}
	n, err := debit(ctx, tx, fresh, func(id string) int { return slotOf[id] }, w.compact)
	return ops + n, err
}

// settledUsage is a usage this transaction settled: what its settlement debits.
type settledUsage struct {
	requestID, userID, apiKeyID, providerID string
	cost                                    counters.Money
}

// debits are the usage's hot-row deltas, wallet first: in sync mode the wallet row is where
// concurrent settlements queue, and the rows after it are then reached one at a time.
func (u settledUsage) debits() []counters.Delta {
	return []counters.Delta{
		{Key: counters.Key{Kind: counters.WalletDebit, Target: u.userID}, Cost: u.cost},
		{Key: counters.Key{Kind: counters.APIKeyQuota, Target: u.apiKeyID}, Cost: u.cost},
		{Key: counters.Key{Kind: counters.ProviderMonthly, Target: u.providerID}, Cost: u.cost},
	}
}

// settle settles the usages of requests (repeats allowed) and returns those this transaction
// settled, in request order, once each, with the number of statements sent:
//  1. lock the usage rows (FOR UPDATE, in request_id order so concurrent batches cannot
//     deadlock);
//  2. insert their snapshots ON CONFLICT (request_id) DO NOTHING: the rows returned are the
//     new settlements, the others were settled before (a no-op, see the package doc);
//  3. mark the new ones settled.
//
// A usage whose status disagrees with its snapshot (pending with a snapshot, settled without
// one) is an error: the invariant that makes settling idempotent is broken.
func settle(ctx context.Context, tx pgx.Tx, requests []int64) ([]settledUsage, int, error) {
	ids := make([]string, len(requests))
	for k, i := range requests {
		ids[k] = requestID(i)
	}
	rows, err := tx.Query(ctx, `
		SELECT request_id, user_id, api_key_id, provider_id, cost::text, billing_status
		FROM usage WHERE request_id = ANY($1)
		ORDER BY request_id
		FOR UPDATE`, ids)
	if err != nil {
		return nil, 1, fmt.Errorf("locking usages: %w", err)
	}
	var order []settledUsage // in lock (request_id) order
	locked := make(map[string]settledUsage, len(ids))
	pending := make(map[string]bool, len(ids))
	var u settledUsage
	var cost, status string
	_, err = pgx.ForEachRow(rows, []any{&u.requestID, &u.userID, &u.apiKeyID, &u.providerID, &cost, &status}, func() error {
		var err error
		if u.cost, err = counters.ParseMoney(cost); err != nil {
			return fmt.Errorf("usage %s: %w", u.requestID, err)
		}
		order = append(order, u)
		locked[u.requestID] = u
		pending[u.requestID] = status == "pending"
		return nil
	})
	if err != nil {
		return nil, 1, fmt.Errorf("locking usages: %w", err)
	}
	for _, id := range ids {
		if _, ok := locked[id]; !ok {
			return nil, 1, fmt.Errorf("usage %s does not exist", id)
		}
	}

	n := len(order)
	snapIDs, users, keys, providers := make([]string, 0, n), make([]string, 0, n), make([]string, 0, n), make([]string, 0, n)
	costs := make([]pgtype.Numeric, 0, n)
	for _, u := range order {
		snapIDs, users, keys, providers = append(snapIDs, u.requestID), append(users, u.userID), append(keys, u.apiKeyID), append(providers, u.providerID)
		costs = append(costs, u.cost.Numeric())
	}
	rows, err = tx.Query(ctx, `
		INSERT INTO usage_settlement_snapshots (request_id, user_id, api_key_id, provider_id, cost)
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::numeric[])
		ON CONFLICT (request_id) DO NOTHING
		RETURNING request_id`, snapIDs, users, keys, providers, costs)
	if err != nil {
		return nil, 2, fmt.Errorf("inserting snapshots: %w", err)
	}
	created, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, 2, fmt.Errorf("inserting snapshots: %w", err)
	}
	isNew := make(map[string]bool, len(created))
	for _, id := range created {
		isNew[id] = true
	}
	for id, p := range pending {
		if p != isNew[id] {
			return nil, 2, fmt.Errorf("usage %s: billing status and settlement snapshot disagree (pending=%v, snapshot created now=%v)", id, p, isNew[id])
		}
	}
	if len(created) == 0 {
		return nil, 2, nil
	}
	if _, err := tx.Exec(ctx, `UPDATE usage SET billing_status = 'settled', finalized_at = now() WHERE request_id = ANY($1)`, created); err != nil {
		return nil, 3, fmt.Errorf("marking usages settled: %w", err)
	}
	fresh := make([]settledUsage, 0, len(created))
	for _, id := range ids {
		if isNew[id] {
			fresh = append(fresh, locked[id])
			delete(isNew, id) // a repeated request is settled once
		}
	}
	return fresh, 3, nil
}

// debit applies the debits of the usages just settled, each to the slot its request picked:
// compacted (summed per hot row, one UPDATE per table) or every debit of every usage as its own
// UPDATE, in order.
func debit(ctx context.Context, tx pgx.Tx, fresh []settledUsage, slotOf func(requestID string) int, compact bool) (int, error) {
	deltas := make([]counters.Delta, 0, 3*len(fresh))
	for _, u := range fresh {
		deltas = append(deltas, counters.InSlot(u.debits(), slotOf(u.requestID))...)
	}
	if compact {
		return counters.Apply(ctx, tx, deltas)
	}
	return counters.ApplyEach(ctx, tx, deltas)
}

// Persisted finds every request's settlement by its snapshot.
func (*Suite) Persisted(ctx context.Context, r *testkit.Run, n int64) ([]int32, error) {
	counts := make([]int32, n)
	rows, err := r.Admin().Query(ctx, `SELECT request_id FROM usage_settlement_snapshots`)
	if err != nil {
		return nil, err
	}
	var id string
	_, err = pgx.ForEachRow(rows, []any{&id}, func() error {
		i, err := strconv.ParseInt(strings.TrimPrefix(id, "req-"), 10, 64)
		if err != nil || i < 0 || i >= n {
			return fmt.Errorf("settlement snapshot with unexpected request_id %q", id)
		}
		counts[i]++
		return nil
	})
	return counts, err
}

// Verify checks every hot row, every usage and the outbox exactly.
func (s *Suite) Verify(ctx context.Context, r *testkit.Run, res testkit.Result) ([]results.Check, error) {
	hot := r.Config().HotKeys
	seeded := s.seeded(r)
	attempted := min(res.Len(), seeded)
	applied := make([]bool, seeded)
	debited := make([]counters.Money, hot)
	var nApplied int64
	var total counters.Money
	for i := int64(0); i < attempted; i++ {
		if !res.Applied(i) {
			continue
		}
		applied[i] = true
		debited[hotOf(r, i)] += costOf(i)
		total += costOf(i)
		nApplied++
	}
	c := r.NewChecks()

	var balances, quotas, monthly string
	if err := r.Admin().QueryRow(ctx, `
		SELECT (SELECT sum(balance) FROM wallets)::numeric(38,8)::text,
		       (SELECT sum(quota_used) FROM api_keys)::numeric(38,8)::text,
		       (SELECT sum(monthly_used) FROM providers)::numeric(38,8)::text`).Scan(&balances, &quotas, &monthly); err != nil {
		return nil, fmt.Errorf("reading hot rows: %w", err)
	}
	c.Money("wallets.balance (all hot wallets) = initial − Σ cost", counters.Money(hot)*initialBalance-total, balances)
	c.Money("api_keys.quota_used = Σ cost", total, quotas)
	c.Money("providers.monthly_used = Σ cost", total, monthly)

	perSet := make([]pgtype.Numeric, hot)
	for h, m := range debited {
		perSet[h] = m.Numeric()
	}
	exactSets, err := testkit.QueryInt(ctx, r.Admin(), `
		SELECT count(*) FROM unnest($1::numeric[]) WITH ORDINALITY AS w(cost, h)
		JOIN wallets_totals wa ON wa.user_id = 'user-hot-' || (w.h - 1)
		JOIN api_keys_totals k ON k.id = 'key-hot-' || (w.h - 1)
		JOIN providers_totals p ON p.id = 'provider-hot-' || (w.h - 1)
		WHERE wa.balance = $2 - w.cost AND k.quota_used = w.cost AND p.monthly_used = w.cost`,
		perSet, initialBalance.Numeric())
	if err != nil {
		return nil, err
	}
	c.Int("hot sets whose wallet, quota and monthly total are exact", int64(hot), exactSets)
	if err := counters.CheckSlots(ctx, r, c, "wallets", "api_keys", "providers"); err != nil {
		return nil, err
	}

	var settledOnce, stillPending int64
	if err := r.Admin().QueryRow(ctx, `
		SELECT count(*) FILTER (WHERE a.applied AND u.billing_status = 'settled' AND u.finalized_at IS NOT NULL
		                          AND s.cost = u.cost AND s.user_id = u.user_id AND s.api_key_id = u.api_key_id
		                          AND s.provider_id = u.provider_id),
		       count(*) FILTER (WHERE NOT a.applied AND u.billing_status = 'pending' AND u.finalized_at IS NULL
		                          AND s.request_id IS NULL)
		FROM unnest($1::bool[]) WITH ORDINALITY AS a(applied, n)
		JOIN usage u ON u.request_id = 'req-' || (a.n - 1)
		LEFT JOIN usage_settlement_snapshots s ON s.request_id = u.request_id`, applied).Scan(&settledOnce, &stillPending); err != nil {
		return nil, fmt.Errorf("checking usages: %w", err)
	}
	c.Int("applied requests whose usage is settled, with its snapshot", nApplied, settledOnce)
	c.Int("other seeded usages still pending, without a snapshot", seeded-nApplied, stillPending)

	var usages, settled, snapshots, outboxPending, outboxProcessed int64
	if err := r.Admin().QueryRow(ctx, `
		SELECT (SELECT count(*) FROM usage), (SELECT count(*) FROM usage WHERE billing_status = 'settled'),
		       (SELECT count(*) FROM usage_settlement_snapshots),
		       (SELECT count(*) FROM usage_counter_deltas WHERE processed_at IS NULL),
		       (SELECT count(*) FROM usage_counter_deltas WHERE processed_at IS NOT NULL)`).
		Scan(&usages, &settled, &snapshots, &outboxPending, &outboxProcessed); err != nil {
		return nil, fmt.Errorf("counting rows: %w", err)
	}
	c.Int("usage rows = seeded", seeded, usages)
	c.Int("settled usages = applied requests", nApplied, settled)
	c.Int("settlement snapshots = applied requests", nApplied, snapshots)
	c.Int("outbox pending deltas", 0, outboxPending)
	wantProcessed := int64(0)
	if r.Mode() == counters.Outbox {
		wantProcessed = 3 * nApplied
	}
	c.Int("outbox processed deltas = 3 × applied requests (outbox mode only)", wantProcessed, outboxProcessed)
	return c.List(), nil
}

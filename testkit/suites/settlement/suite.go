// Package settlement is the usage-settlement hot spot: every request settles one pending usage
// row — locks it, writes its settlement snapshot, marks it settled — and debits the cost from
// the user's wallet, adds it to the api key's quota and to the provider's monthly total; with
// --hot-keys 1, the same three rows for every request. It declares the suite on package
// counters (the rows, each request's debits, settling as its claim), adds its flags, the
// pending usages it seeds and the checks of their settlement, and owns that SQL; counters and
// the engine own everything else.
//
// # Idempotence
//
// Settling is idempotent by request_id. The snapshot insert (ON CONFLICT (request_id) DO
// NOTHING … RETURNING; on MySQL one multi-row INSERT, then, after a duplicate key, one per
// row) decides: only a usage whose snapshot this transaction created is marked
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
// to the request's hot set) in one statement, so 60000 rows take a fraction of a second.
// --duration with a --requests (given or the default) still stops at --requests, so that many
// are seeded. A run bound by --duration alone (--requests 0, or a --levels ladder level
// without --requests) cannot know its request count up front: it seeds --pending-usages rows,
// by default DurationSeedPerSecond per second of --duration (above what sync and outbox reach
// here; an async run that outruns it should pass --pending-usages), and requests past the seed
// fail with errNotSeeded: counted as failed, never applied, their usages left pending.
//
// Its own table is the settlement snapshot (settlement_snapshots.sql, MySQL's in mysql/); usage,
// wallets and the counter rows are the shared ones of schema. Its SQL is in each dialect's
// (statements.go), chosen by the run's database.
package settlement

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/counters"
	"github.com/hotspotkit/hotspotkit/testkit/decimal"
	"github.com/hotspotkit/hotspotkit/testkit/suites/gateway"
)

// sqlFiles are the suite's own tables (settlement_snapshots.sql, and MySQL's in mysql/); package
// schema creates the shared ones.
//
//go:embed settlement_snapshots.sql mysql/*.sql
var sqlFiles embed.FS

// Name is the suite's (and binary's) name.
const Name = "usage_settlement_hotspot_baseline"

// DurationSeedPerSecond is how many pending usages a duration-bound run seeds per second of
// --duration when --pending-usages is not given.
const DurationSeedPerSecond = 20000

// initialBalance is every hot wallet's balance before the run (the wallets' seed statement).
const initialBalance = 1_000_000 * decimal.One

// A usage's cost varies with its request index so that sums are not N × a constant:
// costBase + (i·costMul mod costMod)·costStep, in decimal.Decimal units (0.00100000 … 0.00233700).
// Seed computes the same formula in SQL from these constants.
const (
	costBase decimal.Decimal = 100_000 // 0.001
	costMul                  = 37
	costMod                  = 101
	costStep decimal.Decimal = 1_337
)

func costOf(i int64) decimal.Decimal { return costBase + decimal.Decimal(i*costMul%costMod)*costStep }

// Suite is the declared counter suite with the settlement's flags, seed and checks.
type Suite struct {
	*counters.Suite
	pendingUsages  int64
	redeliverEvery int64
}

var (
	_ testkit.Flagger    = (*Suite)(nil)
	_ testkit.Validator  = (*Suite)(nil)
	_ testkit.Reconciler = (*Suite)(nil)
)

// New returns the suite.
func New() *Suite {
	s := &Suite{}
	s.Suite = counters.New(counters.Declaration{
		Info: testkit.Info{
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
			Example:   Name + " --requests 20000 --concurrency 1000 --modes sync,outbox,async,async-compact --output /tmp/settlement.json",
			HotTables: []string{"wallets", "providers", "api_keys"},
			SQL:       sqlFiles,
			TotalSQL:  `SELECT balance FROM wallets_totals WHERE user_id = 'user-hot-0'`,
		},
		SeedSQL: []string{
			`INSERT INTO users (id, name) SELECT 'user-hot-' || h, 'hot user ' || h FROM generate_series(0, $1 - 1) h`,
			`INSERT INTO wallets (user_id, balance) SELECT 'user-hot-' || h, 1000000 FROM generate_series(0, $1 - 1) h`,
			`INSERT INTO api_keys (id, user_id) SELECT 'key-hot-' || h, 'user-hot-' || h FROM generate_series(0, $1 - 1) h`,
			`INSERT INTO providers (id, name) SELECT 'provider-hot-' || h, 'provider ' || h FROM generate_series(0, $1 - 1) h`,
		},
		Request:    request,
		Claim:      postgresSQL.settle,
		ClaimAll:   settleAll,
		ClaimTable: "usage_settlement_snapshots",
		ClaimIndex: "split_part(request_id, '-', 2)::int8",
		MySQL: &counters.DialectSQL{
			SeedSQL: []string{
				gateway.UsersSeedMySQL,
				`INSERT INTO wallets (user_id, balance) SELECT CONCAT('user-hot-', h), 1000000 FROM ` + counters.HotSetsMySQL,
				gateway.APIKeysSeedMySQL,
				gateway.ProvidersSeedMySQL,
			},
			Claim:      mysqlSQL.settle,
			ClaimIndex: gateway.RequestIndexMySQL,
		},
		Deliveries: func(i int64) int {
			if s.redeliverEvery > 0 && i%s.redeliverEvery == 0 {
				return 2
			}
			return 1
		},
	})
	return s
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

// What a settlement changes in each of its hot rows: the wallet's balance goes down by the
// cost (an Add of its negative), the key's quota used and the provider's month up.
var (
	walletDebit = gateway.Wallets.MustChange("balance", "updated_at")
	apiKeyQuota = gateway.APIKeys.MustChange("quota_used")
)

// request is what settling request i's usage debits, wallet first: in sync mode the wallet row
// is where concurrent settlements queue, and the rows after it are then reached one at a time.
func request(i int64, h int) [][]counters.Delta {
	cost := counters.Amount(costOf(i))
	p := counters.NewPart(3, 3)
	p.Add(walletDebit, gateway.Row(gateway.Wallets, userID(h)), counters.Amount(-costOf(i)))
	p.Add(apiKeyQuota, gateway.Row(gateway.APIKeys, apiKeyID(h)), cost)
	p.Add(gateway.ProviderMonthly, gateway.Row(gateway.Providers, providerID(h)), cost)
	return [][]counters.Delta{p.Deltas()}
}

// Seed creates the hot rows (counters) and then the pending usages: one per request, each
// belonging to the request's hot set (Config.HotSet: i mod --hot-keys under uniform), with
// costOf(i).
func (s *Suite) Seed(ctx context.Context, r *testkit.Run) error {
	if err := s.Suite.Seed(ctx, r); err != nil {
		return err
	}
	sql, err := statementsOf(r.Dialect())
	if err != nil {
		return err
	}
	if err := sql.seedUsages(ctx, r.Admin(), hotSets(r, s.seeded(r))); err != nil {
		return fmt.Errorf("seeding usage: %w", err)
	}
	return nil
}

// hotSets are the hot sets of requests 0..n-1 (Config.HotSet), as the seed's array.
func hotSets(r *testkit.Run, n int64) []int32 {
	c := r.Config()
	sets := make([]int32, n)
	for i := range sets {
		sets[i] = int32(c.HotSet(int64(i)))
	}
	return sets
}

// errNotSeeded fails a request of a duration-bound run that outran its seeded usages.
var errNotSeeded = errors.New("no pending usage seeded for this request (raise --pending-usages)")

// Workload is the declared suite's, for the seeded usages only.
func (s *Suite) Workload(ctx context.Context, r *testkit.Run) (*testkit.Workload, error) {
	wl, err := s.Suite.Workload(ctx, r)
	if err != nil {
		return nil, err
	}
	seeded, op := s.seeded(r), wl.Op
	wl.Op = func(ctx context.Context, req *testkit.Request) error {
		if req.Index >= seeded {
			return errNotSeeded
		}
		return op(ctx, req)
	}
	return wl, nil
}

// settleAll is settle's pipelined form (counters.Declaration.ClaimAll), for a batch of pending
// usages, as every batch but a retried or redelivered one is: one statement marks them settled
// and writes their snapshots from the rows the UPDATE returns, so each usage is looked up once
// (as two statements, the INSERT would look them up again). A usage settled before is left
// alone by the UPDATE (fewer rows), one with a snapshot fails the INSERT on its key: either
// sends the batch through settle. The UPDATE locks the rows in request_id order (an index scan
// of = ANY reads its array sorted), as settle's FOR UPDATE does.
func settleAll(batch []counters.Source) []counters.Statement {
	ids := make([]string, len(batch))
	for k, src := range batch {
		ids[k] = counters.RequestID(src.Request)
	}
	n := int64(len(batch))
	return []counters.Statement{{SQL: `WITH settled AS (
			UPDATE usage SET billing_status = 'settled', finalized_at = now()
			WHERE request_id = ANY($1) AND billing_status = 'pending'
			RETURNING request_id, user_id, api_key_id, provider_id, cost)
		INSERT INTO usage_settlement_snapshots (request_id, user_id, api_key_id, provider_id, cost)
		SELECT request_id, user_id, api_key_id, provider_id, cost FROM settled`, Args: []any{ids}, Rows: n}}
}

// Verify adds to the declared suite's checks those of the usages: every applied one settled
// exactly once with its snapshot, every other seeded one still pending.
func (s *Suite) Verify(ctx context.Context, r *testkit.Run, res testkit.Result) ([]testkit.Check, error) {
	checks, err := s.Suite.Verify(ctx, r, res)
	if err != nil {
		return nil, err
	}
	seeded := s.seeded(r)
	applied := make([]bool, seeded)
	var nApplied int64
	for i := range min(res.Len(), seeded) {
		if res.Applied(i) {
			applied[i] = true
			nApplied++
		}
	}
	sql, err := statementsOf(r.Dialect())
	if err != nil {
		return nil, err
	}
	u, err := sql.checkUsages(ctx, r.Admin(), applied, hotSets(r, seeded))
	if err != nil {
		return nil, fmt.Errorf("checking usages: %w", err)
	}
	c := r.NewChecks()
	c.Int("applied requests whose usage is settled, with its snapshot", nApplied, u.settledOnce)
	c.Int("seeded usages of their request's hot set (the rows its settlement debits)", seeded, u.inSet)
	c.Int("other seeded usages still pending, without a snapshot", seeded-nApplied, u.stillPending)
	c.Int("usage rows = seeded", seeded, u.usages)
	c.Int("settled usages = applied requests", nApplied, u.settled)
	return append(checks, c.List()...), nil
}

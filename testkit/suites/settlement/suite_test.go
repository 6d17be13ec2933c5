package settlement

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/mariadbtest"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/cli"
	"github.com/hotspotkit/hotspotkit/testkit/counters"
	"github.com/hotspotkit/hotspotkit/testkit/decimal"
	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

func TestMain(m *testing.M) { os.Exit(mariadbtest.Stop(testdb.Main(m))) }

func TestAllModesVerifyAndSyncQueuesOnTheWallet(t *testing.T) {
	suitetest.HotSpotContract(t, New(), 1000, 1, 300, "wallets", "providers")
}

// A settlement delivered twice debits once, in every mode: the second delivery of every third
// request must change nothing, and verification (wallet = initial − Σ cost) stays exact.
func TestRedeliveredSettlementDebitsOnce(t *testing.T) {
	const requests, redelivered = 450, 150
	code, rep, stderr := suitetest.RunShared(t, New(), "--requests", "450", "--concurrency", "60", "--redeliver-every", "3",
		"--modes", "sync,outbox,async,async-compact")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, r := range rep.Runs {
		suitetest.Verified(t, r)
		if r.Load.FailedRequests != 0 {
			t.Errorf("%s: a redelivery failed instead of being a no-op: %v", r.Mode, r.Load.ErrorCounts)
		}
		if q := r.Queue; q != nil && q.EnqueuedTotal != requests+redelivered {
			t.Errorf("%s: %d records enqueued, want %d (the redeliveries included)", r.Mode, q.EnqueuedTotal, requests+redelivered)
		}
	}
}

// seeded opens a fresh schema with n pending usages over hot sets.
func seeded(t *testing.T, s *Suite, n int64, hot int) (sqldb.Conn, *testkit.Run) {
	t.Helper()
	r := suitetest.Seeded(t, s, hot, n)
	return r.Admin(), r
}

func inTx(t *testing.T, conn sqldb.Conn, fn func(sqldb.Tx) error) {
	t.Helper()
	if err := sqldb.BeginFunc(context.Background(), conn, fn); err != nil {
		t.Fatal(err)
	}
}

// Every write path applied twice to the same requests — a redelivery, or a batch retried after
// a COMMIT whose outcome was unknown but had committed — settles and debits them once.
func TestSettlingTwiceDebitsOnce(t *testing.T) {
	ctx := context.Background()
	const n, hot = 12, 2
	all := []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
	for _, name := range []string{"sync", "outbox", "async", "async-compact"} {
		t.Run(name, func(t *testing.T) {
			s := New()
			conn, r := seeded(t, s, n, hot)
			batch := func(tx sqldb.Tx, requests ...int64) []counters.Record {
				var recs []counters.Record
				for _, i := range requests {
					recs = append(recs, s.Records(r, tx, i)...)
				}
				return recs
			}
			write := func(tx sqldb.Tx) error {
				var err error
				switch name {
				case "sync":
					for _, i := range all {
						if _, err = s.Writer(r, false).WriteBatch(ctx, tx, batch(tx, i)); err != nil {
							return err
						}
					}
				case "outbox":
					for _, i := range all {
						if err = s.WriteOutbox(ctx, tx, r, batch(tx, i)); err != nil {
							return err
						}
					}
				case "async":
					_, err = s.Writer(r, false).WriteBatch(ctx, tx, batch(nil, append(all, 3, 3)...))
				case "async-compact":
					merged := batch(nil, 0, 1)
					merged[0].Requests = []int64{0, 2, 4, 6, 8, 10, 4}
					merged[1].Requests = []int64{1, 3, 5, 7, 9, 11}
					_, err = s.Writer(r, true).WriteBatch(ctx, tx, merged)
				}
				return err
			}
			inTx(t, conn, write)
			// The whole thing again, then each request alone, as the queue's fallback would.
			inTx(t, conn, write)
			inTx(t, conn, func(tx sqldb.Tx) error {
				_, err := s.Writer(r, false).WriteBatch(ctx, tx, batch(nil, all...))
				return err
			})
			var want [hot]decimal.Decimal
			for _, i := range all {
				want[i%hot] += costOf(i)
			}
			if name == "outbox" { // the debits wait in the outbox: three per settlement
				var deltas int64
				if err := conn.QueryRow(ctx, `SELECT count(*) FROM counter_outbox`).Scan(&deltas); err != nil || deltas != 3*n {
					t.Errorf("outbox holds %d deltas, want %d (%v)", deltas, 3*n, err)
				}
				want = [hot]decimal.Decimal{}
			}
			for h := range hot {
				var balance, quota, monthly string
				if err := conn.QueryRow(ctx, `SELECT w.balance::text, k.quota_used::text, p.monthly_used::text
					FROM wallets w, api_keys k, providers p WHERE w.user_id = $1 AND k.id = $2 AND p.id = $3`,
					userID(h), apiKeyID(h), providerID(h)).Scan(&balance, &quota, &monthly); err != nil {
					t.Fatal(err)
				}
				if balance != (initialBalance-want[h]).String() || quota != want[h].String() || monthly != want[h].String() {
					t.Errorf("hot set %d: balance %s quota %s monthly %s, want debits of %s", h, balance, quota, monthly, want[h])
				}
			}
			var settled, snapshots int64
			if err := conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM usage WHERE billing_status = 'settled'),
				(SELECT count(*) FROM usage_settlement_snapshots)`).Scan(&settled, &snapshots); err != nil {
				t.Fatal(err)
			}
			if settled != n || snapshots != n {
				t.Errorf("%d usages settled, %d snapshots; want %d each", settled, snapshots, n)
			}
		})
	}
}

// A usage settled without its snapshot (or the reverse) breaks the idempotence invariant:
// settle refuses it instead of guessing.
func TestSettleRefusesAnInconsistentUsage(t *testing.T) {
	ctx := context.Background()
	s := New()
	conn, r := seeded(t, s, 2, 1)
	if _, err := conn.Exec(ctx, `UPDATE usage SET billing_status = 'settled' WHERE request_id = 'req-1'`); err != nil {
		t.Fatal(err)
	}
	err := sqldb.BeginFunc(ctx, conn, func(tx sqldb.Tx) error {
		_, err := s.Writer(r, false).WriteBatch(ctx, tx, s.Records(r, tx, 1))
		return err
	})
	if err == nil {
		t.Fatal("a settled usage without a snapshot was settled again")
	}
}

// The seed must put costOf(i) on usage i: Go computes the expectations, SQL the seed.
func TestSeedCostsMatchCostOf(t *testing.T) {
	conn, _ := seeded(t, New(), 500, 3)
	var want decimal.Decimal
	for i := range int64(500) {
		want += costOf(i)
	}
	var got string
	if err := conn.QueryRow(context.Background(), `SELECT sum(cost)::text FROM usage`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if g, _, err := decimal.Parse(got); err != nil || g != want {
		t.Errorf("seeded costs sum to %s, costOf to %s", got, want)
	}
	var distinct int64
	if err := conn.QueryRow(context.Background(), `SELECT count(DISTINCT cost) FROM usage`).Scan(&distinct); err != nil || distinct < 50 {
		t.Errorf("%d distinct costs (%v): sums would be trivial", distinct, err)
	}
}

func TestHotKeysSpreadTheLoad(t *testing.T) {
	suitetest.HotKeysSpread(t, New(), "sync,async-compact", "hot row sets whose every counter is exact")
}

// Zipfian hot keys (θ = 0.99 over 100 sets): every mode verifies, the hottest set took the
// distribution's share of the writes, and every usage was seeded in the hot set of the
// request that settles it (the wallet, key and provider it debits).
func TestSkewedHotKeys(t *testing.T) {
	rep := suitetest.HotKeysSkewed(t, New())
	for _, r := range rep.Runs {
		if !suitetest.CheckPassed(r, "seeded usages of their request's hot set (the rows its settlement debits)", suitetest.SkewedRequests) {
			t.Errorf("%s: the usages' hot sets are not checked, or wrong: %+v", r.Mode, r.Verification.Checks)
		}
	}
}

// A run bound by --duration alone settles only the usages it seeded; requests past them fail,
// and every usage no applied request settled is still pending.
func TestDurationBoundRunSettlesOnlyItsSeed(t *testing.T) {
	rep, _ := suitetest.Runs(t, New(), 1, "--requests", "0", "--duration", "1500ms", "--pending-usages", "150",
		"--concurrency", "10", "--modes", "sync")
	r := rep.Runs[0]
	suitetest.Verified(t, r)
	if r.Load.CompletedRequests > 150 {
		t.Errorf("%d requests settled with 150 usages seeded", r.Load.CompletedRequests)
	}
}

func TestBadFlagsExitTwo(t *testing.T) {
	for _, args := range [][]string{
		{"--requests", "100", "--pending-usages", "99"},
		{"--redeliver-every", "-1"},
		{"--pending-usages", "-5"},
	} {
		var stdout, stderr bytes.Buffer
		if code := cli.Execute(New(), args, &stdout, &stderr); code != cli.ExitUsage {
			t.Errorf("%v: exit %d, want %d\n%s", args, code, cli.ExitUsage, stderr.String())
		}
	}
}

func TestBrokenExpectationExitsOne(t *testing.T) {
	suitetest.BrokenExpectations(t, New(), suitetest.Shared(t, "--requests", "300", "--concurrency", "30", "--modes", "sync")...)
}

// TestRedisBackendVerifies runs the async modes on Redis streams (a managed redis-server): the
// claims travel as JSON (the default codec) and settle exactly once.
func TestRedisBackendVerifies(t *testing.T) {
	suitetest.OnRedis(t, New(), 600, 600, "--hot-keys", "3")
}

// The checks every counter suite passes (suitetest.CounterConformance): lost COMMIT replies
// looked up, batches delivered again applied once, slotted rows exact, every mode over 1 ms.
func TestCounterConformance(t *testing.T) {
	suitetest.CounterConformance(t, New())
}

package counters_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/counters"
	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

// declared is a counter suite of two parts per request over three kinds — a count, an amount
// with an opening (a wallet), the newest time and its IP — claimed in a table of its own, row by
// row or, pipelined, in one INSERT (ClaimAll).
func declared(pipelined bool) *counters.Suite {
	var claimAll func([]counters.Source) []counters.Statement
	if pipelined {
		claimAll = func(batch []counters.Source) []counters.Statement {
			requests, parts := make([]int64, len(batch)), make([]int32, len(batch))
			for k, src := range batch {
				requests[k], parts[k] = src.Request, int32(src.Part)
			}
			return []counters.Statement{{SQL: `INSERT INTO claims SELECT * FROM unnest($1::int8[], $2::int4[])`,
				Args: []any{requests, parts}, Rows: int64(len(batch))}}
		}
	}
	at := func(i int64) time.Time { return time.Date(2026, 1, 1, 0, 0, 0, int(i)*1000, time.UTC) }
	return counters.New(counters.Declaration{
		Info: testkit.Info{Name: "declared", Summary: "a declared counter suite", Example: "declared",
			SQL: fstest.MapFS{"claims.sql": {Data: []byte(`CREATE TABLE IF NOT EXISTS claims (request bigint, part int, PRIMARY KEY (request, part));`)}}},
		SeedSQL: []string{
			`INSERT INTO wallets (user_id, balance) SELECT 'u' || h, 10 FROM generate_series(0, $1 - 1) h`,
			`INSERT INTO management_tokens (id) SELECT 't' || h FROM generate_series(0, $1 - 1) h`,
		},
		Request: func(i int64, h int) [][]counters.Delta {
			set := strconv.Itoa(h)
			return [][]counters.Delta{
				{{Key: counters.Key{Kind: counters.WalletDebit, Target: "u" + set}, Cost: counters.Money(i + 1)}},
				{{Key: counters.Key{Kind: counters.ManagementToken, Target: "t" + set}, Requests: 1, LastUsedAt: at(i), LastIP: fmt.Sprint("ip", i)}},
			}
		},
		Claim: func(ctx context.Context, tx pgx.Tx, batch []counters.Source) ([]counters.Source, int, error) {
			var fresh []counters.Source
			for _, src := range batch {
				tag, err := tx.Exec(ctx, `INSERT INTO claims VALUES ($1, $2) ON CONFLICT DO NOTHING`, src.Request, src.Part)
				if err != nil {
					return nil, len(batch), err
				}
				if tag.RowsAffected() == 1 {
					fresh = append(fresh, src)
				}
			}
			return fresh, len(batch), nil
		},
		ClaimAll:   claimAll,
		ClaimTable: "claims", ClaimIndex: "request",
		Opening: map[counters.Kind]counters.Delta{counters.WalletDebit: {Cost: -10 * counters.Unit}},
	})
}

// applied is a testkit.Result: requests 0..n-1, of which those in skip did not apply.
type applied struct {
	n    int64
	skip map[int64]bool
}

func (a applied) Len() int64           { return a.n }
func (a applied) Applied(i int64) bool { return !a.skip[i] }

// TestVerifyIsExactAndCatchesEveryColumn writes requests through the suite's writer, twice
// (the second time nothing changes), and checks that Verify passes, then that it fails once
// any one column, slot or claim is off, and when a request it expects was never written.
func TestVerifyIsExactAndCatchesEveryColumn(t *testing.T) {
	ctx := context.Background()
	s := declared(false)
	if s.Info().Defaults["queue-capacity"] != strconv.Itoa(2*testkit.DefaultQueueCapacity) {
		t.Errorf("two records per request: --queue-capacity default %v", s.Info().Defaults)
	}
	const n, hot = 40, 3
	r := suitetest.Seeded(t, s, hot, n)
	for range 2 {
		if err := pgx.BeginFunc(ctx, r.Admin(), func(tx pgx.Tx) error {
			var batch []counters.Record
			for i := range int64(n) {
				batch = append(batch, s.Records(r, nil, i)...)
			}
			_, err := s.Writer(r, true).WriteBatch(ctx, tx, batch)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	failed := func(res testkit.Result) []string {
		t.Helper()
		checks, err := s.Verify(ctx, r, res)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, c := range checks {
			if !c.OK {
				names = append(names, fmt.Sprintf("%s: expected %v, got %v", c.Name, c.Expected, c.Actual))
			}
		}
		return names
	}
	all := applied{n: n}
	if f := failed(all); len(f) != 0 {
		t.Fatalf("checks failed on exact rows: %v", f)
	}
	if counts, err := s.Persisted(ctx, r, n); err != nil || counts[0] != 1 || counts[n-1] != 1 {
		t.Errorf("persisted %v (%v)", counts, err)
	}
	if f := failed(applied{n: n + 1}); len(f) == 0 {
		t.Error("a request that was never written passed as applied")
	}
	for _, tamper := range []string{
		`UPDATE wallets SET balance = balance + 0.00000001 WHERE user_id = 'u1'`,
		`UPDATE management_tokens SET usage_count = usage_count + 1 WHERE id = 't2'`,
		`UPDATE management_tokens SET last_used_at = last_used_at - interval '1 hour' WHERE id = 't0'`,
		`UPDATE management_tokens SET last_used_ip = 'elsewhere' WHERE id = 't0'`,
		`INSERT INTO wallets (user_id, slot) VALUES ('u1', 7)`,
		`DELETE FROM claims WHERE request = 5`,
	} {
		t.Run(tamper, func(t *testing.T) {
			tx, err := r.Admin().Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx)
			if _, err := tx.Exec(ctx, tamper); err != nil {
				t.Fatal(err)
			}
			// Verify reads on the admin connection, inside the transaction that tampered.
			if f := failed(all); len(f) == 0 {
				t.Errorf("Verify passed with %s", tamper)
			}
		})
	}
}

// TestPipelinedClaimFallsBackOnARepeat writes a compacted batch with a pipelined claim
// (Declaration.ClaimAll): a fresh batch in one round trip, its claim and UPDATEs together; a
// replayed one, and one that repeats a request, fail that claim, roll back to its savepoint and
// go through Claim, and every request is applied exactly once.
func TestPipelinedClaimFallsBackOnARepeat(t *testing.T) {
	ctx := context.Background()
	s := declared(true)
	const n, hot = 40, 3
	r := suitetest.Seeded(t, s, hot, n)
	write := func(ids ...int64) int {
		t.Helper()
		var ops int
		if err := pgx.BeginFunc(ctx, r.Admin(), func(tx pgx.Tx) error {
			var batch []counters.Record
			for _, i := range ids {
				batch = append(batch, s.Records(r, nil, i)...)
			}
			var err error
			ops, err = s.Writer(r, true).WriteBatch(ctx, tx, batch)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return ops
	}
	var first []int64
	for i := range int64(n / 2) {
		first = append(first, i)
	}
	// One claim and one UPDATE per kind (wallets, management tokens).
	if ops := write(first...); ops != 3 {
		t.Errorf("a fresh batch sent %d statements, want 3 (claim, two UPDATEs)", ops)
	}
	if ops := write(first...); ops <= 3 {
		t.Errorf("a replayed batch sent %d statements: it did not fall back to Claim", ops)
	}
	var rest []int64
	for i := int64(n / 2); i < n; i++ {
		rest = append(rest, i, i) // every request twice in the batch
	}
	write(rest...)
	checks, err := s.Verify(ctx, r, applied{n: n})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		if !c.OK {
			t.Errorf("%s: expected %v, got %v", c.Name, c.Expected, c.Actual)
		}
	}
}

package counters

import (
	"context"
	"errors"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/testdb"
)

func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }

func TestMoney(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
	}{{"0.001", "0.00100000"}, {"12", "12.00000000"}, {"-0.5", "-0.50000000"}, {"0.00000001", "0.00000001"}} {
		m, err := ParseMoney(c.in)
		if err != nil {
			t.Fatalf("ParseMoney(%q): %v", c.in, err)
		}
		if m.String() != c.want {
			t.Errorf("ParseMoney(%q).String() = %s, want %s", c.in, m, c.want)
		}
	}
	if _, err := ParseMoney("0.000000001"); err == nil {
		t.Error("9 decimals accepted")
	}
	var sum Money
	for i := 0; i < 60000; i++ {
		sum += 100000 // 0.001
	}
	if sum.String() != "60.00000000" {
		t.Errorf("60000 × 0.001 = %s", sum)
	}
}

func TestMergeRules(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	k := Key{Kind: ManagementToken, Target: "tok"}
	d := Delta{Key: k, Requests: 1, LastUsedAt: t0.Add(2 * time.Second), LastIP: "10.0.0.2"}
	d.Merge(Delta{Key: k, Requests: 1, LastUsedAt: t0.Add(time.Second), LastIP: "10.0.0.1"}) // older: IP kept
	d.Merge(Delta{Key: k, Requests: 1, Cost: 5, DNSFailures: 2})
	if d.Requests != 3 || d.Cost != 5 || d.DNSFailures != 2 {
		t.Errorf("sums wrong: %+v", d)
	}
	if !d.LastUsedAt.Equal(t0.Add(2*time.Second)) || d.LastIP != "10.0.0.2" {
		t.Errorf("latest wins broken: %v %s", d.LastUsedAt, d.LastIP)
	}
	d.Merge(Delta{Key: k, LastUsedAt: t0.Add(2 * time.Second), LastIP: "10.0.0.9"}) // tie: newer wins
	if d.LastIP != "10.0.0.9" {
		t.Errorf("tie: IP %s, want the newer 10.0.0.9", d.LastIP)
	}
}

func TestCompactSortsAndMerges(t *testing.T) {
	in := []Delta{
		{Key: Key{Kind: ProviderMonthly, Target: "p"}, Cost: 1},
		{Key: Key{Kind: APIKeyUsage, Target: "b"}, Requests: 1},
		{Key: Key{Kind: APIKeyUsage, Target: "a"}, Requests: 1},
		{Key: Key{Kind: APIKeyUsage, Target: "b"}, Requests: 2},
	}
	out := Compact(in)
	if len(out) != 3 || out[0].Target != "a" || out[1].Target != "b" || out[1].Requests != 3 || out[2].Kind != ProviderMonthly {
		t.Errorf("Compact = %+v", out)
	}
}

func seed(t *testing.T, conn *pgx.Conn) {
	t.Helper()
	_, err := conn.Exec(context.Background(), `
		INSERT INTO api_keys (id, user_id) VALUES ('k1', 'u'), ('k2', 'u');
		INSERT INTO providers (id, name) VALUES ('p', 'p');
		INSERT INTO management_tokens (id) VALUES ('tok');`)
	if err != nil {
		t.Fatal(err)
	}
}

func deltasFor(n int) []Delta {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var ds []Delta
	for i := 0; i < n; i++ {
		k := "k1"
		if i%3 == 0 {
			k = "k2"
		}
		ds = append(ds,
			Delta{Key: Key{Kind: APIKeyUsage, Target: k}, Requests: 1, Tokens: 30, Cost: 100000, LastUsedAt: t0.Add(time.Duration(i) * time.Second)},
			Delta{Key: Key{Kind: ProviderMonthly, Target: "p"}, Cost: 100000},
			Delta{Key: Key{Kind: ManagementToken, Target: "tok"}, Requests: 1, LastUsedAt: t0.Add(time.Duration(i) * time.Second), LastIP: "10.0.0." + string(rune('0'+i%10))},
		)
	}
	return ds
}

type totals struct {
	k1Req, k2Req, k1Tok int64
	k1Cost, pCost, ip   string
	tokUsage            int64
	tokLast             time.Time
}

func readTotals(t *testing.T, conn *pgx.Conn) totals {
	t.Helper()
	var r totals
	err := conn.QueryRow(context.Background(), `
		SELECT (SELECT total_requests FROM api_keys WHERE id='k1'), (SELECT total_requests FROM api_keys WHERE id='k2'),
		       (SELECT total_tokens FROM api_keys WHERE id='k1'), (SELECT total_cost::text FROM api_keys WHERE id='k1'),
		       (SELECT monthly_used::text FROM providers WHERE id='p'), (SELECT last_used_ip FROM management_tokens),
		       (SELECT usage_count FROM management_tokens), (SELECT last_used_at FROM management_tokens)`).
		Scan(&r.k1Req, &r.k2Req, &r.k1Tok, &r.k1Cost, &r.pCost, &r.ip, &r.tokUsage, &r.tokLast)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Apply (compacted) and ApplyEach (one UPDATE per delta) must leave identical rows, and the
// outbox path must too.
func TestApplyApplyEachAndOutboxAgree(t *testing.T) {
	ctx := context.Background()
	const n = 30
	ds := deltasFor(n)
	var got []totals
	for _, path := range []string{"apply", "each", "outbox"} {
		target := testdb.New(t)
		conn := target.Admin()
		seed(t, conn)
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var ops int
		switch path {
		case "apply":
			ops, err = Apply(ctx, tx, ds)
			if err == nil && ops != 3 {
				t.Errorf("Apply sent %d statements, want 3 (one per kind)", ops)
			}
		case "each":
			ops, err = ApplyEach(ctx, tx, ds)
			if err == nil && ops != len(ds) {
				t.Errorf("ApplyEach sent %d statements, want %d", ops, len(ds))
			}
		case "outbox":
			for i := 0; i < n; i++ {
				if err = InsertOutbox(ctx, tx, "r"+string(rune('a'+i)), ds[i*3:i*3+3]); err != nil {
					break
				}
			}
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if path == "outbox" {
			connect := func(ctx context.Context) (*pgx.Conn, error) { return target.Connect(ctx, "hotspotkit-flush") }
			o := NewOutbox(connect, 7, 5*time.Millisecond)
			o.Pause() // a paused outbox claims nothing until Resume
			paused, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
			if n, err := o.FlushOnce(paused); n != 0 || !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("paused FlushOnce: claimed %d, %v; want 0 and the deadline", n, err)
			}
			cancel()
			if st := o.Stats(); st.RowsClaimed != 0 {
				t.Errorf("paused outbox claimed %d", st.RowsClaimed)
			}
			o.Resume()
			o.Start(ctx)
			if err := o.Drain(ctx); err != nil {
				t.Fatal(err)
			}
			o.Stop()
			st := o.Stats()
			if st.RowsClaimed != int64(len(ds)) {
				t.Errorf("outbox claimed %d, want %d", st.RowsClaimed, len(ds))
			}
			var pending int64
			if err := conn.QueryRow(ctx, OutboxPendingSQL).Scan(&pending); err != nil || pending != 0 {
				t.Errorf("pending after drain = %d (%v)", pending, err)
			}
			o.Close(ctx)
		}
		got = append(got, readTotals(t, conn))
	}
	want := totals{k1Req: 20, k2Req: 10, k1Tok: 600, k1Cost: "0.02000000", pCost: "0.03000000", ip: "10.0.0.9", tokUsage: n,
		tokLast: time.Date(2026, 1, 1, 0, 0, n-1, 0, time.UTC)}
	for i, g := range got {
		if g.k1Req != want.k1Req || g.k2Req != want.k2Req || g.k1Tok != want.k1Tok || g.k1Cost != want.k1Cost ||
			g.pCost != want.pCost || g.ip != want.ip || g.tokUsage != want.tokUsage || !g.tokLast.Equal(want.tokLast) {
			t.Errorf("path %d: got %+v, want %+v", i, g, want)
		}
	}
}

func TestApplyRejectsMissingRow(t *testing.T) {
	ctx := context.Background()
	target := testdb.New(t)
	tx, err := target.Admin().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := Apply(ctx, tx, []Delta{{Key: Key{Kind: APIKeyUsage, Target: "missing"}, Requests: 1}}); err == nil {
		t.Fatal("a delta for a row that does not exist was applied silently")
	}
}

// Every kind's UPDATE must find its row by that table's key (wallets are keyed by user_id),
// through both write paths.
func TestEveryKindReachesItsRow(t *testing.T) {
	ctx := context.Background()
	conn := testdb.New(t).Admin()
	if _, err := conn.Exec(ctx, `
		INSERT INTO api_keys (id, user_id) VALUES ('x', 'x');
		INSERT INTO provider_api_keys (id, provider_id) VALUES ('x', 'x');
		INSERT INTO global_models (id, name) VALUES ('x', 'x');
		INSERT INTO providers (id, name) VALUES ('x', 'x');
		INSERT INTO wallets (user_id) VALUES ('x');
		INSERT INTO proxy_nodes (id) VALUES ('x');
		INSERT INTO management_tokens (id) VALUES ('x');`); err != nil {
		t.Fatal(err)
	}
	paths := map[string]func(context.Context, pgx.Tx, []Delta) (int, error){"Apply": Apply, "ApplyEach": ApplyEach}
	for _, k := range Kinds() {
		for name, apply := range paths {
			tx, err := conn.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := apply(ctx, tx, []Delta{{Key: Key{Kind: k, Target: "x"}, Requests: 1, Cost: 1}}); err != nil {
				t.Errorf("%s of a %s delta: %v", name, k, err)
			}
			_ = tx.Rollback(ctx)
		}
	}
}

func TestSlotsPickAndWorker(t *testing.T) {
	hash := Slots{N: 4}
	seen := map[int]int{}
	for i := range 400 {
		id := "req-" + strconv.Itoa(i)
		s := hash.Of(int64(i), id)
		if s < 1 || s > 4 || hash.Of(int64(i), id) != s {
			t.Fatalf("Pick(%s) = %d, again %d: want one slot of 1..4, the same every time", id, s, hash.Of(int64(i), id))
		}
		seen[s]++
	}
	for s := 1; s <= 4; s++ {
		if seen[s] < 50 {
			t.Errorf("slot %d got %d of 400 requests: the hash does not spread (%v)", s, seen[s], seen)
		}
	}
	if (Slots{N: 1}).Of(1, "req-1") != 0 || (Slots{N: 1}).Worker() != nil {
		t.Error("one slot must stay unslotted (slot 0, the queue's own routing)")
	}
	rr := Slots{N: 4, Pick: testkit.SlotPickRoundRobin}
	for i := range int64(8) {
		if got := rr.Of(i, "req-"+strconv.FormatInt(i, 10)); got != 1+int(i%4) {
			t.Errorf("round-robin: request %d got slot %d, want %d", i, got, 1+i%4)
		}
	}
	session := Slots{N: 4, Pick: testkit.SlotPickSession}
	for i := range int64(8) {
		if got := session.Of(i, "req-"+strconv.FormatInt(i, 10)); got != 1+int(i%4) {
			t.Errorf("session, outside a transaction (the queue modes): request %d got slot %d, want %d (round-robin)", i, got, 1+i%4)
		}
	}
	worker := hash.Worker()
	workers := map[int]bool{}
	for s := 1; s <= 4; s++ {
		workers[worker(Key{Kind: APIKeyUsage, Target: "key-hot-0", Slot: s}, 4)] = true
	}
	if len(workers) != 4 {
		t.Errorf("4 slots of one row on 4 workers went to %d workers, want 4", len(workers))
	}
}

// TestSessionPickFollowsTheSeat: with --slot-pick session a write in a transaction takes the
// slot of its connection's seat in the load pool (seat mod N, plus 1), whatever slot the
// request would have had; the other picks keep the request's slot.
func TestSessionPickFollowsTheSeat(t *testing.T) {
	target := testdb.New(t)
	ctx := context.Background()
	pool, err := target.NewPool(ctx, database.PoolOptions{MaxConns: 3, AppName: "hotspotkit-load"})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var got2, got3, gotHash []int
	for range 3 {
		c, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Release()
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(ctx) }()
		got2 = append(got2, Slots{N: 2, Pick: testkit.SlotPickSession}.InTx(tx, 7))
		got3 = append(got3, Slots{N: 3, Pick: testkit.SlotPickSession}.InTx(tx, 7))
		gotHash = append(gotHash, Slots{N: 3}.InTx(tx, 2))
	}
	if s := slices.Sorted(slices.Values(got3)); !slices.Equal(s, []int{1, 2, 3}) {
		t.Errorf("3 sessions over 3 slots wrote slots %v, want 1, 2, 3 once each", got3)
	}
	if s := slices.Sorted(slices.Values(got2)); !slices.Equal(s, []int{1, 1, 2}) {
		t.Errorf("3 sessions over 2 slots wrote slots %v, want 1, 1, 2", got2)
	}
	if !slices.Equal(gotHash, []int{2, 2, 2}) {
		t.Errorf("hash pick in a transaction: %v, want the request's slot 2 each time", gotHash)
	}
	if got := (Slots{N: 1, Pick: testkit.SlotPickSession}).InTx(nil, 0); got != 0 {
		t.Errorf("unslotted: slot %d, want 0", got)
	}
}

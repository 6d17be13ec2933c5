package monitor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit/database"
)

func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }

// holdHotRow makes one session hold a row lock on api_keys while n others queue behind it.
func holdHotRow(t *testing.T, target *database.Postgres, n int) (release func()) {
	return holdSlot(t, target, 0, n)
}

// holdSlot is holdHotRow on one slot of the hot row (its own physical row).
func holdSlot(t *testing.T, target *database.Postgres, slot, n int) (release func()) {
	t.Helper()
	ctx := context.Background()
	if _, err := target.Admin().Exec(ctx, `INSERT INTO api_keys (id, slot, user_id) VALUES ('hot', $1, 'u')`, slot); err != nil {
		t.Fatal(err)
	}
	pool, err := target.NewPool(ctx, database.PoolOptions{MaxConns: int32(n + 1), AppName: "hotspotkit-load"})
	if err != nil {
		t.Fatal(err)
	}
	holder, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := holder.Exec(ctx, `UPDATE api_keys SET total_requests = total_requests + 1 WHERE id = 'hot' AND slot = $1`, slot); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tx, err := pool.Begin(ctx)
			if err != nil {
				t.Error(err)
				return
			}
			defer tx.Rollback(ctx)
			// A write to another table first makes RowExclusiveLock ambiguous, as in a real
			// request transaction; attribution must still name api_keys.
			if _, err := tx.Exec(ctx, `INSERT INTO users (id, name) VALUES (gen_random_uuid()::text, 'x')`); err != nil {
				t.Error(err)
				return
			}
			if _, err := tx.Exec(ctx, `UPDATE api_keys SET total_requests = total_requests + 1 WHERE id = 'hot' AND slot = $1`, slot); err != nil {
				t.Error(err)
				return
			}
			_ = tx.Commit(ctx)
		}()
	}
	return func() {
		_ = holder.Commit(ctx)
		wg.Wait()
		pool.Close()
	}
}

func TestWaitersAreAttributedToTheHotTable(t *testing.T) {
	target := testdb.New(t)
	const waiters = 5
	release := holdHotRow(t, target, waiters)
	samplesPath := filepath.Join(t.TempDir(), "s.ndjson")
	sw, err := CreateSamples(samplesPath, "s")
	if err != nil {
		t.Fatal(err)
	}
	m, err := Start(context.Background(), connectFor(target), Config{
		Interval:  20 * time.Millisecond,
		HotTables: []string{"api_keys", "providers"},
		Samples:   sw,
		Label:     results.Sample{Mode: "sync"},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Wait until a sample saw every waiter queued on the hot row, and a blocker sample (every
	// SlowInterval) saw them blocked.
	waitForSamples(t, m, "every waiter seen queued and blocked", func(l results.LockMonitor) bool {
		return l.MaxWaitersByRelation["api_keys"] >= waiters && l.MaxBlockedSessions >= waiters
	})
	// Of the six sessions of the service, the holder waits on its client (idle in its
	// transaction) and the five queued wait on the server.
	if last := m.Last(); last.ServerSessions != waiters+1 || last.SessionsOnClient != 1 {
		t.Errorf("latest sample: %d sessions, %d of them on the client; want %d and 1", last.ServerSessions, last.SessionsOnClient, waiters+1)
	}
	if g := m.MaxGoroutines(); g < waiters {
		t.Errorf("most goroutines %d, fewer than the %d waiting", g, waiters)
	}
	locks, pool := m.Stop(context.Background())
	release()
	if pool.SessionSamples < int64(waiters+1) || pool.ClientWaitSamples < 1 || pool.ClientWaitSamples*2 > pool.SessionSamples {
		t.Errorf("sessions summed over the samples %d, on the client %d", pool.SessionSamples, pool.ClientWaitSamples)
	}
	if err := sw.Close(); err != nil {
		t.Fatal(err)
	}

	if locks.MaxWaitersByRelation["api_keys"] != waiters {
		t.Errorf("max waiters on api_keys = %d, want %d (all: %v)", locks.MaxWaitersByRelation["api_keys"], waiters, locks.MaxWaitersByRelation)
	}
	if locks.MaxWaitersByRelation[Unattributed] != 0 {
		t.Errorf("unattributed waiters: %v", locks.MaxWaitersByRelation)
	}
	if _, ok := locks.MaxWaitersByRelation["providers"]; !ok {
		t.Errorf("hot table providers missing from the summary")
	}
	if locks.MaxWaitersByLockType["transactionid"] != 1 || locks.MaxWaitersByLockType["tuple"] != waiters-1 {
		t.Errorf("lock types = %v, want 1 transactionid (head waiter) and %d tuple", locks.MaxWaitersByLockType, waiters-1)
	}
	if locks.MaxBlockedSessions < waiters || locks.MaxBlockers < 1 {
		t.Errorf("blocked=%d blockers=%d, want ≥%d and ≥1", locks.MaxBlockedSessions, locks.MaxBlockers, waiters)
	}
	if locks.MaxLockWaitMs <= 0 {
		t.Errorf("max lock wait %v ms, want > 0", locks.MaxLockWaitMs)
	}
	if got := locks.MaxLockWaitMsByRelation; len(got) != 1 || got["api_keys"] != locks.MaxLockWaitMs {
		t.Errorf("longest wait by table %v, want api_keys alone at %v ms", got, locks.MaxLockWaitMs)
	}
	// The holder is idle in its transaction; the head waiter waits on its transactionid and
	// the others queue on the tuple lock.
	waits := m.WaitEvents()
	for _, event := range []string{"Client:ClientRead", "Lock:transactionid", "Lock:tuple"} {
		if waits[event] == 0 {
			t.Errorf("wait events %v: no %s", waits, event)
		}
	}
	if m.Statements() < locks.Samples {
		t.Errorf("monitor counted %d statements for %d samples", m.Statements(), locks.Samples)
	}
	samples, err := results.ReadSamples(samplesPath) // the header first, then the samples
	if err != nil || len(samples) == 0 {
		t.Fatalf("samples file: %d samples, %v", len(samples), err)
	}
	busy := false
	for _, smp := range samples {
		if smp.ClientCPUShare < 0 || smp.ClientCPUShare > 1 {
			t.Errorf("a sample's client share %v", smp.ClientCPUShare)
		}
		busy = busy || smp.ClientCPUShare > 0
	}
	if !busy {
		t.Error("no sample has the client's processor time")
	}
	if b, _ := os.ReadFile(samplesPath); !strings.HasPrefix(string(b), `{"schema_version":`) || !strings.Contains(string(b), `"wait_events":{`) {
		t.Errorf("samples file has no header or carries no wait events:\n%.300s", b)
	}
}

func TestNoWaitersWhenNothingContends(t *testing.T) {
	target := testdb.New(t)
	m, err := Start(context.Background(), connectFor(target), Config{Interval: 10 * time.Millisecond, HotTables: []string{"api_keys"}})
	if err != nil {
		t.Fatal(err)
	}
	waitForSamples(t, m, "two samples", func(l results.LockMonitor) bool { return l.Samples >= 2 })
	locks, _ := m.Stop(context.Background())
	if locks.Samples < 2 || locks.MaxLockWaiters != 0 || locks.MaxWaitersByRelation["api_keys"] != 0 {
		t.Errorf("got %+v", locks)
	}
}

func connectFor(target *database.Postgres) Connect { return connectAs(target, "monitor-test") }

// connectAs is connectFor with sessions named app (application_name).
func connectAs(target *database.Postgres, app string) Connect {
	return func(ctx context.Context) (*pgx.Conn, error) { return target.Connect(ctx, app) }
}

// TestMonitorReconnects: a sample after the monitor's session was terminated reconnects.
// Its sessions carry a name of their own: a session of an earlier test's monitor, closed but
// not yet gone from pg_stat_activity, would otherwise be counted (and terminated) with it.
func TestMonitorReconnects(t *testing.T) {
	target := testdb.New(t)
	m, err := Start(context.Background(), connectAs(target, "monitor-reconnects-test"), Config{Interval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	waitForSamples(t, m, "a first sample", func(l results.LockMonitor) bool { return l.Samples >= 1 })
	var terminated int
	if err := target.Admin().QueryRow(context.Background(),
		`SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'monitor-reconnects-test'`).Scan(&terminated); err != nil || terminated != 1 {
		t.Fatalf("terminated %d monitor sessions (%v), want 1", terminated, err)
	}
	// A sample in flight at the termination may still count; the one after it can only
	// succeed on a new connection.
	var before int64
	waitForSamples(t, m, "the count", func(l results.LockMonitor) bool { before = l.Samples; return true })
	waitForSamples(t, m, "a successful sample after the termination", func(l results.LockMonitor) bool {
		return l.Samples >= before+2
	})
	m.Stop(context.Background())
}

// waitForSamples polls the monitor's running summary (cond runs under its lock: the maps are
// live) until cond holds; after 10 s it stops the monitor and fails the test.
func waitForSamples(t *testing.T, m *Monitor, what string, cond func(results.LockMonitor) bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		m.mu.Lock()
		ok := cond(m.locks)
		m.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			locks, _ := m.Stop(context.Background())
			t.Fatalf("after 10s, still waiting for %s (%+v)", what, locks)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestIdleReserve(t *testing.T) {
	for _, c := range []struct{ max, want int32 }{{4, 2}, {20, 2}, {64, 7}, {200, 10}} {
		if got := IdleReserve(c.max); got != c.want {
			t.Errorf("IdleReserve(%d) = %d, want %d", c.max, got, c.want)
		}
	}
}

// Waiters spread over the slots of a hot row: the table counts them all, the per-row maximum
// only those queued for one physical row; and the total's read is timed at every sample.
func TestWaitersPerPhysicalRow(t *testing.T) {
	target := testdb.New(t)
	releaseA := holdSlot(t, target, 1, 3)
	releaseB := holdSlot(t, target, 2, 2)
	m, err := Start(context.Background(), connectFor(target), Config{
		Interval:  20 * time.Millisecond,
		HotTables: []string{"api_keys"},
		TotalSQL:  `SELECT total_requests FROM api_keys_totals WHERE id = 'hot'`,
	})
	if err != nil {
		t.Fatal(err)
	}
	waitForSamples(t, m, "every waiter seen queued", func(l results.LockMonitor) bool {
		return l.MaxWaitersByRelation["api_keys"] >= 5
	})
	locks, _ := m.Stop(context.Background())
	releaseA()
	releaseB()
	if got := locks.MaxWaitersByRelation["api_keys"]; got != 5 {
		t.Errorf("waiters on api_keys = %d, want 5 (3 + 2 on two slots)", got)
	}
	if got := locks.MaxWaitersPerRowByRelation["api_keys"]; got != 3 {
		t.Errorf("most waiters on one row of api_keys = %d, want 3 (all: %v)", got, locks.MaxWaitersPerRowByRelation)
	}
	if r := locks.TotalReadMs; r == nil || r.Count == 0 || r.P99 <= 0 {
		t.Errorf("the total's read was not timed: %+v", r)
	}
}

package auxcounter

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit/counters"
	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }

func TestAllModesVerifyAndSyncShowsHotRowWaiters(t *testing.T) {
	suitetest.HotSpotContract(t, New(), 1000, 3, 300, "proxy_nodes")
}

// row is what one hot index holds.
type row struct {
	total, failed, dns, stream, tokenUses int64
	tokenAt, keyAt                        time.Time
	ip                                    string
}

func readRow(t *testing.T, conn sqldb.Conn, h int) row {
	t.Helper()
	var w row
	if err := conn.QueryRow(context.Background(), `
		SELECT p.total_requests, p.failed_requests, p.dns_failures, p.stream_errors, m.usage_count,
		       coalesce(m.last_used_at, 'epoch'), coalesce(k.last_used_at, 'epoch'), coalesce(m.last_used_ip, '')
		FROM proxy_nodes p, management_tokens m, api_keys k WHERE p.id = $1 AND m.id = $2 AND k.id = $3`,
		"proxy-hot-"+strconv.Itoa(h), "token-hot-"+strconv.Itoa(h), "key-hot-"+strconv.Itoa(h)).Scan(&w.total, &w.failed, &w.dns, &w.stream, &w.tokenUses, &w.tokenAt, &w.keyAt, &w.ip); err != nil {
		t.Fatal(err)
	}
	w.tokenAt, w.keyAt = w.tokenAt.UTC(), w.keyAt.UTC()
	return w
}

// wantRow is what requests add to hot index h's rows.
func wantRow(requests []int64) row {
	w := row{tokenAt: time.Unix(0, 0).UTC(), keyAt: time.Unix(0, 0).UTC()}
	newest := int64(-1)
	for _, i := range requests {
		w.total++
		w.tokenUses++
		w.failed += one(i, 10)
		w.dns += one(i, 25)
		w.stream += one(i, 40)
		newest = max(newest, i)
	}
	if newest >= 0 {
		w.tokenAt, w.keyAt, w.ip = usedAt(newest), usedAt(newest), clientIP(newest)
	}
	return w
}

// A batch written again — retried after a COMMIT whose outcome was unknown but had committed,
// re-sent record by record by the queue's fallback, or overlapping a later batch — applies
// each source record once, compacted or not.
func TestGuardAppliesEachRecordOnce(t *testing.T) {
	ctx := context.Background()
	const hot = 2
	for _, compact := range []bool{false, true} {
		t.Run(map[bool]string{false: "async", true: "async-compact"}[compact], func(t *testing.T) {
			s := New()
			r := suitetest.Seeded(t, s, hot, 0)
			records := func(from, to int64) []counters.Record {
				var recs []counters.Record
				for i := from; i < to; i++ {
					recs = append(recs, s.Records(r, nil, i)...)
				}
				if compact {
					recs = queue.Compact(recs, func(rec counters.Record) counters.Key { return rec.Key }, (*counters.Record).Merge, counters.CompareKeys)
				}
				return recs
			}
			write := func(batch []counters.Record) {
				t.Helper()
				if err := sqldb.BeginFunc(ctx, r.Admin(), func(tx sqldb.Tx) error {
					_, err := s.Writer(r, compact).WriteBatch(ctx, tx, batch)
					return err
				}); err != nil {
					t.Fatal(err)
				}
			}
			write(records(0, 100))
			write(records(0, 100)) // the retried batch
			for i := int64(0); i < 100; i += 7 {
				write(records(i, i+1)) // the fallback, record by record
			}
			write(records(50, 160)) // overlaps: only 100..159 are new
			for h := range hot {
				var mine []int64
				for i := int64(0); i < 160; i++ {
					if int(i%hot) == h {
						mine = append(mine, i)
					}
				}
				if got, want := readRow(t, r.Admin(), h), wantRow(mine); got != want {
					t.Errorf("hot %d: got %+v, want %+v", h, got, want)
				}
			}
			var guards int64
			if err := r.Admin().QueryRow(ctx, `SELECT count(*) FROM aux_applied_records`).Scan(&guards); err != nil || guards != 3*160 {
				t.Errorf("%d guard rows, want %d (%v)", guards, 3*160, err)
			}
		})
	}
}

func TestHotKeysSpreadTheLoad(t *testing.T) {
	suitetest.HotKeysSpread(t, New(), "sync,outbox,async,async-compact", "hot row sets whose every counter is exact")
}

// Zipfian hot keys (θ = 0.99 over 100 sets): every mode verifies, and the hottest set took the
// distribution's share of the writes.
func TestSkewedHotKeys(t *testing.T) {
	suitetest.HotKeysSkewed(t, New())
}

func TestBrokenExpectationExitsOne(t *testing.T) {
	suitetest.BrokenExpectations(t, New(), suitetest.Shared(t, "--requests", "300", "--concurrency", "30", "--modes", "async-compact")...)
}

// TestRedisBackendVerifies runs the async modes on Redis streams (a managed redis-server): the
// records travel as JSON (the default codec), three per request.
func TestRedisBackendVerifies(t *testing.T) {
	suitetest.OnRedis(t, New(), 600, 3*600, "--hot-keys", "3")
}

// The checks every counter suite passes (suitetest.CounterConformance): lost COMMIT replies
// looked up, batches delivered again applied once, slotted rows exact, every mode over 1 ms.
func TestCounterConformance(t *testing.T) {
	suitetest.CounterConformance(t, New())
}

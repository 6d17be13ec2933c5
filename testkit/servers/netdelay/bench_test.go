package netdelay

import (
	"context"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/redistest"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/timing"
)

// benchRTTs are the round trips the round-trip benchmark sets; -1 is no proxy at all.
var benchRTTs = []time.Duration{-1, 0, 200 * time.Microsecond, time.Millisecond}

func rttName(rtt time.Duration) string {
	if rtt < 0 {
		return "direct"
	}
	return "rtt=" + rtt.String()
}

// BenchmarkRoundTrip times one SELECT 1 (PostgreSQL) or PING (Redis) at a time on one
// connection, direct and through a proxy of each round trip, and reports the round trip's
// p50 and p99, what the proxy says it held (hold_p50_µs: Up plus Down) and how late after
// their due time it delivered the client's bytes (late_up_*). An iteration is one round
// trip. The proxy's bar: 1ms → p50 1.0–1.25 ms; 200µs → 0.2–0.3 ms; 0 → within 0.1 ms of
// direct.
func BenchmarkRoundTrip(b *testing.B) {
	ctx := context.Background()
	b.Run("postgres", func(b *testing.B) {
		for _, rtt := range benchRTTs {
			b.Run(rttName(rtt), func(b *testing.B) {
				p := benchProxy(b, pgUpstream(b), rtt)
				conn, err := pgPool(b, p, 1).Acquire(ctx)
				if err != nil {
					b.Fatal(err)
				}
				defer conn.Release()
				roundTrips(b, p, func() error { _, err := conn.Exec(ctx, "SELECT 1"); return err })
			})
		}
	})
	b.Run("redis", func(b *testing.B) {
		srv := redistest.Shared(b)
		for _, rtt := range benchRTTs {
			b.Run(rttName(rtt), func(b *testing.B) {
				p := benchProxy(b, srv.Addr(), rtt)
				rdb := redisClient(b, srv, p)
				roundTrips(b, p, func() error { return rdb.Ping(ctx).Err() })
			})
		}
	})
}

// benchProxy is a proxy of rtt to upstream, or nil for rtt < 0 (direct).
func benchProxy(b *testing.B, upstream string, rtt time.Duration) *Proxy {
	if rtt < 0 {
		return nil
	}
	return startProxy(b, Config{Upstream: upstream, RTT: rtt})
}

func roundTrips(b *testing.B, p *Proxy, trip func() error) {
	for range 10 { // connect and warm up
		if err := trip(); err != nil {
			b.Fatal(err)
		}
	}
	took := make([]time.Duration, 0, b.N)
	for b.Loop() {
		start := time.Now()
		if err := trip(); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	q := func(p float64) float64 { return float64(took[int(p*float64(len(took)-1))]) / 1e3 }
	b.ReportMetric(q(0.5), "p50_µs")
	b.ReportMetric(q(0.99), "p99_µs")
	if p != nil {
		st := p.Stats()
		b.ReportMetric(float64((st.Up.Hold.ValueAtQuantile(50) + st.Down.Hold.ValueAtQuantile(50)).Microseconds()), "hold_p50_µs")
		if st.Up.Late.Count() > 0 {
			b.ReportMetric(float64(st.Up.Late.ValueAtQuantile(50).Microseconds()), "late_up_p50_µs")
			b.ReportMetric(float64(st.Up.Late.ValueAtQuantile(99).Microseconds()), "late_up_p99_µs")
		}
	}
}

// throughputShapes are the transactions BenchmarkThroughput runs: "small" is round-trip
// bound (BEGIN; UPDATE a random one of 10,000 rows; COMMIT, synchronous_commit off, 16
// connections), the proxy's worst case; "counter" is the counter suite's shape (BEGIN;
// INSERT; the same 4 hot rows UPDATEd; COMMIT, durable, 64 connections), bound by the hot
// rows' locks as the suites are.
var throughputShapes = []struct {
	name       string
	conns      int32
	syncCommit string
	tx         func(context.Context, pgx.Tx) error
}{
	{"small", 16, "off", func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "UPDATE netdelay_bench SET n = n + 1 WHERE id = $1", 1+rand.IntN(10000))
		return err
	}},
	{"counter", 64, "on", func(ctx context.Context, tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "INSERT INTO netdelay_bench_log (n) VALUES (1)"); err != nil {
			return err
		}
		for id := 1; id <= 4; id++ {
			if _, err := tx.Exec(ctx, "UPDATE netdelay_bench SET n = n + 1 WHERE id = $1", id); err != nil {
				return err
			}
		}
		return nil
	}},
}

// BenchmarkThroughput runs each of throughputShapes on a pgx pool from as many goroutines as
// connections, direct and through a proxy at zero delay, and reports transactions per second
// and the process's CPU per wall second. The proxy at zero delay may cost up to 10% of the
// throughput. Alternate them by running one at a time (-bench Throughput/tx=counter/direct,
// then .../proxy, and again).
func BenchmarkThroughput(b *testing.B) {
	ctx := context.Background()
	setup := pgPool(b, nil, 1)
	if _, err := setup.Exec(ctx, `DROP TABLE IF EXISTS netdelay_bench, netdelay_bench_log;
		CREATE TABLE netdelay_bench (id int PRIMARY KEY, n bigint NOT NULL);
		CREATE TABLE netdelay_bench_log (id bigserial PRIMARY KEY, n bigint NOT NULL);
		INSERT INTO netdelay_bench SELECT g, 0 FROM generate_series(1, 10000) g`); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _, _ = setup.Exec(ctx, "DROP TABLE netdelay_bench, netdelay_bench_log") })
	for _, shape := range throughputShapes {
		for _, via := range []string{"direct", "proxy"} {
			b.Run("tx="+shape.name+"/"+via, func(b *testing.B) {
				var p *Proxy
				if via == "proxy" {
					p = startProxy(b, Config{Upstream: pgUpstream(b)})
				}
				pool := pgPool(b, p, shape.conns, func(c *pgxpool.Config) {
					c.ConnConfig.RuntimeParams["synchronous_commit"] = shape.syncCommit
				})
				warm(b, pool)
				b.SetParallelism(int(shape.conns) / runtime.GOMAXPROCS(0))
				cpu0, wall0 := timing.CPUTime(), time.Now()
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return shape.tx(ctx, tx) }); err != nil {
							b.Error(err)
							return
						}
					}
				})
				wall := time.Since(wall0)
				b.ReportMetric(float64(b.N)/wall.Seconds(), "tx/s")
				b.ReportMetric(100*(timing.CPUTime()-cpu0).Seconds()/wall.Seconds(), "cpu_%core")
			})
		}
	}
}

// warm opens every connection of the pool before the clock starts.
func warm(b *testing.B, pool *pgxpool.Pool) {
	conns := make([]*pgxpool.Conn, 0, pool.Config().MaxConns)
	for range pool.Config().MaxConns {
		c, err := pool.Acquire(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		conns = append(conns, c)
	}
	for _, c := range conns {
		c.Release()
	}
}

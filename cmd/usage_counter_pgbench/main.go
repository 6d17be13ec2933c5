// Command usage_counter_pgbench runs PostgreSQL's pgbench with the usage-counter suite's sync
// transaction against a temporary server seeded by the suite, so the suite's sync throughput
// can be compared with pgbench's at the same connection count (`make pgbench`).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/hotspotkit/hotspotkit/testkit/pgbench"
	"github.com/hotspotkit/hotspotkit/testkit/suites/usagecounter"
)

func main() {
	fs := pflag.NewFlagSet("usage_counter_pgbench", pflag.ContinueOnError)
	o := pgbench.Options{Script: pgbench.UsageCounterSync, Stdout: os.Stderr}
	fs.IntVar(&o.Clients, "max-connections", 64, "pgbench clients (= the suite's pool size)")
	fs.IntVar(&o.Threads, "threads", runtime.NumCPU(), "pgbench threads (-j)")
	fs.DurationVar(&o.Duration, "duration", 30_000_000_000, "how long pgbench runs (-T)")
	fs.StringVar(&o.BinDir, "pg-bin-dir", "", "PostgreSQL bin directory (default: discovered)")
	fs.BoolVar(&o.Unsafe, "unsafe-no-fsync", false, "fsync, synchronous_commit and full_page_writes off")
	fs.StringVar(&o.Protocol, "protocol", "simple", "pgbench's query protocol (-M): simple, extended or prepared (pgx's way: parsed once)")
	fs.Float64Var(&o.Rate, "rate", 0, "transactions per second, Poisson arrivals (-R; 0: closed loop); latency then counts from the scheduled start")
	fs.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage_counter_pgbench — pgbench running the usage-counter sync transaction\n\nExample:\n  usage_counter_pgbench --max-connections 64 --duration 30s\n  usage_counter_pgbench --rate 150 --duration 30s   # against the suite's --rate 150\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(os.Args[1:]); err != nil {
		if err == pflag.ErrHelp {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "usage_counter_pgbench:", err)
		os.Exit(2)
	}
	switch o.Protocol {
	case "simple", "extended", "prepared":
	default:
		fmt.Fprintf(os.Stderr, "usage_counter_pgbench: --protocol %q: want simple, extended or prepared\n", o.Protocol)
		os.Exit(2)
	}
	if o.Clients < 1 || o.Threads < 1 || o.Duration.Seconds() < 1 || o.Rate < 0 {
		fmt.Fprintln(os.Stderr, "usage_counter_pgbench: --max-connections, --threads must be ≥ 1, --duration ≥ 1s and --rate ≥ 0")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	res, err := pgbench.Run(ctx, usagecounter.New(), o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "usage_counter_pgbench:", err)
		os.Exit(1)
	}
	fmt.Printf("pgbench usage-counter sync: %.1f tps, %d transactions, %d failed, latency avg %.3f ms, %d clients, PostgreSQL %s\n",
		res.TPS, res.Transactions, res.Failed, res.LatencyAvgMs, o.Clients, res.PostgresVersion)
	from := "start"
	if o.Rate > 0 {
		from = "scheduled start"
	}
	l := res.Latency
	fmt.Printf("  latency from the %s (its transaction log, %d logged): p50 %.3f, p95 %.3f, p99 %.3f, max %.3f ms\n",
		from, res.Logged, l.P50, l.P95, l.P99, l.Max)
	if o.Rate > 0 {
		g := res.ScheduleLag
		fmt.Printf("  schedule lag: p50 %.3f, p99 %.3f, max %.3f ms; %d skipped\n", g.P50, g.P99, g.Max, res.Skipped)
	}
}

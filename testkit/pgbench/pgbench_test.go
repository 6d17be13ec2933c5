package pgbench_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/hist"
	"github.com/hotspotkit/hotspotkit/testkit/pgbench"
	"github.com/hotspotkit/hotspotkit/testkit/suites/usagecounter"
)

// A log of known lines: completed, skipped and failed transactions are told apart, the times
// and schedule lags land in their histograms.
func TestReadLogCountsEveryKindOfLine(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 100; i++ { // 1,000 … 100,000 µs, lag i µs
		fmt.Fprintf(&b, "0 %d %d 0 1764763200 123456 %d\n", i, i*1000, i)
	}
	b.WriteString("1 101 skipped 0 1764763200 123456 900\n")
	b.WriteString("1 102 failed 0 1764763200 123456 10\n\n")
	lat, lag := hist.New(), hist.New()
	c, err := pgbench.ReadLog(strings.NewReader(b.String()), lat, lag)
	if err != nil {
		t.Fatal(err)
	}
	if c != (pgbench.LogCounts{Logged: 100, Skipped: 1, Failed: 1}) {
		t.Errorf("counts %+v", c)
	}
	if s := lat.Summary(); s.Count != 100 || s.P50 < 49.9 || s.P50 > 50.1 || s.P99 < 98.9 || s.P99 > 99.1 || s.Max < 99.9 {
		t.Errorf("latency %+v, want p50 50 ms, p99 99 ms, max 100 ms", s)
	}
	if s := lag.Summary(); s.Count != 100 || s.P99 != 0.099 {
		t.Errorf("schedule lag %+v, want p99 0.099 ms", s)
	}
	// Without the rate's seventh field, no lag.
	lag2 := hist.New()
	if _, err := pgbench.ReadLog(strings.NewReader("0 1 2500 0 1764763200 1\n"), hist.New(), lag2); err != nil || lag2.Count() != 0 {
		t.Errorf("closed-loop line: err %v, %d lags", err, lag2.Count())
	}
	for _, bad := range []string{"0 1 2500\n", "0 1 fast 0 1764763200 1\n", "0 1 2500 0 1764763200 1 soon\n"} {
		if _, err := pgbench.ReadLog(strings.NewReader(bad), hist.New(), hist.New()); err == nil {
			t.Errorf("%q read without an error", bad)
		}
	}
}

// pgbench itself at a fixed rate, with prepared statements (-M prepared, as pgx sends them),
// against a temporary server seeded by the counter suite: its log is read, every transaction
// it counted is in the latency figures, and the rate shows.
func TestRunAtARateReadsItsLog(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := pgbench.Run(ctx, usagecounter.New(), pgbench.Options{Script: pgbench.UsageCounterSync,
		Clients: 4, Threads: 1, Duration: 2 * time.Second, Rate: 50, Protocol: "prepared", Stdout: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if res.Transactions == 0 || res.Logged+res.FailedLogged != res.Transactions+res.Failed {
		t.Errorf("pgbench counted %d (+%d failed), its log %d (+%d failed)", res.Transactions, res.Failed, res.Logged, res.FailedLogged)
	}
	if res.TPS < 25 || res.TPS > 100 {
		t.Errorf("%.1f tps at -R 50", res.TPS)
	}
	if res.Latency.Count != res.Logged || res.Latency.P50 <= 0 || res.ScheduleLag.Count != res.Logged {
		t.Errorf("latency %+v, schedule lag %+v for %d logged", res.Latency, res.ScheduleLag, res.Logged)
	}
}

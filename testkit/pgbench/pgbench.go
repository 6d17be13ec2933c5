// Package pgbench owns the side-by-side check that the harness is not the bottleneck: it
// starts the same temporary server a suite would, seeds it through the suite, and runs
// PostgreSQL's own pgbench with a script doing the suite's sync transaction at a given number
// of connections, closed loop or at a fixed rate (-R). It reports pgbench's tps and the
// latency percentiles of pgbench's own per-transaction log (-l), which at a fixed rate count
// from each transaction's scheduled start, as the suite's open loop counts from the intended
// one. It does not time anything itself.
package pgbench

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/hotspotkit/hotspotkit/hist"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/engine"
	"github.com/hotspotkit/hotspotkit/testkit/servers/pgserver"
)

// UsageCounterSync is the usage-counter suite's sync transaction as a pgbench script.
//
//go:embed usage_counter_sync.sql
var UsageCounterSync string

// Options shape a pgbench run.
type Options struct {
	Clients  int
	Threads  int
	Duration time.Duration
	BinDir   string
	Script   string
	Unsafe   bool
	// Rate, when above 0, runs pgbench at that many transactions a second (-R), Poisson
	// arrivals, as the suite's --rate does.
	Rate float64
	// Protocol is pgbench's -M: simple (its default, one Query message a statement), extended
	// or prepared (what pgx does: parse once, then bind and execute).
	Protocol string
	Stdout   io.Writer
}

// Result is what pgbench reported.
type Result struct {
	TPS             float64
	Transactions    int64
	Failed          int64
	LatencyAvgMs    float64
	PostgresVersion string
	// Latency is the percentiles of the transactions pgbench logged (-l): at a fixed rate from
	// each one's scheduled start, so the schedule lag included; ScheduleLag is that lag (rate
	// only). Logged counts the log's completed transactions, Skipped and FailedLogged those it
	// logged as skipped or failed.
	Latency      hist.Percentiles
	ScheduleLag  hist.Percentiles
	Logged       int64
	Skipped      int64
	FailedLogged int64
}

var (
	tpsRe     = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)
	txRe      = regexp.MustCompile(`number of transactions actually processed: (\d+)`)
	failedRe  = regexp.MustCompile(`number of failed transactions: (\d+)`)
	latencyRe = regexp.MustCompile(`latency average = ([0-9.]+) ms`)
)

// Run starts a managed server, seeds it with suite (one hot key set), runs pgbench and stops
// the server again.
func Run(ctx context.Context, suite testkit.Suite, o Options) (Result, error) {
	bins, err := pgserver.FindBinaries(o.BinDir)
	if err != nil {
		return Result{}, err
	}
	pgbench := filepath.Join(bins.BinDir, "pgbench")
	if _, err := os.Stat(pgbench); err != nil {
		return Result{}, fmt.Errorf("pgbench not found next to postgres: %w", err)
	}
	srv, err := pgserver.Start(ctx, pgserver.Config{Binaries: bins, MaxConnections: o.Clients + 20, Unsafe: o.Unsafe})
	if err != nil {
		return Result{}, err
	}
	target, err := database.Open(ctx, database.Options{Server: srv})
	if err != nil {
		return Result{}, err
	}
	defer target.Close()
	if err := seed(ctx, suite, target); err != nil {
		return Result{}, err
	}
	// One directory for the script and pgbench's transaction logs, removed afterwards.
	work, err := os.MkdirTemp("", "hotspotkit-pgbench-")
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(work)
	script := filepath.Join(work, "script.sql")
	if err := os.WriteFile(script, []byte(o.Script), 0o600); err != nil {
		return Result{}, err
	}
	logPrefix := filepath.Join(work, "pgbench_log")
	args := []string{"-n", "-c", strconv.Itoa(o.Clients), "-j", strconv.Itoa(o.Threads),
		"-T", strconv.Itoa(int(o.Duration.Seconds())), "-l", "--log-prefix=" + logPrefix, "-f", script}
	if o.Rate > 0 {
		args = append(args, "-R", strconv.FormatFloat(o.Rate, 'f', -1, 64))
	}
	if o.Protocol != "" {
		args = append(args, "-M", o.Protocol)
	}
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, pgbench, append(args, target.DSN())...)
	cmd.Env = append(os.Environ(), "PGOPTIONS=-c search_path="+target.Schema(), "PGAPPNAME=hotspotkit-pgbench")
	cmd.Stdout = io.MultiWriter(&out, o.Stdout)
	cmd.Stderr = io.MultiWriter(&out, o.Stdout)
	if err := cmd.Run(); err != nil {
		return Result{}, fmt.Errorf("pgbench: %v\n%s", err, database.Redact(out.String()))
	}
	info, _ := target.Info(ctx)
	res := Result{PostgresVersion: info.Version}
	text := out.String()
	m := tpsRe.FindStringSubmatch(text)
	if m == nil {
		return Result{}, fmt.Errorf("pgbench printed no tps:\n%s", database.Redact(text))
	}
	res.TPS, _ = strconv.ParseFloat(m[1], 64)
	if m := txRe.FindStringSubmatch(text); m != nil {
		res.Transactions, _ = strconv.ParseInt(m[1], 10, 64)
	}
	if m := failedRe.FindStringSubmatch(text); m != nil {
		res.Failed, _ = strconv.ParseInt(m[1], 10, 64)
	}
	if m := latencyRe.FindStringSubmatch(text); m != nil {
		res.LatencyAvgMs, _ = strconv.ParseFloat(m[1], 64)
	}
	var c LogCounts
	if c, res.Latency, res.ScheduleLag, err = readLogs(logPrefix); err != nil {
		return Result{}, err
	}
	res.Logged, res.Skipped, res.FailedLogged = c.Logged, c.Skipped, c.Failed
	return res, nil
}

// readLogs reads every per-transaction log pgbench wrote under prefix (one per thread) into
// one latency and one schedule-lag histogram (empty in a closed loop, whose lines have no lag).
func readLogs(prefix string) (c LogCounts, lat, lag hist.Percentiles, err error) {
	files, _ := filepath.Glob(prefix + ".*")
	if len(files) == 0 {
		return c, lat, lag, fmt.Errorf("pgbench wrote no transaction log under %s", filepath.Dir(prefix))
	}
	latH, lagH := hist.New(), hist.New()
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return c, lat, lag, err
		}
		fc, err := ReadLog(f, latH, lagH)
		f.Close()
		if err != nil {
			return c, lat, lag, fmt.Errorf("%s: %w", filepath.Base(name), err)
		}
		c.Logged, c.Skipped, c.Failed = c.Logged+fc.Logged, c.Skipped+fc.Skipped, c.Failed+fc.Failed
	}
	return c, latH.Summary(), lagH.Summary(), nil
}

// LogCounts is what ReadLog found in one per-transaction log.
type LogCounts struct{ Logged, Skipped, Failed int64 }

// ReadLog reads a pgbench per-transaction log (-l): one line per transaction,
//
//	client_id transaction_no time script_no time_epoch time_us [schedule_lag]
//
// with time in µs (at a fixed rate from the scheduled start, so the schedule lag included),
// "skipped" for a transaction --latency-limit skipped and "failed" for one that failed. It
// records every completed transaction's time in lat and, when the line has one, its schedule
// lag in lag.
func ReadLog(r io.Reader, lat, lag *hist.Histogram) (LogCounts, error) {
	var c LogCounts
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) < 6 {
			return c, fmt.Errorf("line %d: %d fields, want at least 6: %q", n, len(f), sc.Text())
		}
		switch f[2] {
		case "skipped":
			c.Skipped++
			continue
		case "failed":
			c.Failed++
			continue
		}
		us, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			return c, fmt.Errorf("line %d: time %q: %w", n, f[2], err)
		}
		lat.RecordMicros(us)
		c.Logged++
		if len(f) >= 7 {
			l, err := strconv.ParseInt(f[6], 10, 64)
			if err != nil {
				return c, fmt.Errorf("line %d: schedule lag %q: %w", n, f[6], err)
			}
			lag.RecordMicros(l)
		}
	}
	return c, sc.Err()
}

func seed(ctx context.Context, suite testkit.Suite, target *database.Postgres) error {
	r := engine.Standalone{Mode: testkit.Sync, Config: testkit.Config{HotKeys: 1}}.Run(ctx, target.Target())
	if err := suite.Seed(ctx, r); err != nil {
		return fmt.Errorf("seeding: %w", err)
	}
	return nil
}

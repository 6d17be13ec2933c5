// Package pgbench owns the side-by-side check that the harness is not the bottleneck: it
// starts the same temporary server a suite would, seeds it through the suite, and runs
// PostgreSQL's own pgbench with a script doing the suite's sync transaction at a given number
// of connections. It reports pgbench's tps; the suite's sync mode at the same connection
// count should come within 10% of it. It does not time anything itself.
package pgbench

import (
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
	"time"

	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/internal/engine"
	"github.com/hotspotkit/hotspotkit/testkit/internal/pgserver"
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
	Stdout   io.Writer
}

// Result is what pgbench reported.
type Result struct {
	TPS             float64
	Transactions    int64
	Failed          int64
	LatencyAvgMs    float64
	PostgresVersion string
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
	target, err := database.Open(ctx, database.Options{Server: pgserver.Config{
		Binaries: bins, MaxConnections: o.Clients + 20, Unsafe: o.Unsafe}})
	if err != nil {
		return Result{}, err
	}
	defer target.Close()
	if err := seed(ctx, suite, target); err != nil {
		return Result{}, err
	}
	script, err := os.CreateTemp("", "hotspotkit-pgbench-*.sql")
	if err != nil {
		return Result{}, err
	}
	defer os.Remove(script.Name())
	if _, err := script.WriteString(o.Script); err != nil {
		return Result{}, err
	}
	script.Close()

	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, pgbench, "-n", "-c", strconv.Itoa(o.Clients), "-j", strconv.Itoa(o.Threads),
		"-T", strconv.Itoa(int(o.Duration.Seconds())), "-f", script.Name(), target.DSN())
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
	return res, nil
}

func seed(ctx context.Context, suite testkit.Suite, target *database.Target) error {
	r := engine.Standalone{Mode: testkit.Sync, Config: testkit.Config{HotKeys: 1}}.Run(ctx, target)
	if err := suite.Seed(ctx, r); err != nil {
		return fmt.Errorf("seeding: %w", err)
	}
	return nil
}

// Package calibrate measures the machine, not the code: reference rates of the run's own
// PostgreSQL, taken once per invocation before the first run, so that throughput measured on
// two machines can be compared as efficiency (results.Efficiency). It measures
//
//   - the hot-row UPDATE rate: autocommit `UPDATE … SET n = n + 1` of one row, on 1 connection
//     and on the load's pool size (what pgbench on one row measures);
//   - the batched-write ceiling: transactions of a COPY of 1,000 usage-like rows plus one
//     counter UPDATE, on as many connections as the queue has workers;
//
// each over a few short windows after a short warm-up, reported as median, min and max. It
// works in scratch tables of its own (named with a random suffix, so that processes sharing a
// schema never meet) inside the run's schema, and drops them afterwards; the suite's tables
// and seed are never touched.
package calibrate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/results/units"
)

// BatchRows is the number of rows per COPY of the batched-write measurement.
const BatchRows = 1000

// maxWindowStretch bounds how long a window waits for every worker to finish a unit.
const maxWindowStretch = 10 * time.Second

// Config shapes a calibration.
type Config struct {
	// PoolConns is the load's pool size (--max-connections); BatchConns the queue's workers.
	PoolConns, BatchConns int
	// Windows of Window each are measured per rate, after Warmup (defaults 3, 300 ms, 100 ms).
	Windows int
	Window  time.Duration
	Warmup  time.Duration
}

func (c *Config) defaults() {
	if c.Windows <= 0 {
		c.Windows = 3
	}
	if c.Window <= 0 {
		c.Window = 300 * time.Millisecond
	}
	if c.Warmup <= 0 {
		c.Warmup = 100 * time.Millisecond
	}
	c.PoolConns = max(c.PoolConns, 1)
	c.BatchConns = max(c.BatchConns, 1)
}

// Run calibrates on pool (at least max(PoolConns, BatchConns) connections, search_path the
// run's schema); admin creates and drops the scratch tables.
func Run(ctx context.Context, admin *pgx.Conn, pool *pgxpool.Pool, cfg Config) (*results.Calibration, error) {
	cfg.defaults()
	began := time.Now()
	suffix := randomHex(4)
	usageTable := "calibration_usage_" + suffix
	hot := pgx.Identifier{"calibration_hot_" + suffix}.Sanitize()
	usage := pgx.Identifier{usageTable}.Sanitize()
	drop := func() error {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_, err := admin.Exec(dctx, "DROP TABLE IF EXISTS "+hot+", "+usage)
		return err
	}
	if _, err := admin.Exec(ctx, `CREATE TABLE `+hot+` (id int PRIMARY KEY, n bigint NOT NULL);
		INSERT INTO `+hot+` VALUES (1, 0);
		CREATE TABLE `+usage+` (request_id text PRIMARY KEY, user_id text NOT NULL, api_key_id text NOT NULL,
			provider_id text NOT NULL, model_id text NOT NULL, input_tokens int NOT NULL, output_tokens int NOT NULL,
			total_tokens int NOT NULL, cost numeric(20, 9) NOT NULL, response_time_ms int NOT NULL,
			created_at timestamptz NOT NULL)`); err != nil {
		return nil, errors.Join(fmt.Errorf("calibration tables: %w", err), drop())
	}
	out := &results.Calibration{PoolConns: cfg.PoolConns, BatchedWriteConns: cfg.BatchConns, Windows: cfg.Windows,
		WindowMs: float64(cfg.Window.Milliseconds())}
	update := "UPDATE " + hot + " SET n = n + 1 WHERE id = 1"
	hotRow := func(ctx context.Context, conn *pgxpool.Conn, _ int, _ int64) (int64, error) {
		_, err := conn.Exec(ctx, update)
		return 1, err
	}
	var err error
	if out.HotRowUpdateRPS1, err = measure(ctx, pool, 1, cfg, hotRow); err == nil {
		if out.HotRowUpdateRPSPool, err = measure(ctx, pool, cfg.PoolConns, cfg, hotRow); err == nil {
			out.BatchedWriteRowsPerSec, err = measure(ctx, pool, cfg.BatchConns, cfg, batchedWrite(usageTable, hot))
		}
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("calibration: %w", err), drop())
	}
	if err := drop(); err != nil {
		return nil, fmt.Errorf("dropping the calibration tables: %w", err)
	}
	out.DurationMs = units.Ms(time.Since(began))
	return out, nil
}

var usageColumns = []string{"request_id", "user_id", "api_key_id", "provider_id", "model_id", "input_tokens",
	"output_tokens", "total_tokens", "cost", "response_time_ms", "created_at"}

// batchedWrite is one transaction: COPY of BatchRows usage-like rows and one UPDATE of the
// counter row, as a compacting queue worker writes a batch.
func batchedWrite(usageTable, hot string) op {
	update := "UPDATE " + hot + " SET n = n + $1 WHERE id = 1"
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return func(ctx context.Context, conn *pgxpool.Conn, worker int, seq int64) (int64, error) {
		prefix := "w" + strconv.Itoa(worker) + "-" + strconv.FormatInt(seq, 10) + "-"
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.CopyFrom(ctx, pgx.Identifier{usageTable}, usageColumns,
				pgx.CopyFromSlice(BatchRows, func(i int) ([]any, error) {
					return []any{prefix + strconv.Itoa(i), "user-hot-0", "key-hot-0", "provider-hot-0", "model-hot-0",
						int32(10), int32(20), int32(30), "0.001", int32(50 + i%100), at}, nil
				})); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, update, BatchRows)
			return err
		})
		return BatchRows, err
	}
}

// op does one unit of work on conn and returns how many units (updates, rows) it did.
type op func(ctx context.Context, conn *pgxpool.Conn, worker int, seq int64) (int64, error)

// measure runs conns workers doing o in a loop, each on a connection of its own, and returns
// the rate of units per second over cfg.Windows windows after the warm-up. Workers finish
// the unit they are in when the last window ends (nothing is cancelled mid-statement).
func measure(ctx context.Context, pool *pgxpool.Pool, conns int, cfg Config, o op) (results.Spread, error) {
	var done, ops atomic.Int64 // units done, and the calls of o that did them
	var stop atomic.Bool
	failed := make(chan error, conns)
	var wg sync.WaitGroup
	for w := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := pool.Acquire(ctx)
			if err != nil {
				failed <- err
				return
			}
			defer conn.Release()
			for seq := int64(0); !stop.Load(); seq++ {
				n, err := o(ctx, conn, w, seq)
				if err != nil {
					failed <- err
					return
				}
				done.Add(n)
				ops.Add(1)
			}
		}()
	}
	defer func() { stop.Store(true); wg.Wait() }()
	wait := func(d time.Duration) error {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-failed:
			return err
		case <-t.C:
			return nil
		}
	}
	if err := wait(cfg.Warmup); err != nil {
		return results.Spread{}, err
	}
	rates := make([]float64, 0, cfg.Windows)
	for range cfg.Windows {
		n0, ops0, t0 := done.Load(), ops.Load(), time.Now()
		if err := wait(cfg.Window); err != nil {
			return results.Spread{}, err
		}
		// A window also lasts until every worker could have finished a unit: a batch can take
		// longer than a window on a slow or busy machine, and a window that saw none would
		// read as a rate of 0 instead of a slow one.
		for deadline := t0.Add(maxWindowStretch); ops.Load()-ops0 < int64(conns) && time.Now().Before(deadline); {
			if err := wait(5 * time.Millisecond); err != nil {
				return results.Spread{}, err
			}
		}
		rates = append(rates, float64(done.Load()-n0)/time.Since(t0).Seconds())
	}
	s := results.SpreadOf(rates)
	return results.Spread{Median: units.Round(s.Median, 1), Min: units.Round(s.Min, 1), Max: units.Round(s.Max, 1)}, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

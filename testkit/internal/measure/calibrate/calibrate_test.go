package calibrate

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit/database"
)

func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }

// TestCalibrationFillsEveryRateAndLeavesNothingBehind: every rate is measured over its windows
// (median within min..max, all positive) and the scratch tables are gone afterwards.
func TestCalibrationFillsEveryRateAndLeavesNothingBehind(t *testing.T) {
	target := testdb.New(t)
	ctx := context.Background()
	pool, err := target.NewPool(ctx, database.PoolOptions{MaxConns: 4, AppName: "hotspotkit-calibrate"})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	cal, err := Run(ctx, target.Admin(), pool, Config{PoolConns: 4, BatchConns: 2, Windows: 2,
		Window: 100 * time.Millisecond, Warmup: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if cal.Skipped || cal.PoolConns != 4 || cal.BatchedWriteConns != 2 || cal.Windows != 2 || cal.WindowMs != 100 {
		t.Errorf("shape: %+v", cal)
	}
	for name, s := range map[string]results.Spread{
		"hot row, 1 conn": cal.HotRowUpdateRPS1, "hot row, pool": cal.HotRowUpdateRPSPool,
		"batched write": cal.BatchedWriteRowsPerSec,
	} {
		if s.Min <= 0 || s.Median < s.Min || s.Max < s.Median {
			t.Errorf("%s: %+v", name, s)
		}
	}
	// A batch is 1,000 rows in one transaction: rows per second far above hot-row updates.
	if cal.BatchedWriteRowsPerSec.Median <= cal.HotRowUpdateRPS1.Median {
		t.Errorf("batched %v rows/s not above single-row %v/s", cal.BatchedWriteRowsPerSec.Median, cal.HotRowUpdateRPS1.Median)
	}
	if cal.DurationMs < 3*(50+2*100) { // three rates, each a warm-up and two windows
		t.Errorf("duration %v ms shorter than its windows", cal.DurationMs)
	}
	var left int
	if err := target.Admin().QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE schemaname = $1 AND tablename LIKE 'calibration%'`,
		target.Schema()).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d calibration tables left in the schema", left)
	}
}

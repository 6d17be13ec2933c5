package results

import "github.com/hotspotkit/hotspotkit/results/units"

// SpreadOf is the median (the mean of the two middle values for an even count), min and max
// of vs.
func SpreadOf(vs []float64) Spread { return spreadOf(vs) }

// Efficiency bases, as written to Run.EfficiencyBasis.
const (
	// EfficiencyHotRow: sync-style modes' completed requests/s over HotRowUpdateRPSPool.
	EfficiencyHotRow = "hot_row_update_rps_pool"
	// EfficiencyBatched: queue modes' persisted records/s over BatchedWriteRowsPerSec.
	EfficiencyBatched = "batched_write_rows_per_s"
)

// Efficiency is run's throughput over the calibrated rate of the machine it ran on (see
// Run.Efficiency), and the basis it was taken against; 0 and "" without a calibration. A run
// with a queue is measured by the records its queue persisted (flushed, or written inline when
// the queue was full) per second of the run; any other by its completed requests per second.
func Efficiency(run Run, cal *Calibration) (float64, string) {
	if cal == nil || cal.Skipped || run.Load.DurationMs <= 0 {
		return 0, ""
	}
	if q := run.Queue; q != nil {
		if cal.BatchedWriteRowsPerSec.Median <= 0 {
			return 0, ""
		}
		perSec := float64(q.FlushedTotal+q.SyncFallbackTotal) / (run.Load.DurationMs / 1000)
		return units.Round(perSec/cal.BatchedWriteRowsPerSec.Median, 4), EfficiencyBatched
	}
	if cal.HotRowUpdateRPSPool.Median <= 0 {
		return 0, ""
	}
	return units.Round(run.Load.ThroughputRPS/cal.HotRowUpdateRPSPool.Median, 4), EfficiencyHotRow
}

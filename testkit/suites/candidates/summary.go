package candidates

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/hotspotkit/hotspotkit/results"
)

// metricPrefix is the reference gateway's prefix for its request-candidate queue metrics.
const metricPrefix = "request_candidate_queue_"

// queueMetrics are the report's queue counters (JSON names of results.Queue) in the order the
// reference lists them, then the ones it lacks.
var queueMetrics = []struct {
	name  string
	value func(*results.Queue) int64
}{
	{"depth", func(q *results.Queue) int64 { return q.Depth }},
	{"pending_depth", func(q *results.Queue) int64 { return q.PendingDepth }},
	{"capacity", func(q *results.Queue) int64 { return q.Capacity }},
	{"enqueued_total", func(q *results.Queue) int64 { return q.EnqueuedTotal }},
	{"dropped_total", func(q *results.Queue) int64 { return q.DroppedTotal }},
	{"flushed_total", func(q *results.Queue) int64 { return q.FlushedTotal }},
	{"flush_failed_total", func(q *results.Queue) int64 { return q.FlushFailedTotal }},
	{"flush_batches_total", func(q *results.Queue) int64 { return q.FlushBatchesTotal }},
	{"flush_sql_ops_total", func(q *results.Queue) int64 { return q.FlushSQLOpsTotal }},
	{"compacted_total", func(q *results.Queue) int64 { return q.CompactedTotal }},
	{"sync_fallback_total", func(q *results.Queue) int64 { return q.SyncFallbackTotal }},
	// not in the reference:
	{"flush_sql_records_total", func(q *results.Queue) int64 { return q.FlushSQLRecordsTotal }},
	{"max_depth", func(q *results.Queue) int64 { return q.MaxDepth }},
	{"retries_total", func(q *results.Queue) int64 { return q.RetriesTotal }},
	{"rejected_total", func(q *results.Queue) int64 { return q.RejectedTotal }},
	{"abandoned_total", func(q *results.Queue) int64 { return q.AbandonedTotal }},
}

// WriteSummary lists, one column per run, the queue counters under the reference's metric
// names (request_candidate_queue_*), so baseline tables keyed by those names can be filled
// from the report, and the final rows and request_ids of request_candidates.
func (*Suite) WriteSummary(w io.Writer, rep *results.Report) {
	const rowsLabel = "request_candidates rows / request_id"
	width := len(rowsLabel)
	for _, m := range queueMetrics {
		width = max(width, len(metricPrefix+m.name))
	}
	fmt.Fprintln(w, "\nrequest_candidates and its queue after each run, under the reference's metric names:")
	// Every cell is right-aligned; the names are padded to one width so they read left-aligned.
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\t", width, "")
	for _, r := range rep.Runs {
		fmt.Fprintf(tw, "%s\t", r.Label())
	}
	fmt.Fprintln(tw)
	fmt.Fprintf(tw, "%-*s\t", width, rowsLabel)
	for _, r := range rep.Runs {
		fmt.Fprintf(tw, "%s / %s\t", checkActual(r, checkRows), checkActual(r, checkRequests))
	}
	fmt.Fprintln(tw)
	for _, m := range queueMetrics {
		fmt.Fprintf(tw, "%-*s\t", width, metricPrefix+m.name)
		for _, r := range rep.Runs {
			if r.Queue == nil {
				fmt.Fprint(tw, "–\t")
				continue
			}
			fmt.Fprintf(tw, "%d\t", m.value(r.Queue))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

// checkActual is what the database held for the named check, "?" when the run has none.
func checkActual(r results.Run, name string) string {
	for _, c := range r.Verification.Checks {
		if c.Name == name {
			return fmt.Sprint(c.Actual)
		}
	}
	return "?"
}

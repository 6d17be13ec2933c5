package render

import (
	"fmt"
	"io"

	"github.com/hotspotkit/hotspotkit/results"
)

// printFlushTime says in one line per queue run where a batch's flush time went, so that a
// queue waiting on itself shows beside one that keeps the database busy.
func printFlushTime(w io.Writer, rep *results.Report) {
	for _, r := range rep.Runs {
		if r.Queue == nil || r.Queue.FlushTime == nil || r.Queue.FlushTime.Batches == 0 {
			continue
		}
		f := r.Queue.FlushTime
		p := f.PerBatchMs
		fmt.Fprintf(w, "  flush %s: %d batches, ms each: build %.1f, begin %.1f, copy %.1f, statements %.1f, commit %.1f (p99 %.0f), awaiting the previous commit %.1f\n",
			ModeLabel(r.Mode, r.Config), f.Batches, p.Build, p.Begin, p.Copy, p.Statements, p.Commit, f.BatchMs.P99, p.PipelineWait)
	}
}

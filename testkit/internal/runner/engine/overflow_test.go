package engine_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/results/render"
	"github.com/hotspotkit/hotspotkit/testkit/suites/usagecounter"
	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

// TestOverflowIsReported pauses the queue's flushing for the whole intake (which lasts 300 ms),
// so a small queue overflows, and checks that stderr says so in its table and in one warning line.
func TestOverflowIsReported(t *testing.T) {
	for _, policy := range []string{"sync", "drop"} {
		t.Run(policy, func(t *testing.T) {
			code, rep, stderr := suitetest.RunShared(t, usagecounter.New(), "--requests", "0", "--duration", "300ms", "--concurrency", "4",
				"--modes", "async-compact", "--queue-capacity", "8", "--queue-workers", "1", "--queue-full", policy,
				"--fault", "pause-flush@0s+1s", "--wide")
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			q := rep.Runs[0].Queue
			n, what := q.SyncFallbackTotal, "records inline on the hot rows"
			if policy == "drop" {
				n, what = q.DroppedTotal, "records"
			}
			if n == 0 {
				t.Fatalf("the queue did not overflow: %+v\n%s", q.QueueMetrics, stderr)
			}
			var warning string
			for _, l := range strings.Split(stderr, "\n") {
				if strings.Contains(l, "warning: the queue overflowed") {
					warning = l
				}
			}
			for _, want := range []string{"--queue-full " + policy, "--queue-capacity 8", fmt.Sprintf(" %d %s", n, what), "--queue-full block"} {
				if !strings.Contains(warning, want) {
					t.Errorf("warning %q does not say %q", warning, want)
				}
			}
			// The stderr table is the table of `baseline table`: its inline / dropped cell is there.
			table := render.Table([]*results.Report{rep})
			cell := table.Rows[0].Cells[slices.IndexFunc(table.Columns, func(c render.Column) bool { return c.Key == render.ColInlineDropped })]
			if cell == "0 / 0" || !strings.Contains(stderr, "inline / dropped") || !strings.Contains(stderr, " "+cell+" |") {
				t.Errorf("the table lacks the inline / dropped column with %q:\n%s", cell, stderr)
			}
		})
	}
}

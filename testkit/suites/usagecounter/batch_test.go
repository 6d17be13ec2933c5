package usagecounter

import (
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

// TestBatchLadderIsOneLevelPerBatchSize runs --batch-levels over the two async modes: one
// verified run per mode and batch size, its queue flushing batches of at most its rung's size
// (as its config records it), and one batch ladder per mode.
func TestBatchLadderIsOneLevelPerBatchSize(t *testing.T) {
	rep, stderr := suitetest.Runs(t, New(), 4, "--modes", "async,async-compact", "--batch-levels", "10,200",
		"--requests", "300", "--concurrency", "50", "--queue-workers", "1", "--flush-interval-ms", "1000")
	batches := map[string]map[int]int64{}
	for _, r := range rep.Runs {
		suitetest.Verified(t, r)
		suitetest.Completed(t, r, 300)
		size, q := int(r.Rung()["flush_batch_size"].Num), r.Queue
		if q == nil || size != r.Config.FlushBatchSize || q.FlushBatchesTotal == 0 || q.FlushedTotal > int64(size)*q.FlushBatchesTotal {
			t.Fatalf("%s at batch %d (config %d): queue %+v: a batch above its size", r.Mode, size, r.Config.FlushBatchSize, q)
		}
		if batches[r.Mode] == nil {
			batches[r.Mode] = map[int]int64{}
		}
		batches[r.Mode][size] = q.FlushBatchesTotal
	}
	for mode, b := range batches {
		if b[10] <= b[200] {
			t.Errorf("%s: %d batches of 10, %d of 200: the larger batch flushed no fewer", mode, b[10], b[200])
		}
	}
	if len(rep.Ladders) != 2 {
		t.Fatalf("%d ladders, want a batch ladder per mode", len(rep.Ladders))
	}
	for _, l := range rep.Ladders {
		if l.Axis != "flush_batch_size" || len(l.Levels) != 2 || l.Levels[0].Value.Num != 10 || !l.Levels[1].Verified {
			t.Errorf("%s ladder %+v", l.Mode, l)
		}
	}
	for _, want := range []string{"async · batch 10", "async-compact · batch 200", "async batch ladder: 10 → ", "async-compact batch ladder: 10 → "} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the summary lacks %q:\n%s", want, stderr)
		}
	}
}

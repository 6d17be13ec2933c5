package render

import (
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/results"
)

func TestPrintFlushTime(t *testing.T) {
	rep := &results.Report{Runs: []results.Run{
		{Mode: "async-compact", Queue: &results.Queue{FlushTime: &results.FlushTime{Batches: 60,
			PerBatchMs: results.FlushPhasesMs{Copy: 30, Commit: 15.8, PipelineWait: 0.4}, BatchMs: results.Latency{P99: 157}}}},
		{Mode: "sync"},
		{Mode: "async", Queue: &results.Queue{}}, // Redis: not measured
	}}
	var b strings.Builder
	printFlushTime(&b, rep)
	want := "  flush async-compact: 60 batches, ms each: build 0.0, begin 0.0, copy 30.0, statements 0.0, commit 15.8 (p99 157), awaiting the previous commit 0.4\n"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
}

package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/results"
)

func TestMissText(t *testing.T) {
	for m, want := range map[results.Miss]string{
		{Objective: results.ObjectiveP99, Limit: 50, Value: 612, Ratio: 12.24}:       "p99 612 ms > 50.0 ms (12×)",
		{Objective: results.ObjectiveLagP99, Limit: 200, NotMeasured: true}:          "lag p99 not measured (the objective 200 ms cannot be shown held)",
		{Objective: results.ObjectiveSessions, Limit: 40, Value: 70, Ratio: 1.75}:    "sessions 70 > 40 (1.8×)",
		{Objective: results.ObjectiveRateHeld, Limit: 0.95, Value: 0.8, Ratio: 1.19}: "sent 80.0% of its arrivals < 95.0%",
		{Objective: results.ObjectiveVerified, Limit: 1}:                             "not verified",
		{Objective: results.ObjectiveNoFailures, Value: 12}:                          "12 requests failed",
		{Objective: results.ObjectiveQueueIntact, Value: 3}:                          "the queue dropped 3 records",
	} {
		if got := MissText(m); got != want {
			t.Errorf("%+v: %q, want %q", m, got, want)
		}
	}
}

// The advice's lines: a row per configuration run or pruned (the untried counted), why each
// one that did not hold failed, and the outcome in words.
func TestAdviceLines(t *testing.T) {
	pruned := 0
	rep := &results.Report{Suite: "s", Runs: []results.Run{
		{Mode: "sync", Config: results.RunConfig{MaxConnections: 8}, Load: results.Load{ThroughputRPS: 700, LatencyMs: results.Latency{P99: 612}},
			Verification: results.Verification{Passed: true}},
	}, Advice: &results.Advice{Objectives: results.Objectives{P99Ms: 50}, Concurrency: 6000, Modes: []string{"sync", "async"},
		LengthsMs: []float64{2000, 4000, 8000}, BudgetMs: 60000, UsedMs: 30000, Outcome: results.AdviceNoneHolds,
		Configurations: []results.Configuration{
			{Mode: "sync", At: results.Position{"max_connections": results.Number(8)}, Status: results.ConfigFailed,
				Why: "p99 612 ms > 50.0 ms (12×) at 2s", Trials: []results.Trial{{Run: 0, Phase: results.PhaseScreen, LengthMs: 2000}}},
			{Mode: "sync", At: results.Position{"max_connections": results.Number(32)}, Status: results.ConfigPruned, PrunedBy: &pruned,
				Why: "a larger pool queues more on it"},
			{Mode: "async", At: results.Position{"max_connections": results.Number(8)}, Status: results.ConfigUntried, Why: "not reached"},
		},
		Closest: &results.Choice{Mode: "sync", At: results.Position{"max_connections": results.Number(8)},
			Misses: []results.Miss{{Objective: results.ObjectiveP99, Limit: 50, Value: 612, Ratio: 12.24}}},
	}}
	var b bytes.Buffer
	Advice(&b, rep)
	out := b.String()
	for _, want := range []string{
		"advise: holding p99 ≤ 50.0 ms, at 6,000 workers (closed loop)",
		"1  sync · pool 8   2s      612 ms        –         –        –  failed",
		"2  sync · pool 32  –            –        –         –        –  pruned",
		"#1 sync · pool 8: p99 612 ms > 50.0 ms (12×) at 2s",
		"#2 pruned by #1: a larger pool queues more on it",
		"1 more configuration not reached",
		"- no configuration held; the closest, sync · pool 8: p99 612 ms > 50.0 ms (12×)",
		"- search: 1 run (1 screening) in 30s of a 1m0s budget",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "async · pool 8") {
		t.Errorf("an untried configuration has a row:\n%s", out)
	}

	rep.Advice.Outcome, rep.Advice.Closest = results.AdviceCannotDecide, nil
	rep.Advice.Next = []results.Proposal{{Mode: "async", At: results.Position{"max_connections": results.Number(8)}, Phase: results.PhaseScreen, LengthMs: 2000}}
	b.Reset()
	Advice(&b, rep)
	if want := "- cannot decide within the budget of 1m0s; next it would run: screen async · pool 8 for 2s"; !strings.Contains(b.String(), want) {
		t.Errorf("lacks %q:\n%s", want, b.String())
	}
}

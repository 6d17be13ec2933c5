package engine_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/metricstest"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/cli"
	"github.com/hotspotkit/hotspotkit/testkit/counters"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/metrics"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/engine"
	"github.com/hotspotkit/hotspotkit/testkit/suites/usagecounter"
	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

// waitForEndpoint returns the URL the engine printed on stderr.
func waitForEndpoint(t *testing.T, stderr fmt.Stringer, done <-chan struct{}) string {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		if m := metricstest.Endpoint.FindStringSubmatch(stderr.String()); m != nil {
			return m[1]
		}
		select {
		case <-done:
			t.Fatalf("the run ended without announcing its endpoint:\n%s", stderr.String())
		case <-deadline:
			t.Fatalf("no endpoint announced after a minute:\n%s", stderr.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func runLabels(suite string, r results.Run, index int) []string {
	return []string{"suite=" + suite, "mode=" + r.Mode, "role=both", fmt.Sprintf("run=%d", index), fmt.Sprintf("level=%d", r.Level()), "database=" + r.Config.DatabaseKind()}
}

// TestMetricsEndpointFollowsTheRun scrapes --metrics-addr while three modes run, parses every
// scrape with Prometheus's text parser, and checks that every metric is there with the run's
// labels, that counters never go down, and that the final values are the report's.
func TestMetricsEndpointFollowsTheRun(t *testing.T) {
	suite := usagecounter.New()
	var final metricstest.Scrape
	var finalErr error
	restore := engine.SetAfterInvocation(func(url string) { final, finalErr = metricstest.Get(url) })
	defer restore()

	out := filepath.Join(t.TempDir(), "report.json")
	args := suitetest.SharedArgs(t, "--requests", "1000", "--concurrency", "100",
		"--modes", "sync,outbox,async-compact", "--monitor-interval-ms", "20", "--metrics-addr", "127.0.0.1:0", "--output", out)
	stderr := &suitetest.Output{}
	done := make(chan int)
	go func() { done <- cli.Execute(suite, args, &bytes.Buffer{}, stderr) }()
	running := make(chan struct{})
	url := waitForEndpoint(t, stderr, running)

	var scrapes []metricstest.Scrape
	seen := map[string]bool{} // every series any scrape showed
	var code int
scraping:
	for {
		select {
		case code = <-done:
			break scraping
		case <-time.After(25 * time.Millisecond):
		}
		s, err := metricstest.Get(url)
		if err != nil {
			select {
			case code = <-done: // the invocation ended (and closed the endpoint) meanwhile
				break scraping
			case <-time.After(10 * time.Second):
				t.Fatalf("scrape during the run: %v", err)
			}
		}
		scrapes = append(scrapes, s)
		for k := range s {
			seen[k] = true
		}
	}
	close(running)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	if finalErr != nil {
		t.Fatalf("final scrape: %v", finalErr)
	}
	scrapes = append(scrapes, final)
	for k := range final {
		seen[k] = true
	}
	t.Logf("%d scrapes\n%s", len(scrapes), stderr.String())
	if strings.Contains(stderr.String(), "overflowed") {
		t.Errorf("a run whose queue never filled warns of an overflow")
	}
	if len(scrapes) < 3 {
		t.Fatalf("only %d scrapes during the run", len(scrapes))
	}

	// Counters never decrease between two scrapes.
	for i := 1; i < len(scrapes); i++ {
		for _, d := range metricstest.Decreased(scrapes[i-1], scrapes[i]) {
			t.Errorf("between scrapes %d and %d: %s", i-1, i, d)
		}
	}

	rep, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	info := suite.Info()
	common := []string{metrics.RequestsCompleted, metrics.RequestsFailed, metrics.RequestsInFlight,
		metrics.RequestDuration, metrics.AcquireWait, metrics.LockWaiters, metrics.PoolAcquired,
		metrics.PoolIdle, metrics.PoolMax, metrics.ServerSessions, metrics.RunFinished, metrics.ClientCPU, metrics.ClientCPUShare}
	queue := []string{metrics.QueueCapacity, metrics.QueueDepth, metrics.QueuePending, metrics.QueueEnqueued,
		metrics.QueueFlushed, metrics.QueueCompacted, metrics.QueueDropped, metrics.QueueInline,
		metrics.QueueRejected, metrics.QueueBatches, metrics.QueueRetries, metrics.PersistLag}
	for i, r := range rep.Runs {
		labels := runLabels(info.Name, r, i)
		want := common
		switch r.Mode {
		case counters.Outbox.String():
			want = append(want, metrics.OutboxPending)
		case testkit.AsyncCompact.String():
			want = append(want, queue...)
		}
		for _, name := range want {
			if _, ok := final[metricstest.Series(name, labels...)]; !ok {
				t.Errorf("%s: %s missing from the final scrape", r.Mode, metricstest.Series(name, labels...))
			}
		}
		for _, table := range info.HotTables {
			if _, ok := final[metricstest.Series(metrics.LockWaitersByRelation, append(labels, "relation="+table)...)]; !ok {
				t.Errorf("%s: no lock waiters series for hot table %s", r.Mode, table)
			}
		}
		// The last scrape is the report.
		sel := func(name string) float64 { return final[metricstest.Series(name, labels...)] }
		if got, want := sel(metrics.RequestsCompleted), float64(r.Load.CompletedRequests+r.Load.WarmupRequests); got != want {
			t.Errorf("%s: completed requests %v on the endpoint, %v in the report", r.Mode, got, want)
		}
		if got := sel(metrics.RequestDuration); got != float64(r.Load.LatencyMs.Count) {
			t.Errorf("%s: %v request durations on the endpoint, %d in the report", r.Mode, got, r.Load.LatencyMs.Count)
		}
		if got := sel(metrics.RunFinished); got != 1 {
			t.Errorf("%s: run not finished on the endpoint after the report was written", r.Mode)
		}
		// The client's processor time: the window's in the report, the whole run's (set-up and
		// verification too) on the endpoint; the shared test server is this machine's, its
		// postmaster found through the admin session's backend.
		g := r.Generator
		if g == nil || g.Client.PerRequestUs <= 0 || g.WindowMs <= 0 || g.SetUp == nil || g.Verification == nil {
			t.Errorf("%s: generator %+v", r.Mode, g)
		} else {
			if got := sel(metrics.ClientCPU); got < g.Client.UserS+g.Client.SystemS {
				t.Errorf("%s: client CPU %v s on the endpoint, %v s in the report's window", r.Mode, got, g.Client.UserS+g.Client.SystemS)
			}
			if g.Server == nil || g.Verification.ServerCPUS == nil || g.ServerCores < 1 {
				t.Errorf("%s: the local test server's processor time was not read: %+v", r.Mode, g)
			}
		}
		if q := r.Queue; q != nil {
			if got := sel(metrics.QueueFlushed); got != float64(q.FlushedTotal) || got == 0 {
				t.Errorf("%s: flushed %v on the endpoint, %d in the report", r.Mode, got, q.FlushedTotal)
			}
			if got := sel(metrics.QueueCompacted); got != float64(q.CompactedTotal) {
				t.Errorf("%s: compacted %v on the endpoint, %d in the report", r.Mode, got, q.CompactedTotal)
			}
			if got := sel(metrics.PersistLag); got != float64(q.PersistLagMs.Count) {
				t.Errorf("%s: %v persist lags on the endpoint, %d in the report", r.Mode, got, q.PersistLagMs.Count)
			}
		}
	}
	// Waiters by lock type show while the sync run queues on its hot rows.
	byType := false
	for _, lockType := range []string{"transactionid", "tuple", "relation"} {
		byType = byType || seen[metricstest.Series(metrics.LockWaitersByLockType, append(runLabels(info.Name, rep.Runs[0], 0), "lock_type="+lockType)...)]
	}
	if !byType && rep.Runs[0].LockMonitor.MaxLockWaiters > 0 {
		t.Errorf("sync: %d lock waiters in the report, none by lock type on the endpoint", rep.Runs[0].LockMonitor.MaxLockWaiters)
	}
}

// TestMetricsLingerServesTheFinalValues: with --metrics-linger the endpoint stays up after the
// report is written, announces it, and serves the report's final values to a scrape that comes
// only then; when the linger is over the process ends and the endpoint is gone.
func TestMetricsLingerServesTheFinalValues(t *testing.T) {
	suite := usagecounter.New()
	out := filepath.Join(t.TempDir(), "report.json")
	args := suitetest.SharedArgs(t, "--requests", "300", "--concurrency", "30", "--modes", "sync",
		"--metrics-addr", "127.0.0.1:0", "--metrics-linger", "3s", "--output", out)
	stderr := &suitetest.Output{}
	done := make(chan int, 1)
	go func() { done <- cli.Execute(suite, args, &bytes.Buffer{}, stderr) }()
	running := make(chan struct{})
	url := waitForEndpoint(t, stderr, running)

	deadline := time.After(time.Minute)
	for !strings.Contains(stderr.String(), "the final values stay on "+url) {
		select {
		case code := <-done:
			t.Fatalf("exit %d before lingering:\n%s", code, stderr.String())
		case <-deadline:
			t.Fatalf("no linger announced:\n%s", stderr.String())
		case <-time.After(5 * time.Millisecond):
		}
	}
	s, err := metricstest.Get(url)
	if err != nil {
		t.Fatalf("scrape while lingering: %v", err)
	}
	rep, err := results.ReadFile(out)
	if err != nil {
		t.Fatalf("the report is not written before the linger: %v", err)
	}
	r := rep.Runs[0]
	labels := runLabels(suite.Info().Name, r, 0)
	if got, want := s[metricstest.Series(metrics.RequestsCompleted, labels...)], float64(r.Load.CompletedRequests+r.Load.WarmupRequests); got != want || got == 0 {
		t.Errorf("completed requests %v on the lingering endpoint, %v in the report", got, want)
	}
	if got := s[metricstest.Series(metrics.RunFinished, labels...)]; got != 1 {
		t.Errorf("run not finished on the lingering endpoint")
	}
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, stderr.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("the process did not end after its linger")
	}
	close(running)
	if _, err := metricstest.Get(url); err == nil {
		t.Error("the endpoint still answers after the process ended")
	}
}

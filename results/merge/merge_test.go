package merge

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/hist"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/resultstest"
	"github.com/hotspotkit/hotspotkit/results"
)

// knownLatencies are two producers' latencies (2,000 requests each) whose union has a p99 far
// from the mean of theirs: producer 0 is fast and even (1–21 ms), producer 1 mostly fast with
// a slow tail of 100 requests at 200–300 ms, more than the union's slowest 1% (40).
func knownLatencies() (p0, p1 []time.Duration) {
	for i := range 2000 {
		p0 = append(p0, time.Millisecond+time.Duration(i)*10*time.Microsecond)
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	for range 1900 {
		p1 = append(p1, 5*time.Millisecond+time.Duration(rnd.IntN(1000))*time.Microsecond)
	}
	for i := range 100 {
		p1 = append(p1, 200*time.Millisecond+time.Duration(i)*time.Millisecond)
	}
	return p0, p1
}

func producer(id int, lat []time.Duration, from, window time.Duration) Input {
	return Input{Path: "p" + string(rune('0'+id)) + ".json", Report: resultstest.SplitReport(resultstest.SplitProcess{
		Role: "producer", ProducerID: id, Host: "host-" + string(rune('a'+id)), Latencies: lat,
		From: from, Window: window, Intake: window})}
}

func consumer(name string, verify bool, lags []time.Duration, from, window time.Duration, total int64) Input {
	return Input{Path: name + ".json", Report: resultstest.SplitReport(resultstest.SplitProcess{
		Role: "consumer", Verify: verify, Host: "host-" + name, Lags: lags, Reads: lags[:min(len(lags), 20)],
		From: from, Window: window, Total: total})}
}

// The acceptance test of baseline merge: the merged p99 is the p99 of the union of the
// producers' latencies, not the mean of their p99s.
func TestMergedP99IsTheUnions(t *testing.T) {
	l0, l1 := knownLatencies()
	m, err := Merge([]Input{producer(1, l1, 500*time.Millisecond, 2*time.Second), producer(0, l0, 0, 2*time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	union, _ := resultstest.HistOf(append(slices.Clone(l0), l1...))
	want := results.Latency(union.Summary())
	run := m.Report.Runs[0]
	got := run.Load.LatencyMs
	if got != want {
		t.Errorf("merged latency %+v, want the union's %+v", got, want)
	}
	// Exactly, within the histogram's 3 significant figures: the 3,960th of the 4,000 sorted.
	sorted := append(slices.Clone(l0), l1...)
	slices.Sort(sorted)
	exact := float64(sorted[len(sorted)*99/100-1].Microseconds()) / 1000
	if d := got.P99 - exact; d < -exact/1000 || d > exact/1000 {
		t.Errorf("merged p99 %.3f ms, the union's sorted p99 is %.3f ms", got.P99, exact)
	}
	p0, p1 := m.Report.Runs[0], m.Report.Runs[0]
	p0.Load, p1.Load = resultstest.SplitReport(resultstest.SplitProcess{Role: "producer", Latencies: l0}).Runs[0].Load,
		resultstest.SplitReport(resultstest.SplitProcess{Role: "producer", Latencies: l1}).Runs[0].Load
	averaged := (p0.Load.LatencyMs.P99 + p1.Load.LatencyMs.P99) / 2
	t.Logf("p99: producer 0 %.3f ms, producer 1 %.3f ms, their mean %.3f ms; merged %.3f ms (union sorted %.3f ms)",
		p0.Load.LatencyMs.P99, p1.Load.LatencyMs.P99, averaged, got.P99, exact)
	if got.P99 == averaged || got.P99 < 1.2*averaged {
		t.Errorf("merged p99 %.3f ms should be far from the mean of the two p99s, %.3f ms", got.P99, averaged)
	}

	if l := run.Load; l.CompletedRequests != 4000 || l.Concurrency != 100 || run.Config.Requests != 4000 || run.Config.Concurrency != 100 {
		t.Errorf("completed %d, concurrency %d, config %d × %d: want 4,000 × 100", l.CompletedRequests, l.Concurrency, run.Config.Requests, run.Config.Concurrency)
	}
	// Windows 0–2 s and 0.5–2.5 s: the union is 2.5 s, so 4,000 / 2.5 s — not the sum of the
	// two producers' rates (1,000 + 1,000 over the 2 s each took).
	if l := run.Load; l.DurationMs != 2500 || l.ThroughputRPS != 1600 || !l.MeasuredFrom.Equal(resultstest.Start) {
		t.Errorf("window %v ms from %v, throughput %v: want 2,500 ms from the first start, 1,600 rps", l.DurationMs, l.MeasuredFrom, l.ThroughputRPS)
	}
	if run.Queue.EnqueuedTotal != 4000 {
		t.Errorf("enqueued %d, want 4,000", run.Queue.EnqueuedTotal)
	}
	// Two producers alone: not verified, and said: the run's checks were not made (not failed).
	if run.Verification.Passed || len(m.Notes) == 0 || !strings.Contains(m.Notes[0], "not verified") {
		t.Errorf("producers only: verified %v, notes %q", run.Verification.Passed, m.Notes)
	}
	v := run.Verification
	if last := v.Checks[len(v.Checks)-1]; results.Verdict(v.Checks) != results.CheckNotChecked ||
		last != results.NotChecked("the run's checks", "no report of a consumer with --verify was merged") ||
		v.Unverified == nil || v.Unverified.Reason != "a check was not made: the run's checks" || v.Unverified.Succeeded != 4000 {
		t.Errorf("producers only: verification %+v, unverified %+v", v, v.Unverified)
	}
	if ps := m.Report.Processes; len(ps) != 2 || ps[0].ProducerID != 0 || ps[0].Hostname != "host-a" || ps[1].Report != "p1.json" || ps[1].PID == 0 {
		t.Errorf("processes %+v", ps)
	}
}

// A whole split run: two producers, a consumer and the verifying consumer.
func TestMergeSplitRun(t *testing.T) {
	l0, l1 := knownLatencies()
	lagsA := []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 900 * time.Millisecond}
	var lagsB []time.Duration
	for i := range 3997 {
		lagsB = append(lagsB, time.Duration(i)*100*time.Microsecond)
	}
	inputs := []Input{
		consumer("c2", true, lagsB, 100*time.Millisecond, 3*time.Second, 4000),
		producer(0, l0, 0, 2*time.Second),
		consumer("c1", false, lagsA, 0, 2900*time.Millisecond, 0),
		producer(1, l1, 500*time.Millisecond, 2*time.Second),
	}
	m, err := Merge(inputs)
	if err != nil {
		t.Fatal(err)
	}
	rep, run := m.Report, m.Report.Runs[0]
	if len(m.Notes) != 1 || m.Notes[0] != "database figures are verifying consumer (c2.json)'s, whose window missed part of the consumers' (they count the server's work within it only)" {
		t.Errorf("notes %q", m.Notes)
	}
	var roles []string
	for _, p := range rep.Processes {
		roles = append(roles, p.Role+"@"+p.Hostname)
	}
	if want := []string{"producer@host-a", "producer@host-b", "consumer@host-c1", "consumer@host-c2"}; !slices.Equal(roles, want) {
		t.Errorf("processes %v, want %v", roles, want)
	}
	if e := rep.Environment; !e.Merged || e.Hostname != "" || e.PID != 0 || e.DatabaseVersion != "15.18" || e.Schema != "run42" || e.Calibration == nil {
		t.Errorf("environment %+v: want merged, no single host, what all agree on kept", e)
	}
	union, _ := resultstest.HistOf(append(slices.Clone(lagsA), lagsB...))
	q := run.Queue
	if q.PersistLagMs != results.Latency(union.Summary()) {
		t.Errorf("persist lag %+v, want the union's %+v", q.PersistLagMs, union.Summary())
	}
	reads, _ := resultstest.HistOf(append(slices.Clone(lagsA), lagsB[:20]...))
	if got := run.LockMonitor.TotalReadMs; got == nil || *got != results.Latency(reads.Summary()) {
		t.Errorf("total reads %+v, want the union of the consumers' %+v", got, reads.Summary())
	}
	if q.EnqueuedTotal != 4000 || q.FlushedTotal != 4000 || q.Stream.AckedTotal != 4000 || q.MaxDepth != 2000 {
		t.Errorf("queue %+v, stream %+v", q.QueueMetrics, *q.Stream)
	}
	// The run's writes per UPDATE are the summed counters': c2's 3,997 records and c1's 3 went
	// into 4 and 1 writes (c2 alone: 999.25).
	if q.WritesPerUpdate != q.QueueMetrics.WritesPerUpdate() || q.WritesPerUpdate != 800 {
		t.Errorf("writes per update %v, want the summed counters' 800", q.WritesPerUpdate)
	}
	if h := run.HotSets; h == nil || *h != (results.HotSets{Requests: 4000, HottestShare: 1, ExpectedHottestShare: 1}) {
		t.Errorf("hot sets %+v, want the verifying consumer's", h)
	}
	if inv := q.FlushedTotal + q.SyncFallbackTotal + q.DroppedTotal + q.RejectedTotal + q.AbandonedTotal; inv != q.EnqueuedTotal {
		t.Errorf("the queue's invariant: %d enqueued, %d accounted for", q.EnqueuedTotal, inv)
	}
	if l := run.Load; l.DurationMs != 3100 || l.IntakeMs != 2500 || l.DrainMs != 600 {
		t.Errorf("window %v ms, intake %v, drain %v: want 3,100 (0 to c2's end at 3.1 s), 2,500, 600", l.DurationMs, l.IntakeMs, l.DrainMs)
	}
	if !run.Verification.Passed || run.Reconciliation == nil || run.Reconciliation.Persisted != 4000 {
		t.Errorf("verification %+v, reconciliation %+v", run.Verification, run.Reconciliation)
	}
	var names []string
	for _, c := range run.Verification.Checks {
		names = append(names, c.Name)
	}
	if want := []string{"producer 0 (p0.json): producer: accepted requests recorded for the consumers",
		"producer 1 (p1.json): producer: accepted requests recorded for the consumers",
		"consumer (c1.json): producers finished (of those registered)",
		"producers finished (of those registered)", "usage rows", "lost"}; !slices.Equal(names, want) {
		t.Errorf("checks\n%q\nwant\n%q", names, want)
	}
	if d := run.Database; d == nil || d.PerRequest.WALBytes != 233 || d.PerRequest.RowVersions != 1.001 || d.PerRequest.Statements != 0.005 {
		t.Errorf("database %+v: want the verifying consumer's, per merged request", d)
	}
	if run.Efficiency == 0 || run.Config.Role != RoleMerged || !run.Config.Verify || run.Config.ExpectProducers != 2 {
		t.Errorf("efficiency %v, config %+v", run.Efficiency, run.Config)
	}

	// It reads back as written.
	var written, again bytes.Buffer
	if err := rep.Write(&written); err != nil {
		t.Fatal(err)
	}
	back, err := results.Read(bytes.NewReader(written.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if err := back.Write(&again); err != nil || !bytes.Equal(written.Bytes(), again.Bytes()) {
		t.Errorf("the merged report reads back differently (%v)", err)
	}
}

func TestMergeRefuses(t *testing.T) {
	l0, l1 := knownLatencies()
	p0, p1 := producer(0, l0, 0, time.Second), producer(1, l1, 0, time.Second)
	c := consumer("c", true, nil, 0, time.Second, 4000)
	with := func(in Input, change func(*results.Report)) Input {
		b := new(bytes.Buffer)
		_ = in.Report.Write(b)
		r, err := results.Read(b)
		if err != nil {
			t.Fatal(err)
		}
		change(r)
		return Input{Path: "x.json", Report: r}
	}
	for name, tc := range map[string]struct {
		in   []Input
		want string
	}{
		"one report":     {[]Input{p0}, "at least two processes"},
		"two suites":     {[]Input{p0, with(p1, func(r *results.Report) { r.Suite = "usage_settlement_hotspot_baseline" })}, "p0.json is a report of usage_counter_hotspot_baseline, x.json of usage_settlement_hotspot_baseline: not one run"},
		"not split":      {[]Input{p0, with(p1, func(r *results.Report) { r.Runs[0].Config.Role = "both" })}, `x.json is not a report of a split run (role "both"`},
		"same producer":  {[]Input{p0, with(p1, func(r *results.Report) { r.Runs[0].Config.ProducerID = 0 })}, "p0.json and x.json are both producer 0"},
		"same consumer":  {[]Input{p0, c, with(c, func(*results.Report) {})}, "c.json and x.json are the same process's report"},
		"no producer":    {[]Input{c, with(c, func(r *results.Report) { r.Environment.PID++ })}, "no producer's report"},
		"other schema":   {[]Input{p0, with(p1, func(r *results.Report) { r.Environment.Schema = "run43" })}, `p0.json ran in schema "run42", x.json in "run43"`},
		"other mode":     {[]Input{p0, with(p1, func(r *results.Report) { r.Runs[0].Mode = "async" })}, "run 0: p0.json ran async-compact, x.json ran async: not one run"},
		"more runs":      {[]Input{p0, with(p1, func(r *results.Report) { r.Runs = append(r.Runs, r.Runs[0]) })}, "p0.json has 1 runs, x.json 2"},
		"other hot keys": {[]Input{p0, c, with(p1, func(r *results.Report) { r.Runs[0].Config.HotKeys = 8 })}, "p0.json has hot_keys 1, x.json has 8"},
		"other warm-up":  {[]Input{p0, with(p1, func(r *results.Report) { r.Runs[0].Config.WarmupMs = 5 })}, "has warmup_ms 0, x.json has 5"},
		"two consumers":  {[]Input{p0, c, with(c, func(r *results.Report) { r.Runs[0].Config.FlushBatchSize = 5; r.Environment.PID++ })}, "c.json has flush_batch_size 1000, x.json has 5"},
		"suite flag":     {[]Input{p0, with(p1, func(r *results.Report) { r.Runs[0].Config.Suite = map[string]any{"api_keys": 3} })}, "has api_keys (absent), x.json has 3"},
		"missing producer": {[]Input{p0, with(c, func(r *results.Report) { r.Runs[0].Config.ExpectProducers = 2 })},
			"x.json waited for 2 producers (--expect-producers), but 1 producer reports were given"},
		"merged already": {[]Input{p0, with(p1, func(r *results.Report) { r.Environment.Merged = true })}, "x.json is a merged report already"},
		"no histogram":   {[]Input{p0, with(p1, func(r *results.Report) { r.Runs[0].Load.LatencyHistogram = "" })}, "latency_histogram: a report has its values but not the histogram behind them"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Merge(tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
	// What only one side's work depends on may differ between the sides, and a producer's
	// share of the load is its own.
	ok := with(c, func(r *results.Report) { r.Runs[0].Config.WarmupMs, r.Runs[0].Config.FlushBatchSize = 7, 200 })
	bigger := with(p1, func(r *results.Report) { r.Runs[0].Config.Requests, r.Runs[0].Config.Concurrency = 3000, 80 })
	if m, err := Merge([]Input{p0, bigger, ok}); err != nil {
		t.Errorf("a consumer with its own --warmup and --flush-batch-size, a producer with its own --requests: %v", err)
	} else if c := m.Report.Runs[0].Config; c.Requests != 5000 || c.Concurrency != 130 {
		t.Errorf("merged config %d × %d, want the producers' sums 5,000 × 130", c.Requests, c.Concurrency)
	}
}

// What PostgreSQL counted is taken from the window that covers the consumers' writes: here a
// producer's, which started before both consumers and ended after them.
func TestMergeDatabaseOfTheWindowCoveringTheWrites(t *testing.T) {
	l0, l1 := knownLatencies()
	early := producer(0, l0, -100*time.Millisecond, 3300*time.Millisecond)
	db := *consumer("x", true, nil, 0, time.Second, 4000).Report.Runs[0].Database
	db.WALBytes *= 2 // told apart from the verifying consumer's
	early.Report.Runs[0].Database = &db
	m, err := Merge([]Input{early, producer(1, l1, 0, 2*time.Second),
		consumer("c1", false, l0[:10], 0, 2900*time.Millisecond, 0), consumer("c2", true, l1[:10], 100*time.Millisecond, 3*time.Second, 4000)})
	if err != nil {
		t.Fatal(err)
	}
	if d := m.Report.Runs[0].Database; d == nil || d.PerRequest.WALBytes != 466 || len(m.Notes) != 0 {
		t.Errorf("database %+v, notes %q: want producer 0's (466 WAL bytes a request), no note", d, m.Notes)
	}
}

// The processes' network probes: each path's round trips merged from the union of their
// histograms, run by run and in the environment, the probes summed; a report that has the
// figures but not the histogram (before version 10) leaves the network out, and says so.
func TestMergedNetworkIsTheUnion(t *testing.T) {
	l0, l1 := knownLatencies() // as round trips: a fast path and one with a slow tail
	h0, enc0 := resultstest.HistOf(l0)
	h1, enc1 := resultstest.HistOf(l1)
	_, encRedis := resultstest.HistOf(l0[:100])
	path := func(h *hist.Histogram, enc string, errs int64) *results.NetworkPath {
		direct := results.Latency(h.Summary())
		return &results.NetworkPath{Proxied: true, ConfiguredRTTMs: 1, RTTMs: results.Latency(h.Summary()), RTTHistogram: enc,
			Probes: h.Count(), ProbeErrors: errs, DirectRTTMs: &direct, DirectRTTHistogram: enc}
	}
	inputs := func() []Input {
		a, b := producer(0, l0, 0, 2*time.Second), producer(1, l1, 0, 2*time.Second)
		a.Report.Runs[0].Network = &results.Network{Postgres: path(h0, enc0, 3)}
		b.Report.Runs[0].Network = &results.Network{Postgres: path(h1, enc1, 0),
			Redis: &results.NetworkPath{RTTMs: results.Latency(h0.Summary()), RTTHistogram: encRedis, Probes: 100}}
		a.Report.Environment.Network, b.Report.Environment.Network = a.Report.Runs[0].Network, b.Report.Runs[0].Network
		return []Input{a, b}
	}
	m, err := Merge(inputs())
	if err != nil {
		t.Fatal(err)
	}
	union, _ := resultstest.HistOf(append(slices.Clone(l0), l1...))
	want := results.Latency(union.Summary())
	for where, n := range map[string]*results.Network{"run": m.Report.Runs[0].Network, "environment": m.Report.Environment.Network} {
		if n == nil || n.Postgres == nil {
			t.Fatalf("%s: no network merged", where)
		}
		pg := n.Postgres
		if pg.RTTMs != want || pg.Probes != 4000 || pg.ProbeErrors != 3 || !pg.Proxied || pg.ConfiguredRTTMs != 1 {
			t.Errorf("%s: postgres %+v, want the union's %+v, 4,000 probes, 3 errors, proxied at 1 ms", where, pg, want)
		}
		if pg.DirectRTTMs == nil || *pg.DirectRTTMs != want || pg.RTTHistogram == "" || pg.DirectRTTHistogram == "" {
			t.Errorf("%s: direct %+v, histograms %t %t", where, pg.DirectRTTMs, pg.RTTHistogram != "", pg.DirectRTTHistogram != "")
		}
		if r := n.Redis; r == nil || r.Probes != 100 || r.Proxied {
			t.Errorf("%s: redis %+v, want the one process's 100 direct probes", where, r)
		}
	}

	// Written before version 10: the figures without the histogram.
	in := inputs()
	in[1].Report.Runs[0].Network.Postgres.RTTHistogram = ""
	if m, err = Merge(in); err != nil {
		t.Fatal(err)
	}
	if n := m.Report.Runs[0].Network; n == nil || n.Postgres != nil || n.Redis == nil {
		t.Errorf("a path without its histogram: %+v, want the PostgreSQL path left out and Redis kept", n)
	}
	if !slices.ContainsFunc(m.Notes, func(s string) bool { return strings.Contains(s, "schema_version 10") }) {
		t.Errorf("notes %q: want one on the histogram missing", m.Notes)
	}

	// One process direct, one through the proxy at 0 ms (the only way they can differ: a
	// configured delay shapes the work, and check refuses processes that differ in it):
	// merged as direct, and said.
	in = inputs()
	in[0].Report.Runs[0].Network.Postgres.Proxied = false
	in[0].Report.Runs[0].Network.Postgres.ConfiguredRTTMs = 0
	in[1].Report.Runs[0].Network.Postgres.ConfiguredRTTMs = 0
	if m, err = Merge(in); err != nil {
		t.Fatal(err)
	}
	if pg := m.Report.Runs[0].Network.Postgres; pg.Proxied || pg.ConfiguredRTTMs != 0 || pg.DirectRTTMs != nil {
		t.Errorf("mixed paths: %+v, want direct", pg)
	}
	if !slices.ContainsFunc(m.Notes, func(s string) bool { return strings.Contains(s, "some directly") }) {
		t.Errorf("notes %q: want one on the mixed paths", m.Notes)
	}
}

// The producers' cold-session requests and the connections their pools opened add up, and the
// cold requests' latency is the union of theirs.
func TestMergedColdSessionsAddUp(t *testing.T) {
	l0, l1 := knownLatencies()
	in := []Input{producer(0, l0, 0, 2*time.Second), producer(1, l1, 0, 2*time.Second)}
	cold := [][]time.Duration{l0[:30], l1[len(l1)-20:]}
	for i, p := range in {
		h, enc := resultstest.HistOf(cold[i])
		lat := results.Latency(h.Summary())
		l := &p.Report.Runs[0].Load
		l.ColdSessionRequests, l.ColdSessionLatencyMs, l.ColdSessionHistogram, l.ConnectionsOpened = int64(len(cold[i])), &lat, enc, int64(10+i)
	}
	m, err := Merge(in)
	if err != nil {
		t.Fatal(err)
	}
	union, _ := resultstest.HistOf(append(slices.Clone(cold[0]), cold[1]...))
	l := m.Report.Runs[0].Load
	if l.ColdSessionRequests != 50 || l.ConnectionsOpened != 21 || l.ColdSessionLatencyMs == nil || *l.ColdSessionLatencyMs != results.Latency(union.Summary()) {
		t.Errorf("merged cold sessions %d, opened %d, latency %+v; want 50, 21 and the union's %+v",
			l.ColdSessionRequests, l.ConnectionsOpened, l.ColdSessionLatencyMs, union.Summary())
	}
}

// TestMergedPoolerIsTheBusiestView: processes that went through one pooler each read it; the
// merged run keeps the largest of their maxima and the totals of the widest window, and the
// server sessions any one of them saw at most.
func TestMergedPoolerIsTheBusiestView(t *testing.T) {
	l0, l1 := knownLatencies()
	in := []Input{producer(0, l0, 0, 2*time.Second), producer(1, l1, 0, 2*time.Second)}
	in[0].Report.Runs[0].Pooler = &results.Pooler{Kind: "pgbouncer", Mode: "transaction", PoolSize: 16, Samples: 10,
		MaxClientsWaiting: 40, MaxWaitMs: 12, MaxServersActive: 16, Transactions: 900, AvgWaitMs: 3}
	in[1].Report.Runs[0].Pooler = &results.Pooler{Kind: "pgbouncer", Mode: "transaction", PoolSize: 16, Samples: 12,
		MaxClientsWaiting: 55, MaxWaitMs: 9, MaxServersActive: 15, Transactions: 1000, AvgWaitMs: 4}
	in[0].Report.Runs[0].Pool.MaxServerSessions, in[1].Report.Runs[0].Pool.MaxServerSessions = 16, 14
	m, err := Merge(in)
	if err != nil {
		t.Fatal(err)
	}
	r := m.Report.Runs[0]
	p := r.Pooler
	if p == nil || p.Samples != 22 || p.MaxClientsWaiting != 55 || p.MaxWaitMs != 12 || p.MaxServersActive != 16 ||
		p.Transactions != 1000 || p.AvgWaitMs != 4 || r.Pool.MaxServerSessions != 16 {
		t.Errorf("merged pooler %+v, server sessions %d", p, r.Pool.MaxServerSessions)
	}
}

// TestMergedLockWaitsOnInnoDB: the longest wait per table, the server's lock waits and the
// blocker with the most waiters are the largest any process's monitor saw.
func TestMergedLockWaitsOnInnoDB(t *testing.T) {
	l0, l1 := knownLatencies()
	in := []Input{producer(0, l0, 0, 2*time.Second), producer(1, l1, 0, 2*time.Second)}
	a, b := &in[0].Report.Runs[0].LockMonitor, &in[1].Report.Runs[0].LockMonitor
	a.MaxLockWaitMsByRelation, b.MaxLockWaitMsByRelation = map[string]float64{"hot": 40, "other": 9}, map[string]float64{"hot": 25}
	a.MaxServerLockWaits, b.MaxServerLockWaits = 30, 41
	a.Blocker, b.Blocker = &results.Blocker{Session: 7, Waiters: 12}, &results.Blocker{Session: 9, Waiters: 20}
	m, err := Merge(in)
	if err != nil {
		t.Fatal(err)
	}
	l := m.Report.Runs[0].LockMonitor
	if w := l.MaxLockWaitMsByRelation; w["hot"] != 40 || w["other"] != 9 || l.MaxServerLockWaits != 41 || l.Blocker == nil || l.Blocker.Session != 9 {
		t.Errorf("merged: longest waits %v, server waits %d, blocker %+v", w, l.MaxServerLockWaits, l.Blocker)
	}
}

package resultstest

import (
	"time"

	"github.com/hotspotkit/hotspotkit/hist"
	"github.com/hotspotkit/hotspotkit/results"
)

// SplitProcess describes one process of a split run (--role): what SplitReport builds its
// report from, with latencies (a producer's) and persist lags (a consumer's) known exactly.
type SplitProcess struct {
	Role       string // producer or consumer
	ProducerID int
	Verify     bool
	Host       string
	PID        int
	// Latencies are a producer's request latencies; Lags a consumer's persist lags; Reads its
	// monitor's timings of a hot row's total.
	Latencies, Lags, Reads []time.Duration
	// From is where its measured window starts after Start; Window how long it lasts, of which
	// the producer's requests take Intake.
	From, Window, Intake time.Duration
	// Total is the run's requests, every producer's (the verifying consumer reconciles them).
	Total int64
}

// HistOf is the histogram of ds, and its encoding in a report.
func HistOf(ds []time.Duration) (*hist.Histogram, string) {
	h := hist.New()
	for _, d := range ds {
		h.Record(d)
	}
	enc, err := h.Encode()
	if err != nil {
		panic(err)
	}
	return h, enc
}

// SplitReport is the report one process of a split run of the counter suite's async-compact
// mode writes, on the Redis backend, in schema "run42".
func SplitReport(p SplitProcess) *results.Report {
	if p.Host == "" {
		p.Host = "vm"
	}
	if p.PID == 0 {
		p.PID = 4000 + p.ProducerID
		if p.Role == "consumer" {
			p.PID = 5000 + len(p.Lags)
		}
	}
	from := Start.Add(p.From)
	lat, latEnc := HistOf(p.Latencies)
	wait, waitEnc := HistOf(nil)
	lag, lagEnc := HistOf(p.Lags)
	n := int64(len(p.Latencies))
	run := results.Run{
		Mode: "async-compact",
		Config: results.RunConfig{Requests: 2000, Concurrency: 64, MaxConnections: 64, HotKeys: 1, MonitorIntervalMs: 100,
			Modes: []string{"async-compact"}, FlushBatchSize: 1000, FlushIntervalMs: 100, QueueCapacity: 65536, QueueWorkers: 2,
			QueueFull: "sync", QueueRetries: 5, QueueRetryBackoffMs: 25, DrainTimeoutMs: 300000, QueueBackend: "redis",
			Redis: "embedded", ReclaimIdleMs: 10000, MaxDeliveries: 5, Role: p.Role, ProducerID: p.ProducerID,
			Verify: p.Verify, ExpectProducers: 1, Schema: "run42"},
		StartedAt: from.Add(-time.Second),
		Load: results.Load{DurationMs: results.Milliseconds(p.Window), IntakeMs: results.Milliseconds(p.Intake),
			DrainMs: results.Milliseconds(p.Window - p.Intake), Concurrency: 64, CompletedRequests: n,
			ErrorCounts: map[string]int64{}, LatencyMs: results.Latency(lat.Summary()), LatencyHistogram: latEnc,
			AcquireWaitMs: results.Latency(wait.Summary()), AcquireWaitHistogram: waitEnc, MeasuredFrom: &from},
		Pool:        results.Pool{MaxConns: 64, MaxAcquired: 2, MaxUsageBasisPoints: 312},
		LockMonitor: results.LockMonitor{Samples: 10, IntervalMs: 100, MaxWaitersByRelation: map[string]int64{"api_keys": 0}},
		Queue: &results.Queue{Backend: "redis", Compaction: true, FullPolicy: "sync",
			QueueMetrics: results.QueueMetrics{Capacity: 65536}, PersistLagMs: results.Latency(lag.Summary()),
			PersistLagHistogram: lagEnc, Stream: &results.Stream{}},
	}
	if len(p.Reads) > 0 {
		reads, enc := HistOf(p.Reads)
		l := results.Latency(reads.Summary())
		run.LockMonitor.TotalReadMs, run.LockMonitor.TotalReadHistogram = &l, enc
	}
	q := run.Queue
	if p.Role == "producer" {
		run.Config.Requests, run.Config.Concurrency = n, 50
		run.Load.Concurrency = 50
		if p.Window > 0 {
			run.Load.ThroughputRPS = float64(n) / p.Window.Seconds()
			run.Load.AcceptRPS = float64(n) / p.Intake.Seconds()
		}
		q.EnqueuedTotal, q.MaxDepth = n, n
		run.Verification = results.Verification{Passed: true, Checks: []results.Check{
			results.Compared("producer: accepted requests recorded for the consumers", n, n, true)}}
	} else {
		m := int64(len(p.Lags))
		q.FlushedTotal, q.FlushBatchesTotal, q.FlushSQLOpsTotal, q.FlushSQLRecordsTotal = m, m/1000+1, 5*(m/1000+1), m/1000+1
		q.CompactedTotal = m - q.FlushSQLRecordsTotal
		q.WritesPerUpdate = q.QueueMetrics.WritesPerUpdate()
		q.Stream.AckedTotal = m
		run.Verification = results.Verification{Passed: true, Checks: []results.Check{
			results.Compared("producers finished (of those registered)", 2, 2, true)}}
		if p.Verify {
			run.Verification.Checks = append(run.Verification.Checks,
				results.Compared("usage rows", p.Total, p.Total, true),
				results.Compared("lost", 0, 0, true))
			run.Reconciliation = &results.Reconciliation{Attempted: p.Total, Acknowledged: p.Total, Persisted: p.Total}
			run.HotSets = &results.HotSets{Requests: p.Total, HottestShare: 1, ExpectedHottestShare: 1}
			run.Database = &results.Database{WALBytes: 233 * p.Total, WALSource: "pg_stat_wal", XactCommit: p.Total / 1000,
				Statements: &results.Statements{Calls: p.Total / 200}, Shared: true,
				Tables:       map[string]results.TableStats{"usage": {Inserted: p.Total}, "api_keys": {Updated: p.Total / 1000, HotUpdated: p.Total / 1000}},
				DatabaseWide: []string{"wal_bytes"}}
		}
	}
	return &results.Report{SchemaVersion: results.SchemaVersion, Suite: Suite, StartedAt: from.Add(-2 * time.Second),
		FinishedAt: from.Add(p.Window + time.Second),
		Environment: results.Environment{GoVersion: "go1.26.0", GOMAXPROCS: 2, NumCPU: 2, OS: "linux", Arch: "amd64",
			Hostname: p.Host, PID: p.PID, MachineClass: "linux-amd64-2cpu-24gib", DatabaseKind: "postgres", DatabaseVersion: "15.18",
			Schema: "run42", Durability: "on", QueueBackend: "redis", GitRevision: "6c155e1", Calibration: Calibration(1)},
		Runs: []results.Run{run}}
}

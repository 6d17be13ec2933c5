// Package suitetest runs a suite in tests the way its binary runs: through cli.Execute,
// with a real report file, against the shared test server of internal/testhelp/testdb. Suites' tests
// use it instead of each writing their own harness:
//
//	func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }
//
//	func TestSomething(t *testing.T) {
//		code, rep, stderr := suitetest.RunShared(t, New(), "--requests", "300", "--modes", "sync")
//		...
//	}
package suitetest

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/hotspotkit/hotspotkit/hist"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/mariadbtest"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/redistest"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/cli"
	"github.com/hotspotkit/hotspotkit/testkit/counters"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/engine"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/load"
	"github.com/hotspotkit/hotspotkit/testkit/servers/pgserver"
	"github.com/hotspotkit/hotspotkit/testkit/servers/redisserver"
	"github.com/hotspotkit/hotspotkit/testkit/servers/serverproc"
)

// TestPoolConns is the load's pool in a test's run (--max-connections) unless its args say
// otherwise. The binaries' 64, opened before each run's window (as pgbench does) and again
// after every restart, would make PostgreSQL's connection set-up the largest single cost of
// CI: a backend's fork, start and exit cost 30-40 ms of CPU on a small virtual machine
// (whatever the authentication or shared memory settings), and a pooled session then reads
// its catalogs and plans its statements before its first request: about 60 ms of the
// server's CPU a connection of a warmed pool in all. Four sessions still queue on a hot row
// (three wait), time out on its lock, fill a queue and lose replies; what 64 or 6,000 do is
// the baselines' question. Four cost less CPU than eight (docs/testing.md).
const TestPoolConns = 4

// PoolFlags set a run's load pool to TestPoolConns.
func PoolFlags() []string { return []string{"--max-connections", strconv.Itoa(TestPoolConns)} }

// Defaults are the flags a test's run starts from (Run's, and a test's that runs a binary):
// no calibration (it costs seconds and measures the machine, not the suite) and PoolFlags.
// Flags given after them override them.
func Defaults() []string { return append([]string{"--calibrate=false"}, PoolFlags()...) }

// Run executes s with args (plus --output) and returns the exit code, the report and stderr.
// A run that writes no report fails the test. It starts from Defaults: no calibration unless
// args ask for it (--calibrate), and a pool of TestPoolConns unless args set --max-connections
// (or --pool-levels).
func Run(t *testing.T, s testkit.Suite, args ...string) (int, *results.Report, string) {
	t.Helper()
	out := filepath.Join(pgserver.StableTempDir(t), "report.json") // servers start beside it
	var stdout, stderr bytes.Buffer
	defaults := Defaults()
	if slices.Contains(args, "--pool-levels") { // a pool ladder sets each run's pool, and refuses --max-connections
		defaults = []string{"--calibrate=false"}
	}
	args = append(defaults, args...)
	code := cli.Execute(s, append(args, "--output", out), &stdout, &stderr)
	rep, err := results.ReadFile(out)
	if err != nil {
		t.Fatalf("exit %d, no report: %v\nstderr:\n%s", code, err, stderr.String())
	}
	return code, rep, stderr.String()
}

// RunShared is Run against the shared test server: Run(t, s, Shared(t, args...)...).
func RunShared(t *testing.T, s testkit.Suite, args ...string) (int, *results.Report, string) {
	t.Helper()
	return Run(t, s, Shared(t, args...)...)
}

// SharedArgs are the arguments RunShared would execute s with (Defaults, the shared server,
// args), for a test that executes the suite itself (to watch it while it runs): without
// Defaults its runs would calibrate, on the binary's pool of 64.
func SharedArgs(t *testing.T, args ...string) []string {
	t.Helper()
	return append(Defaults(), Shared(t, args...)...)
}

// Shared returns the flags that point a run at the shared test server (a schema of its own),
// followed by args.
func Shared(t *testing.T, args ...string) []string {
	t.Helper()
	return append([]string{"--postgres-url", testdb.Server(t).DSN()}, args...)
}

// RunMySQL is Run against the shared test MariaDB of internal/testhelp/mariadbtest (a
// database of the run's own): Run(t, s, SharedMySQL(t, args...)...). The test binary's
// TestMain stops that server (mariadbtest.Stop).
func RunMySQL(t *testing.T, s testkit.Suite, args ...string) (int, *results.Report, string) {
	t.Helper()
	return Run(t, s, SharedMySQL(t, args...)...)
}

// SharedMySQL returns the flags that point a run at the shared test MariaDB, followed by args.
func SharedMySQL(t *testing.T, args ...string) []string {
	t.Helper()
	return append([]string{"--mysql-url", mariadbtest.URL(t)}, args...)
}

// Verified fails the test, naming every failed check and every check not made, unless run r
// passed verification.
func Verified(t *testing.T, r results.Run) {
	t.Helper()
	if r.Verification.Passed {
		return
	}
	for _, c := range r.Verification.Checks {
		switch c.State {
		case results.CheckFailed:
			t.Errorf("%s: %s: expected %v, got %v", r.Mode, c.Name, c.Expected, c.Actual)
		case results.CheckNotChecked:
			t.Errorf("%s: %s: not checked: %s", r.Mode, c.Name, c.Reason)
		}
	}
	if u := r.Verification.Unverified; u != nil {
		t.Errorf("%s: unverified: %s", r.Mode, u.Reason)
	}
	t.Errorf("%s: verification failed", r.Mode)
}

// Completed fails the test unless every one of the run's requests completed.
func Completed(t *testing.T, r results.Run, requests int64) {
	t.Helper()
	if r.Load.CompletedRequests != requests || r.Load.FailedRequests != 0 {
		t.Errorf("%s: completed %d, failed %d (%v); want all %d completed", r.Mode,
			r.Load.CompletedRequests, r.Load.FailedRequests, r.Load.ErrorCounts, requests)
	}
}

// NoWaitersOn fails the test for each of tables that a lock waiter was attributed to.
func NoWaitersOn(t *testing.T, r results.Run, tables []string) {
	t.Helper()
	waitersAtMost(t, r, tables, 0, "")
}

// waitersAtMost fails the test for each of tables on which more than most sessions waited at
// once; why says what most is.
func waitersAtMost(t *testing.T, r results.Run, tables []string, most int64, why string) {
	t.Helper()
	for _, table := range tables {
		if n := r.LockMonitor.MaxWaitersByRelation[table]; n > most {
			t.Errorf("%s: %d waiters on hot table %s%s", r.Mode, n, table, why)
		}
	}
}

// FlushersOnlyOn fails the test for each of tables on which more sessions waited at once than
// the queue has workers: a queue's hot-row writes are its flushers', so the requests never wait
// there, but two workers' batches of the same hot row, or a pipelined worker's next batch
// (Options.Pipeline) behind its own commit, can wait for each other, one per worker at most.
func FlushersOnlyOn(t *testing.T, r results.Run, tables []string) {
	t.Helper()
	waitersAtMost(t, r, tables, int64(r.Config.QueueWorkers), fmt.Sprintf(", more than its %d queue workers", r.Config.QueueWorkers))
}

// Compacted fails the test unless the run's queue took records, wrote them all, folded some
// together and sent fewer statements than it wrote records.
func Compacted(t *testing.T, r results.Run, records int64) {
	t.Helper()
	q := r.Queue
	if q == nil || q.EnqueuedTotal != records || q.FlushedTotal+q.SyncFallbackTotal != records ||
		q.CompactedTotal == 0 || q.FlushSQLOpsTotal >= q.FlushedTotal || q.PendingDepth != 0 {
		t.Errorf("%s: queue did not compact %d records: %+v", r.Mode, records, q)
	}
}

// CheckPassed reports whether the run has a check named name that passed with actual value.
func CheckPassed(r results.Run, name string, actual float64) bool {
	for _, c := range r.Verification.Checks {
		if c.Name == name {
			return c.State == results.CheckPassed && c.Actual == actual
		}
	}
	return false
}

// HotKeysSpread runs s on the shared server in modes with its hot rows spread over seven sets
// (--hot-keys 7; 1000 requests, 50 workers) and fails the test unless every run passed check,
// the suite's per-set check, for all seven sets.
func HotKeysSpread(t *testing.T, s testkit.Suite, modes, check string) {
	t.Helper()
	code, rep, stderr := RunShared(t, s, "--requests", "1000", "--concurrency", "50", "--hot-keys", "7", "--modes", modes)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, r := range rep.Runs {
		if !CheckPassed(r, check, 7) {
			t.Errorf("%s: per-set check %q missing or failed: %+v", r.Mode, check, r.Verification.Checks)
		}
	}
}

// SkewTolerance is how far the hottest hot set's share of SkewedRequests zipfian requests
// may be from the distribution's (HotKeysSkewed). Over SkewedHotKeys sets at θ = 0.99 the
// hottest set's share is about 0.19: the share of 2,000 independent draws has a standard
// deviation of √(0.19 × 0.81 / 2,000) ≈ 0.009, so 0.05 is more than five of them, whatever the
// seed; and the runner-up (about 0.096) would have to outdraw it by more still.
const (
	SkewTolerance  = 0.05
	SkewedRequests = 2000
	SkewedHotKeys  = 100
)

// HotKeysSkewed runs s, a suite with hot sets (testkit.Info.HotSets), on the shared server in
// every mode it has with SkewedRequests requests over SkewedHotKeys sets drawn zipfian at YCSB's
// θ = 0.99, and fails the test unless every run completed all its requests and verified, its
// config records the distribution, and its hottest set took the distribution's share within
// SkewTolerance (far from uniform's 1%). It returns the report.
func HotKeysSkewed(t *testing.T, s testkit.Suite) *results.Report {
	t.Helper()
	modes := s.Info().Modes
	code, rep, stderr := RunShared(t, s, "--requests", strconv.Itoa(SkewedRequests), "--concurrency", "50",
		"--hot-keys", strconv.Itoa(SkewedHotKeys), "--hot-key-dist", "zipf:0.99", "--modes", strings.Join(testkit.ModeNames(modes), ","))
	if code != 0 || len(rep.Runs) != len(modes) {
		t.Fatalf("exit %d, %d runs (want %d)\n%s", code, len(rep.Runs), len(modes), stderr)
	}
	for _, r := range rep.Runs {
		Verified(t, r)
		Completed(t, r, SkewedRequests)
		h := r.HotSets
		switch {
		case r.Config.HotKeyDist != "zipf:0.99":
			t.Errorf("%s: config records hot_key_dist %q", r.Mode, r.Config.HotKeyDist)
		case h == nil || h.Requests != SkewedRequests:
			t.Errorf("%s: hot sets %+v, want the spread of all %d requests", r.Mode, h, SkewedRequests)
		case h.ExpectedHottestShare < 0.15 || h.ExpectedHottestShare > 0.25 || math.Abs(h.HottestShare-h.ExpectedHottestShare) > SkewTolerance:
			t.Errorf("%s: the hottest set took %.4f of the writes, the distribution gives it %.4f (tolerance %g)",
				r.Mode, h.HottestShare, h.ExpectedHottestShare, SkewTolerance)
		}
	}
	return rep
}

// BrokenExpectations runs s with args and --debug-break-expectations (one mode) and fails the
// test unless the binary would exit 1 with that run's verification failed. It returns the
// report for the suite's own checks.
func BrokenExpectations(t *testing.T, s testkit.Suite, args ...string) *results.Report {
	t.Helper()
	code, rep, stderr := Run(t, s, append(args, "--debug-break-expectations")...)
	if code != 1 {
		t.Fatalf("exit %d with broken expectations, want 1\n%s", code, stderr)
	}
	if len(rep.Runs) != 1 || rep.Runs[0].Verification.Passed {
		t.Fatalf("verification should have failed: %+v", rep.Runs)
	}
	return rep
}

// HotSpotContract runs s in every mode it has on the shared server, with concurrency workers
// on one set of hot rows, and checks what every hot-spot suite promises: each run verifies
// with all requests completed; sync has lock waiters on at least one of syncHot; a mode whose
// flush loop applies what the requests wrote (an outbox) has none on any hot table, and
// async-compact no more than its flushers (FlushersOnlyOn) and folds its records
// (recordsPerRequest per request); a suite that reconciles (testkit.Reconciler) finds every
// request persisted once. It returns the report for the suite's own checks.
func HotSpotContract(t *testing.T, s testkit.Suite, requests, recordsPerRequest int64, concurrency int, syncHot ...string) *results.Report {
	t.Helper()
	modes := s.Info().Modes
	code, rep, stderr := RunShared(t, s, "--requests", strconv.FormatInt(requests, 10),
		"--concurrency", strconv.Itoa(concurrency), "--modes", strings.Join(testkit.ModeNames(modes), ","),
		"--monitor-interval-ms", "20")
	if code != 0 || len(rep.Runs) != len(modes) {
		t.Fatalf("exit %d, %d runs (want %d)\n%s", code, len(rep.Runs), len(modes), stderr)
	}
	hot := s.Info().HotTables
	_, reconciles := s.(testkit.Reconciler)
	for _, r := range rep.Runs {
		Verified(t, r)
		Completed(t, r, requests)
		if rc := r.Reconciliation; reconciles && (rc == nil || rc.Persisted != requests || rc.Lost != 0 || rc.Duplicated != 0) {
			t.Errorf("%s: reconciliation %+v", r.Mode, rc)
		}
		switch m := modeOf(s, r); {
		case m == testkit.Sync:
			var waiters int64
			for _, table := range syncHot {
				waiters += r.LockMonitor.MaxWaitersByRelation[table]
			}
			if waiters == 0 {
				t.Errorf("sync: no waiters on %v with %d workers on one set of hot rows: %+v", syncHot, concurrency, r.LockMonitor)
			}
			RequestTimed(t, r)
		case m.Flushes() && !m.Async():
			NoWaitersOn(t, r, hot)
		case m == testkit.AsyncCompact:
			FlushersOnlyOn(t, r, hot)
			Compacted(t, r, recordsPerRequest*requests)
		}
	}
	return rep
}

// RequestTimed checks a run whose requests write in their own transactions for where their
// time went (results.RequestTime): a BEGIN and a COMMIT per request at least, the client's time
// in statements within the requests' latency, and, with pg_stat_statements, the server's within
// the client's.
func RequestTimed(t *testing.T, r results.Run) {
	t.Helper()
	rt := r.RequestTime
	if rt == nil {
		t.Errorf("%s: no request time", r.Mode)
		return
	}
	per := map[string]float64{}
	for _, s := range rt.Statements {
		per[s.Query] += s.PerRequest
	}
	if per["begin"] < 1 || per["commit"] < 1 {
		t.Errorf("%s: %v begin and %v commit per request, want ≥ 1 each: %+v", r.Mode, per["begin"], per["commit"], rt.Statements)
	}
	if rt.StatementsMeanMs <= 0 || rt.StatementsMeanMs > rt.LatencyMeanMs*1.05+0.01 {
		t.Errorf("%s: %v ms in statements per request, against a latency of %v ms", r.Mode, rt.StatementsMeanMs, rt.LatencyMeanMs)
	}
	if d := r.Database; d != nil && d.Statements != nil && (rt.ServerMeanMs <= 0 || rt.ServerMeanMs > rt.StatementsMeanMs*1.05+0.01) {
		t.Errorf("%s: %v ms in the server per request, against %v ms on the client", r.Mode, rt.ServerMeanMs, rt.StatementsMeanMs)
	}
}

// modeOf is the suite's mode that run r ran in (the zero Mode if the suite has none of that name).
func modeOf(s testkit.Suite, r results.Run) testkit.Mode {
	modes := s.Info().Modes
	if i := slices.IndexFunc(modes, func(m testkit.Mode) bool { return m.String() == r.Mode }); i >= 0 {
		return modes[i]
	}
	return testkit.Mode{}
}

// Output collects what an invocation writes (its stderr) so that a test can read it while the
// invocation still runs.
type Output struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.Write(p)
}

// String is everything written so far.
func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}

// RedisModes are the ways a run reaches Redis that OnEveryRedis covers: miniredis in the
// process, a redis-server the run starts itself, one the test started, given by --redis-url,
// and a Redis Cluster the run starts itself (3 masters, the queue on 3 stream shards).
var RedisModes = []string{"embedded", "managed", "url", "cluster"}

// OnRedis runs s's async modes (plus args) on the Redis-streams backend, on a redis-server
// the run starts itself (--redis managed) and on a Redis Cluster it starts (--redis cluster,
// --stream-shards 3), with requests requests enqueuing records records
// in all, and fails the test unless every run verified with every request completed, every
// record enqueued was written and acknowledged, the stream was left empty, and async-compact
// folded records. It also fails if the run leaves a redis-server behind. It is what every
// suite proves of its records on Redis (they travel through a real stream, by the suite's
// codec); how a run reaches Redis is the engine's, proven once by OnEveryRedis.
func OnRedis(t *testing.T, s testkit.Suite, requests, records int64, args ...string) {
	t.Helper()
	onRedis(t, s, []string{"managed", "cluster"}, requests, records, args...)
}

// OnEveryRedis is OnRedis once per entry of RedisModes, each a subtest.
func OnEveryRedis(t *testing.T, s testkit.Suite, requests, records int64, args ...string) {
	t.Helper()
	onRedis(t, s, RedisModes, requests, records, args...)
}

func onRedis(t *testing.T, s testkit.Suite, servers []string, requests, records int64, args ...string) {
	t.Helper()
	EachRedis(t, servers, func(t *testing.T, server string, where []string) *results.Report {
		run := append([]string{"--requests", strconv.FormatInt(requests, 10), "--concurrency", "100",
			"--modes", "async,async-compact", "--queue-backend", "redis"}, append(where, args...)...)
		code, rep, stderr := RunShared(t, s, run...)
		if code != 0 || len(rep.Runs) != 2 {
			t.Fatalf("exit %d, %d runs (want 2)\n%s", code, len(rep.Runs), stderr)
		}
		if rep.Environment.QueueBackend != "redis" || rep.Environment.RedisMode != server || rep.Environment.RedisVersion == "" {
			t.Errorf("environment: backend %q mode %q (want %s) version %q", rep.Environment.QueueBackend,
				rep.Environment.RedisMode, server, rep.Environment.RedisVersion)
		}
		for _, r := range rep.Runs {
			Verified(t, r)
			Completed(t, r, requests)
			q := r.Queue
			if q == nil || q.Backend != "redis" || q.Stream == nil {
				t.Fatalf("%s: no Redis queue in the report: %+v", r.Mode, q)
			}
			switch {
			case q.EnqueuedTotal != records || q.Stream.Length != 0 || q.PendingDepth != 0:
				t.Errorf("%s: %d records: queue %+v stream %+v", r.Mode, records, q.QueueMetrics, *q.Stream)
			case q.Stream.RedeliveredTotal > 0:
				// A shard's lease ran out on a busy machine and another consumer took it
				// over: entries were delivered again (the database checks above found
				// nothing applied twice), and the flush counters count them twice.
				t.Logf("%s: %d entries redelivered after a takeover: queue %+v stream %+v", r.Mode, q.Stream.RedeliveredTotal, q.QueueMetrics, *q.Stream)
			case q.FlushedTotal+q.SyncFallbackTotal != records || q.Stream.AckedTotal != records || q.PersistLagMs.Count != records:
				t.Errorf("%s: %d records: queue %+v stream %+v", r.Mode, records, q.QueueMetrics, *q.Stream)
			}
			if r.Mode == testkit.AsyncCompact.String() {
				Compacted(t, r, records)
			}
		}
		return rep
	})
}

// EachRedis calls run once per entry of servers (names of RedisModes), each a subtest, with
// the flags that reach that Redis (for "url" a redis-server the test starts, for "cluster"
// the queue on 3 stream shards), and fails the subtest unless the report run returns says
// it ran on that topology (a cluster: 3 masters, 3 shards) and no redis-server the run
// started is left behind. It needs redis-server installed (redistest.Need).
func EachRedis(t *testing.T, servers []string, run func(t *testing.T, server string, where []string) *results.Report) {
	t.Helper()
	redistest.Need(t)
	for _, server := range servers {
		t.Run(server, func(t *testing.T) {
			ours := 0 // the --redis-url server, started by the test
			where := []string{"--redis", server}
			if server == "url" {
				srv := redistest.Start(t, redisserver.Config{TempDir: pgserver.StableTempDir(t)})
				ours = srv.PID()
				where = []string{"--redis-url", srv.URL()}
			}
			if server == "cluster" {
				where = append(where, "--stream-shards", "3")
			}
			rep := run(t, server, where)
			if topo := rep.Environment.RedisTopology; topo == nil || topo.Cluster != (server == "cluster") || server == "cluster" && (topo.Masters != 3 || topo.StreamShards != 3) {
				t.Errorf("environment: Redis topology %+v", topo)
			}
			for pid := range RedisServers(os.Getpid()) {
				if pid != ours {
					t.Errorf("redis-server %d still running after the run", pid)
				}
			}
		})
	}
}

// RedisServers lists the running redis-server processes (zombies waiting to be reaped left
// out): all of them when parent is 0, else those whose parent process is parent.
func RedisServers(parent int) map[int]bool { return Processes("redis-server", parent) }

// Processes are the live processes whose command line holds what (not zombies), with parent
// as their parent process (0: any), by pid.
func Processes(what string, parent int) map[int]bool {
	out := map[int]bool{}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		cmdline, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil || !strings.Contains(string(cmdline), what) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(d))
		fields, ok := serverproc.Stat(pid) // state, ppid, …
		if !ok || len(fields) < 2 || fields[0] == "Z" || (parent != 0 && fields[1] != strconv.Itoa(parent)) {
			continue
		}
		out[pid] = true
	}
	return out
}

// Fired reports whether the run's fault of kind struck (it was injected without error).
func Fired(r results.Run, kind string) bool {
	for _, f := range r.Faults {
		if f.Kind == kind && f.Error == "" {
			return true
		}
	}
	return false
}

// Exact fails the test unless the run verified, its reconciliation found nothing lost,
// nothing applied twice and no failed request persisted, every failed request was counted
// under an error class, and its queue (if any) wrote or accounted for every record it took.
func Exact(t *testing.T, r results.Run) {
	t.Helper()
	Verified(t, r)
	if rc := r.Reconciliation; rc == nil || rc.Lost != 0 || rc.Duplicated != 0 || rc.FailedButPersisted != 0 {
		t.Errorf("%s: reconciliation %+v", r.Mode, rc)
	}
	var counted int64
	for _, n := range r.Load.ErrorCounts {
		counted += n
	}
	if counted != r.Load.FailedRequests {
		t.Errorf("%s: failures not counted by class: %d failed, classes %v", r.Mode, r.Load.FailedRequests, r.Load.ErrorCounts)
	}
	// Every record the queue accepted (offered and not rejected) was written, and none it was
	// not offered. Between the two: an enqueue whose reply was lost (a reset connection to
	// Redis) is counted rejected by the producer and may still have reached the stream, and
	// then it is flushed as well; the reconciliation above says whether its request was
	// counted right.
	if q := r.Queue; q != nil && (q.PendingDepth != 0 || q.AbandonedTotal != 0 ||
		q.FlushedTotal+q.SyncFallbackTotal+q.DroppedTotal < q.EnqueuedTotal-q.RejectedTotal ||
		q.FlushedTotal+q.SyncFallbackTotal+q.DroppedTotal > q.EnqueuedTotal) {
		t.Errorf("%s: the queue did not persist everything it accepted: %+v", r.Mode, q.QueueMetrics)
	}
}

// faultCase is one invocation of a fault table: its flags, the fault that must strike (""
// for none) and what it must show beyond Exact.
type faultCase struct {
	name, fault string
	args        []string
	check       func(t *testing.T, r results.Run)
}

// runFaultCases runs each case as a subtest and fails it unless the invocation exits 0 with
// every run exact and struck by its fault. The cases run one after the other: a fault on the
// shared server strikes the sessions of every run on it, and temporary servers started at
// once in one process have been seen to lose their data directory.
func runFaultCases(t *testing.T, s testkit.Suite, cases []faultCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, rep, stderr := Run(t, s, c.args...)
			if len(rep.Runs) == 0 {
				t.Fatalf("exit %d, no runs\n%s", code, stderr)
			}
			for _, r := range rep.Runs {
				if c.fault != "" && !Fired(r, c.fault) {
					t.Errorf("%s: fault %s did not strike during the load: %+v", r.Mode, c.fault, r.Faults)
				}
				Exact(t, r)
				if c.check != nil {
					c.check(t, r)
				}
			}
			if code != 0 {
				t.Errorf("exit %d\n%s", code, stderr)
			}
		})
	}
}

// LostCommits runs s in modes (comma-separated: its modes that write per request, in one
// transaction) with requests and concurrency workers on the shared server, the reply of
// every 7th request's first COMMIT lost (--debug-lose-commit-every: the outcome is unknown
// although the commit went through), and fails the test unless every run is exact (Exact):
//   - with one try, those requests are looked up (the suite's Reconciler) and found
//     persisted once;
//   - with three, the retry finds the request written and applies nothing twice.
//
// It is what every suite's own write path must prove under an unknown outcome; what the
// engine does when connections and servers die is AtomicUnderFaults', proven once.
func LostCommits(t *testing.T, s testkit.Suite, modes string, requests, concurrency int) {
	t.Helper()
	flags := Shared(t, "--modes", modes, "--requests", strconv.Itoa(requests), "--concurrency", strconv.Itoa(concurrency),
		"--debug-lose-commit-every", "7")
	lost := int64((requests + 6) / 7)
	runFaultCases(t, s, []faultCase{
		{"lost COMMIT replies, one try", "", append(slices.Clone(flags), "--max-tries", "1"), func(t *testing.T, r results.Run) {
			if rc := r.Reconciliation; rc == nil || rc.UnknownPersisted != lost || rc.OutcomeUnknown != lost {
				t.Errorf("%s: want %d requests of unknown outcome, all found persisted: %+v", r.Mode, lost, rc)
			}
		}},
		{"lost COMMIT replies, retried", "", append(slices.Clone(flags), "--max-tries", "3"), func(t *testing.T, r results.Run) {
			Completed(t, r, int64(requests))
			if rt := r.Load.Retries; rt == nil || rt.RetriesByClass[load.ClassUnknownOutcome] != lost {
				t.Errorf("%s: want %d retries after an unknown outcome: %+v", r.Mode, lost, rt)
			}
		}},
	})
}

// AtomicUnderFaults runs s in modes (comma-separated) with requests and concurrency workers
// under faults that kill connections in the middle of requests, and fails the test unless
// every request is all there or not at all, and counted once (Exact):
//   - restart-postgres, one try per request (a server of its own), open loop at 300/s for
//     5 s with the restart at 1 s: requests fail, none of them is found persisted, every
//     counter is exact;
//   - restart-postgres with --max-tries 30: every request completes, some after retries;
//   - terminate-backends four times (every 50 ms, while commits are in flight) with
//     --max-tries 5: requests whose session died are retried, none applied twice;
//   - crash-postgres (no shutdown checkpoint, crash recovery) in sync and async-compact, one
//     try, for 5 s: committed requests are all there after the recovery, requests in flight
//     failed or were looked up, nothing applied twice;
//   - terminate-backends four times in async-compact with a queue far smaller than the
//     requests in flight (--queue-capacity 16, --queue-full sync, batches of 16: a fast suite's requests
//     otherwise all fit the one batch in hand), one try: most requests
//     write their records inline, some of those writes are killed, and a request that failed
//     left none of its records behind, queued or written (a request's records are enqueued
//     as one unit).
//
// These are the engine's (its retries, faults, reconciliation and queue) more than a suite's:
// a suite's own part, its commit being looked up, is LostCommits.
func AtomicUnderFaults(t *testing.T, s testkit.Suite, modes string, requests, concurrency int) {
	t.Helper()
	size := []string{"--requests", strconv.Itoa(requests), "--concurrency", strconv.Itoa(concurrency)}
	flags := append([]string{"--modes", modes}, size...)
	// A server fault under an open loop for 5 s, one try a request (the default): requests keep
	// arriving after the server is back, whatever the fault's requests cost.
	openLoop := func(modes, rate, fault string) []string {
		return []string{"--modes", modes, "--requests", "0", "--duration", "5s", "--concurrency", strconv.Itoa(concurrency),
			"--rate", rate, "--fault", fault}
	}
	terminateFaults := []string{"--fault", "terminate-backends@50ms", "--fault", "terminate-backends@100ms",
		"--fault", "terminate-backends@150ms", "--fault", "terminate-backends@200ms"}
	terminate := Shared(t, slices.Concat(flags, []string{"--max-tries", "5"}, terminateFaults)...)
	// The inline case must catch a write in flight: on a loaded machine the four faults of the
	// first 200 ms can fail no request, so three more follow at 0.4, 0.8 and 1.6 s.
	inline := Shared(t, slices.Concat([]string{"--modes", "async-compact"}, size, []string{"--max-tries", "1",
		"--queue-capacity", "16", "--queue-workers", "1", "--flush-batch-size", "16", "--queue-full", "sync"}, terminateFaults,
		[]string{"--fault", "terminate-backends@400ms", "--fault", "terminate-backends@800ms", "--fault", "terminate-backends@1600ms"})...)
	runFaultCases(t, s, []faultCase{
		// Open loop for 5 s with the restart at 1 s: closed loop, the outbox mode's requests,
		// each failing at once on the server that is down, can all be spent before it is back,
		// and none complete (its verification requires some).
		{"restart-postgres, one try", "restart-postgres", openLoop(modes, "300", "restart-postgres@1s"), func(t *testing.T, r results.Run) {
			if r.Load.FailedRequests == 0 {
				t.Errorf("%s: no request failed while the server restarted", r.Mode)
			}
		}},
		{"restart-postgres, retried", "restart-postgres", slices.Concat(flags, []string{"--max-tries", "30", "--retry-backoff-ms", "20", "--fault", "restart-postgres@150ms"}), func(t *testing.T, r results.Run) {
			Completed(t, r, int64(requests))
			if rt := r.Load.Retries; rt == nil || rt.RetriedRequests == 0 || len(rt.RetriesByClass) == 0 {
				t.Errorf("%s: no retries reported: %+v", r.Mode, rt)
			}
		}},
		{"terminate-backends, retried", "terminate-backends", terminate, nil},
		{"terminate-backends, queue full, written inline, one try", "terminate-backends", inline, func(t *testing.T, r results.Run) {
			if q := r.Queue; q == nil || q.SyncFallbackTotal == 0 || r.Load.FailedRequests == 0 {
				t.Errorf("%s: want records written inline and requests failed by the faults: %+v, %d failed", r.Mode, q, r.Load.FailedRequests)
			}
		}},
		// 2 s before the crash and 3 s after it: on a loaded machine a sync run with 1 s before and
		// 2 s after can complete no request at all (its verification requires some). Open loop
		// at 400 requests a second: writes are in flight when the server dies, without two
		// modes' 5 s flat out.
		{"crash-postgres, one try", "crash-postgres", openLoop("sync,async-compact", "400", "crash-postgres@2s"), nil},
	})
}

// SlottedOverNetwork runs s, a suite whose hot rows can be split into slots (Info.Slots), in
// every mode with requests and concurrency workers on --slots 4 (slots picked by a hash of
// the request id) and a 1 ms round trip added to the service's connections (--db-rtt 1ms),
// and fails the test unless every run is exact (each logical total, summed over its slots, is
// the expected total; nothing lost or applied twice), every logical row has exactly its
// slots, and the run measured the round trip through the proxy (OverNetwork's check). A
// counter suite's conformance runs it: one invocation of every mode for both.
func SlottedOverNetwork(t *testing.T, s testkit.Suite, requests, concurrency int) {
	t.Helper()
	slotted(t, s, requests, concurrency, []slotCase{{"hash, 1 ms round trip", "", 4, []string{"--slots", "4", "--db-rtt", "1ms"}, overNetwork}})
}

// SlottedUnderFaults is SlottedOverNetwork's slot checks (without the added round trip)
// under the faults a slot pick must survive, each a subtest:
//   - --slots 3 --slot-pick session under terminate-backends (four times; a retry, on another
//     session, writes another slot; a replacement session takes its predecessor's seat), with
//     --max-tries 30 as for restart-postgres: each termination leaves the pool's idle
//     connections dead, and a retry that draws one spends a try on it (with 5, a request of
//     the outbox mode, the fastest, used them all up in about half of the runs), and
//   - --slots 4 --slot-pick random with the reply of every 7th request's first COMMIT lost
//     (--max-tries 3): the faults LostCommits puts unslotted rows through.
//
// The slots are package counters' (the same code for every counter suite): it runs once.
func SlottedUnderFaults(t *testing.T, s testkit.Suite, requests, concurrency int) {
	t.Helper()
	slotted(t, s, requests, concurrency, []slotCase{
		{"session, terminate-backends", "terminate-backends", 3, []string{"--slots", "3", "--slot-pick", "session", "--max-tries", "30", "--retry-backoff-ms", "20",
			"--fault", "terminate-backends@20ms", "--fault", "terminate-backends@40ms",
			"--fault", "terminate-backends@60ms", "--fault", "terminate-backends@80ms"}, nil},
		{"lost COMMIT replies, random", "", 4, []string{"--slots", "4", "--slot-pick", "random",
			"--max-tries", "3", "--debug-lose-commit-every", "7"}, nil},
	})
}

// slotCase is one invocation of slotted: its flags, the fault that must strike the modes
// that write directly ("" for none), the slots every logical row must have, and what each
// run must show beyond that (nil: nothing).
type slotCase struct {
	name, fault string
	slots       int
	args        []string
	check       func(t *testing.T, r results.Run)
}

func slotted(t *testing.T, s testkit.Suite, requests, concurrency int, cases []slotCase) {
	t.Helper()
	modes := s.Info().Modes
	flags := []string{"--modes", strings.Join(testkit.ModeNames(modes), ","), "--requests", strconv.Itoa(requests),
		"--concurrency", strconv.Itoa(concurrency)}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, rep, stderr := RunShared(t, s, slices.Concat(flags, c.args)...)
			if code != 0 || len(rep.Runs) != len(modes) {
				t.Fatalf("exit %d, %d runs\n%s", code, len(rep.Runs), stderr)
			}
			suffix := fmt.Sprintf("with %d slots each", c.slots)
			for _, r := range rep.Runs {
				// A queue mode's load is the enqueue, over in a few ms at this size: a fault may
				// come after it (the run is still checked exact); the direct-write modes must
				// have been struck.
				if c.fault != "" && !modeOf(s, r).Async() && !Fired(r, c.fault) {
					t.Errorf("%s: fault %s did not strike during the load: %+v", r.Mode, c.fault, r.Faults)
				}
				Exact(t, r)
				Completed(t, r, int64(requests))
				if r.Config.Slots != c.slots {
					t.Errorf("%s: report says %d slots, want %d", r.Mode, r.Config.Slots, c.slots)
				}
				slotChecks := 0
				for _, ch := range r.Verification.Checks {
					if strings.HasSuffix(ch.Name, suffix) {
						slotChecks++
					}
				}
				if slotChecks == 0 {
					t.Errorf("%s: no check of the slot layout (%q): %+v", r.Mode, suffix, r.Verification.Checks)
				}
				if c.check != nil {
					c.check(t, r)
				}
			}
		})
	}
}

// CounterSuite is a suite declared on package counters (*counters.Suite, or a type that
// embeds one): what Replayed writes through.
type CounterSuite interface {
	testkit.Suite
	testkit.Reconciler
	Records(r *testkit.Run, tx sqldb.Tx, i int64) []counters.Record
	Writer(r *testkit.Run, compact bool) testkit.TxWriter[counters.Record]
}

// CounterConformance is what every counter suite (package counters) proves of its own write
// path, each a subtest at the sizes they all share: a lost COMMIT reply in sync and outbox
// looked up and never applied twice (LostCommits), a batch delivered again applied once
// (Replayed), and every mode exact on slotted rows over a 1 ms network (SlottedOverNetwork).
// A suite's tests call it once beside its own.
func CounterConformance(t *testing.T, s CounterSuite) {
	t.Helper()
	t.Run("lost commits", func(t *testing.T) { LostCommits(t, s, "sync,outbox", 350, 50) })
	t.Run("replayed batches", func(t *testing.T) { Replayed(t, s, 3, 300) })
	t.Run("slotted over a 1 ms network", func(t *testing.T) { SlottedOverNetwork(t, s, 300, 30) })
}

// Replayed writes requests of s through its async writer, compacted and not, the ways a queue
// delivers a batch more than once, on hotKeys hot sets of a fresh schema: a batch of requests
// 0..n-1, the same batch again (retried after a COMMIT whose outcome was unknown but had
// committed), every 7th request's records alone (the queue's fallback, record by record),
// then a batch of n/2..n+n/2-1 (overlapping: half of it is new). It fails the test unless
// the suite's own Verify passes with each of the n+n/2 requests applied once and Persisted
// finds each once: every record applied once, however often it was delivered. It is the
// batch replay every counter suite's claim step must survive, without a run: a replay the
// engine's faults cause (terminate-backends, kill-flusher) comes when it comes.
func Replayed(t *testing.T, s CounterSuite, hotKeys int, n int64) {
	t.Helper()
	total := n + n/2
	for _, compact := range []bool{false, true} {
		t.Run(map[bool]string{false: "uncompacted", true: "compacted"}[compact], func(t *testing.T) {
			ctx := t.Context()
			r := Seeded(t, s, hotKeys, total)
			write := func(from, to, step int64, compact bool) {
				t.Helper()
				var recs []counters.Record
				for i := from; i < to; i += step {
					recs = append(recs, s.Records(r, nil, i)...)
				}
				if compact {
					recs = queue.Compact(recs, func(rec counters.Record) counters.Key { return rec.Key }, (*counters.Record).Merge, counters.CompareKeys)
				}
				if err := sqldb.BeginFunc(ctx, r.Admin(), func(tx sqldb.Tx) error {
					_, err := s.Writer(r, compact).WriteBatch(ctx, tx, recs)
					return err
				}); err != nil {
					t.Fatalf("writing requests %d..%d: %v", from, to-1, err)
				}
			}
			write(0, n, 1, compact)
			write(0, n, 1, compact) // the retried batch
			for i := int64(0); i < n; i += 7 {
				write(i, i+1, 1, false) // the fallback, record by record
			}
			write(n/2, total, 1, compact) // overlapping: only n.. are new
			checks, err := s.Verify(ctx, r, applied(total))
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range checks {
				if c.State != results.CheckPassed {
					t.Errorf("check %q %s: expected %v, got %v %s", c.Name, c.State, c.Expected, c.Actual, c.Reason)
				}
			}
			counts, err := s.Persisted(ctx, r, total)
			if err != nil {
				t.Fatal(err)
			}
			for i, c := range counts {
				if c != 1 {
					t.Errorf("request %d persisted %d times, want once", i, c)
				}
			}
		})
	}
}

// applied is a testkit.Result in which requests 0..n-1 all applied.
type applied int64

func (a applied) Len() int64         { return int64(a) }
func (a applied) Applied(int64) bool { return true }

// Alive reports whether process pid runs (a zombie waiting to be reaped does not), for tests
// that check a run left no server behind.
func Alive(pid int) bool { return serverproc.Alive(pid) }

// Seeded opens a fresh schema with s's tables on the shared test server and seeds it as the
// first sync run of an invocation with --hot-keys hotKeys and --requests requests would, and
// returns that run: for a test that drives the suite's own write path on it directly.
func Seeded(t *testing.T, s testkit.Suite, hotKeys int, requests int64) *testkit.Run {
	t.Helper()
	r := engine.Standalone{Mode: testkit.Sync, Config: testkit.Config{Requests: requests, HotKeys: hotKeys}, Requests: requests}.
		Run(t.Context(), testdb.New(t, s.Info().SQL).Target())
	if err := s.Seed(t.Context(), r); err != nil {
		t.Fatalf("seeding %s: %v", s.Info().Name, err)
	}
	return r
}

// Runs is RunShared that fails the test unless the invocation exits 0 with n runs; it returns
// the report and stderr.
func Runs(t *testing.T, s testkit.Suite, n int, args ...string) (*results.Report, string) {
	t.Helper()
	code, rep, stderr := RunShared(t, s, args...)
	if code != 0 || len(rep.Runs) != n {
		t.Fatalf("exit %d, %d runs (want 0 and %d)\n%s", code, len(rep.Runs), n, stderr)
	}
	return rep, stderr
}

// OverNetwork runs every mode of s once on the shared server with a 1 ms round trip added to
// the service's connections (--db-rtt 1ms), small, and fails the test unless each run
// verifies, completes its requests and measured, through the proxy, a round trip of at
// least the one added.
func OverNetwork(t *testing.T, s testkit.Suite, requests int64, concurrency int, args ...string) *results.Report {
	t.Helper()
	modes := s.Info().Modes
	rep, _ := Runs(t, s, len(modes), append([]string{"--db-rtt", "1ms", "--requests", strconv.FormatInt(requests, 10),
		"--concurrency", strconv.Itoa(concurrency), "--modes", strings.Join(testkit.ModeNames(modes), ",")}, args...)...)
	for _, r := range rep.Runs {
		Verified(t, r)
		Completed(t, r, requests)
		overNetwork(t, r)
	}
	return rep
}

// overNetwork fails the test unless r measured, through the proxy, a round trip of at least
// the 1 ms added (--db-rtt 1ms), and kept its probes' histogram for baseline merge.
func overNetwork(t *testing.T, r results.Run) {
	t.Helper()
	if n := r.Network; n == nil || n.Postgres == nil || !n.Postgres.Proxied || n.Postgres.Probes == 0 || n.Postgres.RTTMs.P50 < 1 {
		t.Errorf("%s: the round trip measured over the service's path does not show the 1 ms added: %+v", r.Mode, n)
	} else if h, err := hist.Decode(n.Postgres.RTTHistogram); err != nil || h.Count() != n.Postgres.Probes {
		t.Errorf("%s: the probes' histogram (for baseline merge) does not hold the %d probes: %v", r.Mode, n.Postgres.Probes, err)
	}
}

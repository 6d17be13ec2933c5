package multiproc

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/hotspotkit/hotspotkit/hist"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/mariadbtest"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/metricstest"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/pgbouncertest"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/racebuild"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/redistest"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/results/merge"
	"github.com/hotspotkit/hotspotkit/results/render/judge"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/metrics"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/redisrun"
	"github.com/hotspotkit/hotspotkit/testkit/servers/pgbouncer"
	"github.com/hotspotkit/hotspotkit/testkit/servers/redisserver"
	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

// suite is a suite binary the tests run in split roles, and how to check its database.
type suite struct {
	name, pkg string
	binary    string // built by TestMain
	// written counts the requests whose effect is in the database; exact are further
	// queries that must each equal the number of requests once the run is complete.
	written string
	exact   []string
}

var (
	counterSuite = &suite{name: "usage_counter_hotspot_baseline",
		written: `SELECT count(*) FROM S.usage`,
		exact: []string{`SELECT count(DISTINCT request_id) FROM S.usage`,
			`SELECT coalesce(sum(total_requests), 0) FROM S.api_keys`}}
	settlementSuite = &suite{name: "usage_settlement_hotspot_baseline",
		written: `SELECT count(*) FROM S.usage WHERE billing_status = 'settled'`}
	// suites are the binaries the split-role tests run: the counter suite with its
	// hand-written codec, and the settlement suite on the default (JSON) one.
	suites = []*suite{counterSuite, settlementSuite}
)

// dbKind is a kind of database the processes of a split run share: the flag that gives them
// its server and the server's URL (the test binary's shared one), how the test reads the run's
// place on it (a schema on PostgreSQL, a database on MySQL: S. in a query) and how it drops it;
// and a place of a test's own with the kit's tables (dropped when the test ends), for the
// protocol's statements run in this process.
type dbKind struct {
	name    string
	urlFlag string
	url     func(t *testing.T) string
	connect func(ctx context.Context, url string) (sqldb.Conn, error)
	drop    string // the statement that drops the run's place, %s its name
	target  func(t *testing.T) database.Target
}

// pool is a pool of at most conns connections on a place of the test's own (db.target).
func (db *dbKind) pool(t *testing.T, conns int32) sqldb.Pool {
	t.Helper()
	p, err := db.target(t).NewPool(context.Background(), database.PoolOptions{MaxConns: conns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p.SQL()
}

var (
	onPostgres = &dbKind{name: "postgres", urlFlag: "--postgres-url",
		url: func(t *testing.T) string { return testdb.Server(t).DSN() },
		connect: func(ctx context.Context, url string) (sqldb.Conn, error) {
			c, err := pgx.Connect(ctx, url)
			if err != nil {
				return nil, err
			}
			return sqldb.PgxConn(c), nil
		},
		drop:   "DROP SCHEMA IF EXISTS %s CASCADE",
		target: func(t *testing.T) database.Target { return testdb.New(t).Target() }}
	onMariaDB = &dbKind{name: "mariadb", urlFlag: "--mysql-url",
		url: func(t *testing.T) string { return mariadbtest.URL(t) },
		connect: func(ctx context.Context, url string) (sqldb.Conn, error) {
			cfg, err := database.ParseMySQLURL(url)
			if err != nil {
				return nil, err
			}
			return sqldb.ConnectMySQL(ctx, sqldb.MySQLOptions{Config: cfg})
		},
		drop:   "DROP DATABASE IF EXISTS %s",
		target: func(t *testing.T) database.Target { return mariadbtest.Target(t) }}
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hotspotkit-multiproc-")
	if err != nil {
		panic(err)
	}
	for _, s := range suites {
		s.binary = filepath.Join(dir, s.name)
		// Built as this test was (racebuild): from the build cache, not compiled anew.
		build := exec.Command("go", append(append([]string{"build"}, racebuild.GoFlags()...), "-o", s.binary, "github.com/hotspotkit/hotspotkit/cmd/"+s.name)...)
		if out, err := build.CombinedOutput(); err != nil {
			panic(string(out))
		}
	}
	code := mariadbtest.Stop(testdb.Main(m))
	os.RemoveAll(dir)
	os.Exit(code)
}

// realestRedis runs f against a real redis-server where one is installed, otherwise against a
// miniredis (in CI, where redis-server is installed, a missing one fails the test).
func realestRedis(t *testing.T, f func(t *testing.T, url string)) {
	if !redistest.Installed(t) {
		onMiniredis(t, f)
		return
	}
	onRedisServer(t, f)
}

// onMiniredis runs f against a miniredis served by this test process.
func onMiniredis(t *testing.T, f func(t *testing.T, url string)) {
	m := miniredis.RunT(t)
	f(t, "redis://"+m.Addr()+"/0")
}

// onRedisServer runs f against a redis-server of its own (skipped where none is installed,
// failed in CI).
func onRedisServer(t *testing.T, f func(t *testing.T, url string)) {
	f(t, redistest.Start(t, redisserver.Config{}).URL())
}

// splitRun is one run shared by several processes: one schema (on MySQL a database), one
// Redis.
type splitRun struct {
	t        *testing.T
	db       *dbKind
	suite    *suite
	url      string // the database's
	schema   string
	redisURL string
	rdb      *redis.Client
	conn     sqldb.Conn
}

func newSplitRun(t *testing.T, db *dbKind, su *suite, redisURL string) *splitRun {
	t.Helper()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	s := &splitRun{t: t, db: db, suite: su, url: db.url(t), schema: "mp_" + hex.EncodeToString(b), redisURL: redisURL}
	opts, err := redis.ParseURL(redisURL)
	if err != nil {
		t.Fatal(err)
	}
	s.rdb = redis.NewClient(opts)
	ctx := context.Background()
	if s.conn, err = db.connect(ctx, s.url); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = s.conn.Exec(ctx, fmt.Sprintf(db.drop, s.schema))
		_ = s.conn.Close(ctx)
		s.rdb.Close()
	})
	return s
}

func (s *splitRun) stream() string { return "hotspotkit:" + s.schema + ":0:async-compact" }

// proc is a running binary.
type proc struct {
	t      *testing.T
	name   string
	cmd    *exec.Cmd
	report string
	stderr suitetest.Output
	done   chan struct{}
}

func (p *proc) errText() string { return p.stderr.String() }

// start runs the binary in role args (plus the run's shared flags).
func (s *splitRun) start(name string, env []string, args ...string) *proc {
	s.t.Helper()
	p := &proc{t: s.t, name: name, report: filepath.Join(s.t.TempDir(), name+".json"), done: make(chan struct{})}
	all := append([]string{s.db.urlFlag, s.url, "--schema", s.schema, "--redis-url", s.redisURL,
		"--queue-backend", "redis", "--modes", "async-compact", "--output", p.report},
		// A test's defaults: calibration would be 3 s of every process's, and no split run's
		// check reads it.
		slices.Concat(suitetest.Defaults(), args)...)
	p.cmd = exec.Command(s.suite.binary, all...)
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stderr = &p.stderr
	if err := p.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	s.t.Cleanup(func() { p.kill() })
	return p
}

// wait returns the exit code.
func (p *proc) wait(timeout time.Duration) int {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(timeout):
		p.kill()
		p.t.Fatalf("%s did not finish within %s\n%s", p.name, timeout, p.errText())
	}
	return p.cmd.ProcessState.ExitCode()
}

func (p *proc) kill() {
	if p.cmd.Process != nil {
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
	}
}

// waitFor waits until stderr matches re and returns the submatches.
func (p *proc) waitFor(re *regexp.Regexp, timeout time.Duration) []string {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(p.errText()); m != nil {
			return m
		}
		select {
		case <-p.done:
			p.t.Fatalf("%s exited (%v) before %q\n%s", p.name, p.cmd.ProcessState, re, p.errText())
		case <-time.After(20 * time.Millisecond):
		}
	}
	p.t.Fatalf("%s: no %q within %s\n%s", p.name, re, timeout, p.errText())
	return nil
}

func (p *proc) mustSucceed(timeout time.Duration) *results.Report {
	p.t.Helper()
	if code := p.wait(timeout); code != 0 {
		p.t.Fatalf("%s: exit %d\n%s", p.name, code, p.errText())
	}
	rep, err := results.ReadFile(p.report)
	if err != nil {
		p.t.Fatal(err)
	}
	return rep
}

// queryInt runs sql ($1.. its placeholders on either kind) with S. standing for the run's
// schema.
func (s *splitRun) queryInt(sql string, args ...any) int64 {
	s.t.Helper()
	var n int64
	if err := s.conn.QueryRow(context.Background(), strings.ReplaceAll(sql, "S.", s.schema+"."), args...).Scan(&n); err != nil {
		s.t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// registered waits until producer has set the run up and registered in it.
func (s *splitRun) registered(producer *proc) {
	s.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		var n int64
		err := s.conn.QueryRow(context.Background(), "SELECT count(*) FROM "+s.schema+".queue_producers").Scan(&n)
		if err == nil && n == 1 {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the producer never registered\n%s", producer.errText())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// exact checks the database directly: every request applied once.
func (s *splitRun) exact(requests int64) {
	s.t.Helper()
	for _, q := range append([]string{s.suite.written}, s.suite.exact...) {
		if got := s.queryInt(q); got != requests {
			s.t.Errorf("database: %s = %d, want %d", q, got, requests)
		}
	}
}

func passed(t *testing.T, name string, rep *results.Report) *results.Queue {
	t.Helper()
	if len(rep.Runs) != 1 {
		t.Fatalf("%s: %d runs", name, len(rep.Runs))
	}
	r := rep.Runs[0]
	for _, c := range r.Verification.Checks {
		if c.State != results.CheckPassed {
			t.Errorf("%s: check %q %s: expected %v, got %v %s", name, c.Name, c.State, c.Expected, c.Actual, c.Reason)
		}
	}
	if !r.Verification.Passed || r.Queue == nil || r.Queue.Stream == nil {
		t.Fatalf("%s: verified %v, queue %+v", name, r.Verification.Passed, r.Queue)
	}
	return r.Queue
}

var stoppedAt = regexp.MustCompile(`consumer stopped at (\S+) holding (\d+) entries`)

// TestConsumerKilledMidBatch: a producer enqueues everything; consumer A reads a batch and is
// SIGKILLed (a) before its database commit or (b) after the commit and before the
// acknowledgement; consumer B takes the batch over and verifies the whole run. Final counters
// exact: nothing lost, nothing counted twice. It runs the counter suite: what a crash leaves
// and what B takes over are the queue's (redisq, its applied-entries table) and the same for
// every suite; a suite's records crossing processes is TestProducerAndTwoConsumers'. It runs on
// one Redis, a real redis-server where installed: the same crash points on miniredis are the
// queue contract's (queue/redisq), and the producer and two consumers run on both.
func TestConsumerKilledMidBatch(t *testing.T) { consumerKilledMidBatch(t, onPostgres, counterSuite) }

func consumerKilledMidBatch(t *testing.T, db *dbKind, su *suite) {
	for _, point := range []string{"after-read", "after-commit"} {
		t.Run(point, func(t *testing.T) {
			realestRedis(t, func(t *testing.T, url string) {
				const requests = 3000
				s := newSplitRun(t, db, su, url)
				passed(t, "producer", s.start("producer", nil, "--role", "producer", "--requests", strconv.Itoa(requests),
					"--concurrency", "100").mustSucceed(2*time.Minute))

				a := s.start("consumer-a", []string{redisrun.CrashEnv + "=" + point}, "--role", "consumer", "--reuse-schema",
					"--queue-workers", "1", "--flush-batch-size", "500")
				m := a.waitFor(stoppedAt, time.Minute)
				held, _ := strconv.ParseInt(m[2], 10, 64)
				a.kill()

				// Between the two consumers: A's batch is pending, and committed only after-commit.
				committed := int64(0)
				if point == "after-commit" {
					committed = held
				}
				ctx := context.Background()
				if got := s.queryInt(`SELECT count(*) FROM S.queue_applied_entries WHERE stream = $1`, s.stream()); got != committed {
					t.Errorf("applied ids after A died: %d, want %d", got, committed)
				}
				if got := s.queryInt(su.written); got != committed {
					t.Errorf("requests written after A died: %d, want %d", got, committed)
				}
				if n, _ := s.rdb.XLen(ctx, s.stream()).Result(); n != requests {
					t.Errorf("stream length after A died: %d, want %d (nothing acknowledged)", n, requests)
				}
				if p, _ := s.rdb.XPending(ctx, s.stream(), "hotspotkit").Result(); p == nil || p.Count != held {
					t.Errorf("pending after A died: %+v, want %d", p, held)
				}

				b := s.start("consumer-b", nil, "--role", "consumer", "--reuse-schema", "--verify", "--reclaim-idle-ms", "1000")
				q := passed(t, "consumer-b", b.mustSucceed(2*time.Minute))
				st := q.Stream
				t.Logf("A held %d entries at %s; B: %+v", held, point, *st)
				if st.ReclaimedTotal < held || st.AckedTotal != requests || st.Length != 0 {
					t.Errorf("B's stream counters %+v: want ≥ %d reclaimed and all %d acknowledged", st, held, requests)
				}
				// B skips A's committed batch (a batch of B's own that it took over because a
				// renewal came late on a loaded machine would add to this, harmlessly).
				if st.DuplicateSkippedTotal < committed {
					t.Errorf("B skipped %d duplicates, want at least A's %d", st.DuplicateSkippedTotal, committed)
				}
				s.exact(requests)
			})
		})
	}
}

// TestProducerAndTwoConsumers: three processes finish one run; the verifying consumer checks
// it against what the producer recorded, and baseline merge makes their reports one verified
// report of the run. The counter suite (its hand-written codec) and the settlement suite (the
// default JSON codec) run on PostgreSQL and a real redis-server (the counter suite on a
// miniredis where none is installed); the counter suite again on MariaDB, its processes
// sharing a database of the run's own on the server by --mysql-url. The counter suite's
// processes on a miniredis are TestSplitRunMerged's, and two consumers sharing a run's streams
// on both servers queue/redisq's (TestShardsKeepAKeyOnOneShardInOrder).
func TestProducerAndTwoConsumers(t *testing.T) {
	t.Run(counterSuite.name, func(t *testing.T) {
		realestRedis(t, func(t *testing.T, url string) { producerAndTwoConsumers(t, onPostgres, counterSuite, url) })
	})
	t.Run(settlementSuite.name, func(t *testing.T) {
		onRedisServer(t, func(t *testing.T, url string) { producerAndTwoConsumers(t, onPostgres, settlementSuite, url) })
	})
	t.Run(counterSuite.name+" on MariaDB", func(t *testing.T) {
		realestRedis(t, func(t *testing.T, url string) { producerAndTwoConsumers(t, onMariaDB, counterSuite, url) })
	})
}

func producerAndTwoConsumers(t *testing.T, db *dbKind, su *suite, url string) {
	const requests = 3000
	s := newSplitRun(t, db, su, url)
	producer := s.start("producer", nil, "--role", "producer", "--requests", strconv.Itoa(requests), "--concurrency", "300")
	s.registered(producer) // the producer sets the run up; the consumers join after
	c1 := s.start("consumer-1", nil, "--role", "consumer", "--reuse-schema", "--flush-batch-size", "200")
	c2 := s.start("consumer-2", nil, "--role", "consumer", "--reuse-schema", "--flush-batch-size", "200", "--verify")
	inputs := finish(t, producer, c1, c2)
	q1, q2 := inputs[1].Report.Runs[0].Queue, inputs[2].Report.Runs[0].Queue
	if sum := q1.Stream.AckedTotal + q2.Stream.AckedTotal; sum != requests {
		t.Errorf("consumers acknowledged %d + %d, want %d together", q1.Stream.AckedTotal, q2.Stream.AckedTotal, requests)
	}
	if sum := q1.FlushedTotal + q2.FlushedTotal; sum != requests {
		t.Errorf("consumers flushed %d + %d, want %d together", q1.FlushedTotal, q2.FlushedTotal, requests)
	}
	s.exact(requests)
	// The producer's finish recorded to the microsecond, as its start is (not MySQL's now(),
	// whole seconds: a finish before the start).
	var started, finished time.Time
	if err := s.conn.QueryRow(context.Background(), `SELECT started_at, finished_at FROM `+s.schema+`.queue_producers`).Scan(&started, &finished); err != nil ||
		finished.Before(started) || finished.Nanosecond() == 0 {
		t.Errorf("the producer's registration: started %s, finished %s (%v)", started, finished, err)
	}
	m, err := merge.Merge(inputs)
	if err != nil {
		t.Fatal(err)
	}
	run, env := m.Report.Runs[0], m.Report.Environment
	if !run.Verification.Passed || run.Reconciliation == nil || run.Reconciliation.Persisted != requests ||
		run.Reconciliation.Lost != 0 || run.Reconciliation.Duplicated != 0 {
		t.Errorf("merged: verified %v, reconciliation %+v", run.Verification.Passed, run.Reconciliation)
	}
	if run.Load.CompletedRequests != requests || run.Queue.FlushedTotal != requests || run.Queue.Stream.AckedTotal != requests ||
		len(m.Report.Processes) != 3 || env.DatabaseKind != db.name || env.Schema != s.schema {
		t.Errorf("merged: %d completed, %d flushed, %d acknowledged, %d processes, database %s %q",
			run.Load.CompletedRequests, run.Queue.FlushedTotal, run.Queue.Stream.AckedTotal, len(m.Report.Processes), env.DatabaseKind, env.Schema)
	}
}

// finish waits for each process to succeed and pass its own checks, and returns their
// reports as baseline merge takes them.
func finish(t *testing.T, procs ...*proc) []merge.Input {
	t.Helper()
	var inputs []merge.Input
	for _, p := range procs {
		rep := p.mustSucceed(2 * time.Minute)
		passed(t, p.name, rep)
		inputs = append(inputs, merge.Input{Path: p.report, Report: rep})
	}
	return inputs
}

// TestProducersRegisterAtOnce: the producers of a run register at the same moment, each on a
// connection of its own, on either kind of database: every one of them registered (on MySQL
// two that find no registration take the same gap lock and InnoDB rolls one back as a
// deadlock, which registers again), then one whose range overlaps another's and one of an id
// already registered refused, the registrations as they were.
func TestProducersRegisterAtOnce(t *testing.T) {
	for _, db := range []*dbKind{onPostgres, onMariaDB} {
		t.Run(db.name, func(t *testing.T) {
			const producers, requests = 32, 100
			pool := db.pool(t, producers)
			ctx := context.Background()
			stream := func(id int, offset int64) *redisrun.Stream {
				return &redisrun.Stream{Key: "hotspotkit:registry:0:async-compact", ProducerID: id, Offset: offset, Requests: requests}
			}
			errs := make(chan error, producers)
			start := make(chan struct{})
			for id := range producers {
				go func() {
					<-start
					errs <- stream(id, int64(id)*requests).Register(ctx, pool)
				}()
			}
			close(start)
			for range producers {
				if err := <-errs; err != nil {
					t.Error(err)
				}
			}
			for what, sr := range map[string]*redisrun.Stream{
				"an overlapping range": stream(producers, requests/2),
				"an id registered":     stream(3, producers*requests),
			} {
				if err := sr.Register(ctx, pool); err == nil || !strings.Contains(err.Error(), "already covers") {
					t.Errorf("%s: %v, want refused", what, err)
				}
			}
			if registered, finished, err := stream(0, 0).Producers(ctx, pool); registered != producers || finished != 0 || err != nil {
				t.Errorf("%d registered, %d finished (%v), want %d and 0", registered, finished, err, producers)
			}
		})
	}
}

// TestManagedRedisGoneAfterOwnerIsKilled: a run with --redis managed is SIGKILLed mid-run; the
// watchdog stops its redis-server.
func TestManagedRedisGoneAfterOwnerIsKilled(t *testing.T) {
	redistest.Need(t)
	p := &proc{t: t, name: "owner", done: make(chan struct{})}
	p.cmd = exec.Command(counterSuite.binary, append(suitetest.Defaults(), "--postgres-url", testdb.Server(t).DSN(), "--queue-backend", "redis",
		"--redis", "managed", "--modes", "async-compact", "--requests", "2000", "--output", filepath.Join(t.TempDir(), "r.json"))...)
	p.cmd.Env = append(os.Environ(), redisrun.CrashEnv+"=after-read")
	p.cmd.Stderr = &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	p.waitFor(stoppedAt, time.Minute)
	var started []int
	for pid := range suitetest.RedisServers(p.cmd.Process.Pid) {
		started = append(started, pid)
	}
	if len(started) != 1 {
		t.Fatalf("want the run's one redis-server, found %v", started)
	}
	p.kill()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) && suitetest.RedisServers(0)[started[0]] {
		time.Sleep(100 * time.Millisecond)
	}
	if suitetest.RedisServers(0)[started[0]] {
		t.Errorf("redis-server %d still running after its owner was SIGKILLed", started[0])
	}
}

// scraper scrapes a process's --metrics-addr until the process exits, keeping every scrape.
type scraper struct {
	p       *proc
	scrapes []metricstest.Scrape
	done    chan struct{}
}

func (p *proc) scrapeUntilExit() *scraper {
	url := p.waitFor(metricstest.Endpoint, time.Minute)[1]
	s := &scraper{p: p, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for {
			select {
			case <-p.done:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if sc, err := metricstest.Get(url); err == nil {
				s.scrapes = append(s.scrapes, sc)
			}
		}
	}()
	return s
}

// max is the largest value series showed in any scrape.
func (s *scraper) max(series string) (float64, bool) {
	<-s.done
	best, seen := 0.0, false
	for _, sc := range s.scrapes {
		if v, ok := sc[series]; ok {
			best, seen = max(best, v), true
		}
	}
	return best, seen
}

// TestSplitRunMerged: two producers and the verifying consumer each write their report, and
// baseline merge makes them one report of the run: every request, the union of the
// producers' latencies, the consumer's persist lag and verification, three processes. A
// producer and the consumer serve --metrics-addr and are scraped while they run: each shows
// its part of the run under its role (scrapedWhole).
func TestSplitRunMerged(t *testing.T) {
	const requests = 2000
	s := newSplitRun(t, onPostgres, counterSuite, "redis://"+miniredis.RunT(t).Addr()+"/0")
	role := func(id int) []string {
		return []string{"--role", "producer", "--producer-id", strconv.Itoa(id), "--requests", strconv.Itoa(requests), "--concurrency", "50"}
	}
	scraped := []string{"--metrics-addr", "127.0.0.1:0"}
	p0 := s.start("producer-0", nil, append(role(0), scraped...)...)
	ps := p0.scrapeUntilExit()
	s.registered(p0) // it sets the run up; the others join after
	p1 := s.start("producer-1", nil, append(role(1), "--reuse-schema")...)
	c := s.start("consumer", nil, append([]string{"--role", "consumer", "--reuse-schema", "--verify", "--expect-producers", "2"}, scraped...)...)
	cs := c.scrapeUntilExit()
	inputs := finish(t, p0, p1, c)
	scrapedWhole(t, ps, cs, inputs[2].Report.Runs[0].Queue)
	m, err := merge.Merge(inputs)
	if err != nil {
		t.Fatal(err)
	}
	run := m.Report.Runs[0]
	union := hist.New()
	for _, in := range inputs[:2] {
		h, err := hist.Decode(in.Report.Runs[0].Load.LatencyHistogram)
		if err != nil {
			t.Fatal(err)
		}
		union.Merge(h)
	}
	if got, want := run.Load.LatencyMs, results.Latency(union.Summary()); got != want || got.Count != 2*requests {
		t.Errorf("merged latency %+v, want the union of the producers' %+v", got, want)
	}
	q := run.Queue
	if run.Load.CompletedRequests != 2*requests || q.EnqueuedTotal != 2*requests || q.FlushedTotal != 2*requests ||
		q.Stream.AckedTotal != 2*requests || q.PersistLagMs.Count == 0 {
		t.Errorf("merged: %d completed, queue %+v, stream %+v", run.Load.CompletedRequests, q.QueueMetrics, *q.Stream)
	}
	if !run.Verification.Passed || run.Reconciliation == nil || run.Reconciliation.Persisted != 2*requests || len(m.Report.Processes) != 3 {
		t.Errorf("merged: verified %v, reconciliation %+v, %d processes", run.Verification.Passed, run.Reconciliation, len(m.Report.Processes))
	}
	if len(m.Notes) > 0 || run.LockMonitor.TotalReadMs == nil {
		t.Errorf("notes %q (none expected: every figure merged), total reads %v", m.Notes, run.LockMonitor.TotalReadMs)
	}
	// The merged report compares like any: with itself, a pass.
	if cmp, err := judge.Compare(m.Report, m.Report, judge.DefaultOptions()); err != nil || cmp.ExitCode() != 0 {
		t.Errorf("the merged report against itself: %v, %s", err, cmp.Verdict())
	}
	t.Logf("p99: producers %.3f and %.3f ms, merged %.3f ms; throughput %.0f rps over %.0f ms",
		inputs[0].Report.Runs[0].Load.LatencyMs.P99, inputs[1].Report.Runs[0].Load.LatencyMs.P99, run.Load.LatencyMs.P99,
		run.Load.ThroughputRPS, run.Load.DurationMs)
	s.exact(2 * requests)
}

// scrapedWhole checks the scrapes of a producer (ps) and of the consumer (cs) of a split run:
// each shows its part of the run under its role, counters never go down, and the consumer
// never showed more flushed than its report (consumed) counts.
func scrapedWhole(t *testing.T, ps, cs *scraper, consumed *results.Queue) {
	t.Helper()
	labels := func(role string) []string {
		return []string{"suite=" + counterSuite.name, "mode=async-compact", "role=" + role, "run=0", "level=0", "database=postgres"}
	}
	for _, c := range []struct {
		sc     *scraper
		role   string
		series []string // each must show, and the first must grow above 0
	}{
		{ps, "producer", []string{metrics.RequestsCompleted, metrics.QueueEnqueued, metrics.StreamLength}},
		{cs, "consumer", []string{metrics.QueueFlushed, metrics.StreamLength, metrics.StreamPending, metrics.PersistLag}},
	} {
		for i, name := range c.series {
			v, ok := c.sc.max(metricstest.Series(name, labels(c.role)...))
			if !ok || (i == 0 && v == 0) {
				t.Errorf("%s: %s seen %v, at most %v in %d scrapes", c.role, name, ok, v, len(c.sc.scrapes))
			}
		}
		for i := 1; i < len(c.sc.scrapes); i++ {
			for _, d := range metricstest.Decreased(c.sc.scrapes[i-1], c.sc.scrapes[i]) {
				t.Errorf("%s: %s", c.role, d)
			}
		}
	}
	if v, _ := cs.max(metricstest.Series(metrics.QueueFlushed, labels("consumer")...)); v > float64(consumed.FlushedTotal) {
		t.Errorf("consumer: %v flushed on the endpoint, more than the report's %d", v, consumed.FlushedTotal)
	}
}

// TestSplitRunThroughOnePooler: two producers and a consumer, each with its own pool, reach
// PostgreSQL through one PgBouncer (what baseline pgbouncer starts for a split run: the run's
// schema set by its connect_query), given to each as --pooler-url; the merged run is verified
// and carries the pooler's signals.
func TestSplitRunThroughOnePooler(t *testing.T) {
	pgbouncertest.Need(t)
	const requests = 1000
	s := newSplitRun(t, onPostgres, counterSuite, "redis://"+miniredis.RunT(t).Addr()+"/0")
	cfg, err := pgbouncer.UpstreamConfig(s.url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.PoolSize, cfg.ConnectQuery = 4, "SET search_path TO "+s.schema
	bouncer, err := pgbouncer.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bouncer.Stop() })
	pooled := []string{"--pooler-url", bouncer.ConsoleURL()}
	role := func(id int) []string {
		return append([]string{"--role", "producer", "--producer-id", strconv.Itoa(id), "--requests", strconv.Itoa(requests), "--concurrency", "20"}, pooled...)
	}
	p0 := s.start("producer-0", nil, role(0)...)
	s.registered(p0)
	p1 := s.start("producer-1", nil, append(role(1), "--reuse-schema")...)
	c := s.start("consumer", nil, append([]string{"--role", "consumer", "--reuse-schema", "--verify", "--expect-producers", "2"}, pooled...)...)
	inputs := finish(t, p0, p1, c)
	for _, in := range inputs {
		if pl := in.Report.Runs[0].Pooler; pl == nil || pl.Managed || pl.PoolSize != 4 || pl.Samples == 0 {
			t.Errorf("%s: pooler %+v", in.Path, pl)
		}
	}
	m, err := merge.Merge(inputs)
	if err != nil {
		t.Fatal(err)
	}
	run := m.Report.Runs[0]
	if !run.Verification.Passed || run.Pooler == nil || run.Pooler.Transactions == 0 || run.Pool.MaxServerSessions > 4 {
		t.Errorf("merged: verified %v, pooler %+v, %d server sessions", run.Verification.Passed, run.Pooler, run.Pool.MaxServerSessions)
	}
	s.exact(2 * requests)
}

// TestPgBouncerGoneAfterOwnerIsKilled: a run through a temporary PgBouncer is SIGKILLed mid-run;
// the watchdog stops the pooler and removes its directory.
func TestPgBouncerGoneAfterOwnerIsKilled(t *testing.T) {
	pgbouncertest.Need(t)
	before := suitetest.Processes("pgbouncer.ini", 0)
	p := &proc{t: t, name: "owner", done: make(chan struct{})}
	p.cmd = exec.Command(counterSuite.binary, append(suitetest.Defaults(), "--postgres-url", testdb.Server(t).DSN(), "--pooler", "pgbouncer",
		"--modes", "sync", "--requests", "10000000", "--duration", "1m", "--progress-interval", "200ms",
		"--output", filepath.Join(t.TempDir(), "r.json"))...)
	p.cmd.Stderr = &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(p.kill)
	p.waitFor(regexp.MustCompile(`sync\s+[\d,]+/`), time.Minute) // the load runs through the pooler
	var started []int
	for pid := range suitetest.Processes("pgbouncer.ini", 0) {
		if !before[pid] {
			started = append(started, pid)
		}
	}
	if len(started) != 1 {
		t.Fatalf("want the run's one pgbouncer, found %v", started)
	}
	p.kill()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) && suitetest.Processes("pgbouncer.ini", 0)[started[0]] {
		time.Sleep(100 * time.Millisecond)
	}
	if suitetest.Processes("pgbouncer.ini", 0)[started[0]] {
		t.Errorf("pgbouncer %d still running after its owner was SIGKILLed", started[0])
	}
}

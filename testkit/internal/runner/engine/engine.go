// Package engine runs a suite's plan: the lifecycle of an invocation — the temporary or given
// database, signals, one freshly reset run per mode (and repetition and ladder rung), the
// run's instruments (the database's figures, the monitor, the metrics endpoint, the probes,
// the faults: instruments.go), the load, the drain, verification and reconciliation, the JSON
// report, the NDJSON samples and the stderr summary. What is not lifecycle has a package of its
// own, which the engine drives through small explicit calls: plan (the validated flags),
// runenv (what a run hands the suite), backend (a run's queue, as a Backend value: Inline,
// Memory, or redisrun's Redis stream in this process's role, chosen once by redisrun.Choose),
// netpath (the proxies and probes of the network), pooler (the pooler between the service and
// PostgreSQL), hostenv (the machine a report was measured on), results/render (the summary
// table, the same as `baseline table`). It knows suites only through package testkit's
// interfaces, and the database's kind only through package dbkind's Kind.
package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/results/render"
	"github.com/hotspotkit/hotspotkit/results/units"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/clientcost"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/heapmem"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/metrics"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/monitor"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/plotpage"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/stmttime"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/advise"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/backend"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/dbkind"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/faults"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/load"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/netpath"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/plan"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/pooler"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/redisrun"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/runenv"
)

// Exit codes.
const (
	ExitOK       = 0
	ExitFailed   = 1 // verification failed, or the run could not complete
	ExitUsage    = 2 // bad input; nothing was started
	ExitSIGINT   = 130
	ExitSIGTERM  = 143
	extraConns   = 32 // monitor, admin, flushers, fault injector, headroom
	serverMargin = 10
)

// engine is one invocation.
type engine struct {
	suite  testkit.Suite
	info   testkit.Info
	cfg    *plan.Plan
	stderr io.Writer

	target  database.Target // the run's database, of either kind; it stops a temporary server
	db      dbkind.Kind     // what the database's kind lends the runs' instruments (package dbkind)
	samples *monitor.SampleWriter
	report  *results.Report
	metrics *metrics.Server  // --metrics-addr (watch.go)
	queues  *redisrun.Queues // the backend of the runs' queues (queues.go)
	net     *netpath.Paths   // the proxies and probes (network.go)
	pooler  *pooler.Pooler   // the pooler between the service and PostgreSQL (pooler.go); nil: none
	advice  *advise.Search   // --advise's search (trials.go); nil: the flags' fixed list of runs
	started time.Time        // the invocation's start, from which --advise-budget counts

	// stopCtx ends on the first signal (no new requests); hardCtx on the second, or
	// --shutdown-timeout after the first (abort what is in flight). signal is the first
	// signal's name (bounds.go).
	stopCtx context.Context
	hardCtx context.Context
	signal  atomic.Pointer[string]
	// unreachable: a run ended with a server that did not answer (bounds.go): the cleanup
	// does not wait long for it either.
	unreachable bool
}

// Execute runs suite s's plan p and returns the exit code: 0 ok, 1 verification failed or the
// run broke, 2 bad input found before anything started, 130/143 interrupted by SIGINT/SIGTERM.
func Execute(s testkit.Suite, p *plan.Plan, stdout, stderr io.Writer) int {
	e := newEngine(s, p, stderr)
	if err := e.serveMetrics(stderr); err != nil {
		fmt.Fprintf(stderr, "%s: %s\n", e.info.Name, oneLine(err.Error()))
		return ExitUsage
	}
	defer e.listenForSignals()() // until the metrics endpoint has closed: a signal cuts its linger short
	defer e.closeMetrics()
	return e.execute(stdout)
}

// listenForSignals sets up the invocation's contexts and hands SIGINT and SIGTERM to
// handleSignals (bounds.go) until the returned stop.
func (e *engine) listenForSignals() (stop func()) {
	stopCtx, stopNew := context.WithCancel(context.Background())
	hardCtx, hard := context.WithCancel(context.Background())
	e.stopCtx, e.hardCtx = stopCtx, hardCtx
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	shutdown := e.cfg.ShutdownTimeout // read here: e.cfg is each kind's in turn (runKinds)
	go func() { e.handleSignals(sigs, shutdown, stopNew, hard); close(done) }()
	return func() {
		signal.Stop(sigs)
		close(sigs)
		<-done
		stopNew()
		hard()
	}
}

// newEngine is the engine of one invocation of s on plan p, its lines on stderr.
func newEngine(s testkit.Suite, p *plan.Plan, stderr io.Writer) *engine {
	return &engine{suite: s, info: s.Info(), cfg: p, stderr: stderr, started: time.Now()}
}

func (e *engine) execute(stdout io.Writer) (code int) {
	defer func() {
		if p := recover(); p != nil {
			_ = dbkind.StopAll()
			_ = redisrun.StopAll()
			_ = pooler.StopAll()
			panic(p)
		}
	}()

	if e.cfg.CPUProfile != "" {
		f, err := os.Create(e.cfg.CPUProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(e.stderr, "%s: --cpu-profile: %v\n", e.info.Name, err)
			return ExitUsage
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	if e.cfg.MemProfile != "" {
		stop, err := heapmem.ProfilePeak(e.cfg.MemProfile)
		if err != nil {
			fmt.Fprintf(e.stderr, "%s: --mem-profile: %v\n", e.info.Name, err)
			return ExitUsage
		}
		defer func() {
			if err := stop(); err != nil {
				fmt.Fprintf(e.stderr, "%s: --mem-profile: %v\n", e.info.Name, err)
			}
		}()
	}
	e.report = &results.Report{SchemaVersion: results.SchemaVersion, Suite: e.info.Name, StartedAt: time.Now().UTC(), Runs: []results.Run{}}
	err := e.runKinds()
	if closeErr := e.close(); closeErr != nil {
		fmt.Fprintf(e.stderr, "%s: cleanup: %v\n", e.info.Name, closeErr)
		err = errors.Join(err, closeErr)
	}
	var usage usageError
	if errors.As(err, &usage) && len(e.report.Runs) == 0 {
		fmt.Fprintf(e.stderr, "%s: %s\n", e.info.Name, oneLine(database.Redact(usage.Error())))
		return ExitUsage
	}
	e.report.FinishedAt = time.Now().UTC()
	sigName := e.signalName()
	e.report.Interrupted = sigName != ""
	if err != nil {
		e.report.Error = database.Redact(err.Error())
	}
	e.finishReport()
	if werr := e.writeReport(stdout); werr != nil {
		fmt.Fprintf(e.stderr, "%s: writing the report: %v\n", e.info.Name, werr)
		return ExitFailed
	}
	render.Summary(e.stderr, e.report, render.SummaryOptions{Modes: testkit.ModeNames(e.info.Modes), HotTables: e.info.HotTables, Wide: e.cfg.Wide})
	if sw, ok := e.suite.(testkit.SummaryWriter); ok && len(e.report.Runs) > 0 {
		sw.WriteSummary(e.stderr, e.report)
	}
	if e.cfg.HTML != "" && len(e.report.Runs) > 0 {
		if perr := plotpage.Write(context.Background(), e.cfg.HTMLTool, e.cfg.Output, e.cfg.HTML); perr != nil {
			fmt.Fprintf(e.stderr, "%s: --html: %s\n", e.info.Name, oneLine(perr.Error()))
			err = errors.Join(err, perr)
		} else {
			fmt.Fprintf(e.stderr, "%s: wrote %s (the report's plots)\n", e.info.Name, e.cfg.HTML)
		}
	}

	switch {
	case sigName == "SIGINT":
		return ExitSIGINT
	case sigName == "SIGTERM":
		return ExitSIGTERM
	case err != nil:
		fmt.Fprintf(e.stderr, "%s: %s\n", e.info.Name, database.Redact(err.Error()))
		return ExitFailed
	case e.report.Advice != nil: // a search: its answer, not every trial, decides (trials.go)
		if line := adviceExit(e.report); line != "" {
			fmt.Fprintf(e.stderr, "%s: %s\n", e.info.Name, line)
			return ExitFailed
		}
		return ExitOK
	case !allVerified(e.report):
		for _, line := range notVerified(e.report) {
			fmt.Fprintf(e.stderr, "%s: %s\n", e.info.Name, line)
		}
		return ExitFailed
	}
	return ExitOK
}

// usageError is bad input discovered only when reaching the server (nothing has run yet).
type usageError struct{ error }

func (u usageError) Unwrap() error { return u.error }

// oneLine folds a multi-line error (pgx puts the cause on the next line) into one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// notVerified says why the report's runs are not all verified: the checks that failed, and
// the runs left unverified with why (the checks not made, named).
func notVerified(r *results.Report) []string {
	var out, unverified []string
	failed := 0
	for _, run := range r.Runs {
		for _, c := range run.Verification.Checks {
			if c.State == results.CheckFailed {
				failed++
			}
		}
		if u := run.Verification.Unverified; u != nil && !run.Verification.Passed {
			unverified = append(unverified, run.Label()+": "+u.Reason)
		}
	}
	switch {
	case failed == 1:
		out = append(out, `verification FAILED: a check failed (state "failed" in the report)`)
	case failed > 1:
		out = append(out, fmt.Sprintf(`verification FAILED: %d checks failed (state "failed" in the report)`, failed))
	case len(unverified) == 0:
		out = append(out, "verification FAILED: no run was verified")
	}
	if len(unverified) > 0 {
		out = append(out, "NOT VERIFIED: "+strings.Join(unverified, "; "))
	}
	return out
}

func allVerified(r *results.Report) bool {
	for _, run := range r.Runs {
		if !run.Verification.Passed {
			return false
		}
	}
	return len(r.Runs) > 0
}

// runKinds runs the plan on each kind of database it runs on, in turn (plan.ByKind: each
// kind of --databases, else the one of the flags): a kind's server is opened when its runs
// begin and closed once they are done, before the next kind's starts, and its runs join the
// one report. A ladder over the kinds reaches its servers given by URL first (servedAs) and
// records each server in the environment (Databases); the calibration is the one kind's that
// has one (it measures PostgreSQL).
func (e *engine) runKinds() error {
	if err := e.servedAs(); err != nil {
		return err
	}
	whole := e.cfg
	defer func() { e.cfg = whole }()
	kinds := whole.ByKind()
	var envs []results.Environment
	for i, p := range kinds {
		if i > 0 && e.stopCtx.Err() != nil {
			break
		}
		e.cfg, e.unreachable = p, false
		e.report.Environment = results.Environment{} // the kind's own, once its server answers
		err := e.runAll()
		if e.report.Environment.DatabaseKind != "" { // captured: the server answered
			envs = append(envs, e.report.Environment)
		}
		if len(kinds) > 1 {
			err = errors.Join(err, e.closeDatabase())
			e.net = nil // closed: each run of a kind has its network, the invocation none of both servers
		}
		if err != nil {
			e.joinEnvironments(envs, len(kinds) > 1)
			return err
		}
	}
	e.joinEnvironments(envs, len(kinds) > 1)
	return nil
}

// servedAs reaches, before anything starts, each server given by URL that a ladder over the
// kinds runs a kind on, and names the kind by what the server is (plan.ServedAs): one that
// does not answer, or is another kind on the axis, is bad input before the first kind's runs
// rather than after them.
func (e *engine) servedAs() error {
	p, notes, err := e.cfg.ServedAs(func(url string, mysql bool) (string, error) {
		return database.KindAt(e.hardCtx, url, mysql, database.DefaultConnectTimeout)
	})
	if err != nil {
		return usageError{err}
	}
	for _, n := range notes {
		fmt.Fprintf(e.stderr, "%s: %s\n", e.info.Name, n)
	}
	e.cfg = p
	return nil
}

// joinEnvironments makes the report's environment of the kinds' (ladder: more than one kind
// stepped over): the first's, with every server listed and the calibration the kinds made.
func (e *engine) joinEnvironments(envs []results.Environment, ladder bool) {
	if !ladder || len(envs) == 0 {
		return
	}
	env := envs[0]
	env.Databases = nil
	for _, k := range envs {
		env.Databases = append(env.Databases, k.ServerOf())
		if c := k.Calibration; c != nil && !c.Skipped && (env.Calibration == nil || env.Calibration.Skipped) {
			env.Calibration = c
		}
	}
	e.report.Environment = env
}

func (e *engine) runAll() error {
	c := e.cfg
	ctx := e.hardCtx
	if err := e.openDatabase(ctx); err != nil { // package dbkind
		return err
	}
	if err := e.db.CheckRoom(ctx, e.sessionsNeeded(), c.StormSessions()); err != nil {
		return usageError{err}
	}
	if err := e.routePostgres(); err != nil { // --db-rtt and friends (network.go)
		return err
	}
	if err := e.startPooler(ctx); err != nil { // --pooler (pooler.go)
		return err
	}
	if err := e.captureEnvironment(ctx); err != nil {
		return err
	}
	if p, ok := e.suite.(testkit.Preparer); ok { // a script's init file, and its statements checked
		env := testkit.PrepareEnv{Admin: e.target.Admin(), Schema: e.target.Schema(), Config: e.suiteConfig(), Joining: c.Joining(e.target)}
		if err := p.Prepare(ctx, env); err != nil {
			return usageError{err}
		}
	}
	if err := e.openQueues(ctx); err != nil { // --queue-backend (queues.go)
		return err
	}
	if err := e.calibrate(ctx); err != nil { // before the first run (dbcost.go)
		return err
	}
	if c.Output != "" && !results.NotAFile(c.Output) && e.samples == nil { // -o /dev/null: no samples beside it; one file for every kind
		var err error
		if e.samples, err = monitor.CreateSamples(results.SamplesPath(c.Output), e.report.Suite); err != nil {
			return err
		}
		e.report.SamplesFile = results.SamplesPath(c.Output)
	}

	return e.runTrials(e.trialSource()) // trials.go
}

// runTrials runs the trials src hands out, each on fresh state and verified, into the report,
// until it has none left, a signal stops new work, or a run breaks.
func (e *engine) runTrials(src trialSource) error {
	for index := len(e.report.Runs); ; index++ { // after a kind's runs before (runKinds)
		if e.stopCtx.Err() != nil {
			src.stop()
			return nil
		}
		t, ok := src.next(time.Since(e.started))
		if !ok {
			return nil
		}
		start := time.Now()
		r := e.newRun(index, t)
		goroutines, conns := monitor.Held()
		run, err := e.runOne(r)
		if rerr := e.queues.AfterRun(); rerr != nil && err == nil {
			err = rerr
		}
		run.Leftover = monitor.Leftover(goroutines, conns, time.Second)
		e.report.Runs = append(e.report.Runs, run)
		if err != nil {
			src.stop()
			e.unreachable = errors.Is(err, errUnreachable)
			return fmt.Errorf("%s run: %w", t.mode, err)
		}
		src.observe(index, run, time.Since(start))
	}
}

// suiteConns is what the suite's own pools hold at most (testkit.ConnectionUser).
func suiteConns(s testkit.Suite) int {
	if cu, ok := s.(testkit.ConnectionUser); ok {
		return cu.Connections()
	}
	return 0
}

// run is one run as the engine keeps it: the environment it hands the suite (runenv.Env, in
// the suite's read-only testkit.Run), its queue's backend, and the rung and repetition it is.
type run struct {
	*runenv.Env
	suite       *testkit.Run
	backend     backend.Backend
	repetition  int
	level       int
	rate        float64
	concurrency int
	rtt         time.Duration // the round trip added to PostgreSQL (network.go)
}

// newRun sets up the index-th run of the invocation, trial t: its config takes the rung's value
// on each axis stepped over (and the trial's length, when it has one), and the run reads its
// concurrency, rate, slots, round trip, pool size and length from its config.
func (e *engine) newRun(index int, t trial) *run {
	c := e.cfg
	mode, rung := t.mode, t.rung
	var b backend.Backend = backend.Inline{}
	if mode.Async() {
		b = e.queues.New()
	}
	env := &runenv.Env{Index: index, Mode: mode.String(), Slots: c.SlotsAt(rung), Requests: c.Requests, Target: e.target,
		Context: e.hardCtx, SessionSettings: faults.SessionSettings(c.Faults, e.target.Dialect()), Opener: b}
	if c.ForDuration(rung) {
		env.Requests = 0 // a ladder rung, a run at a rate, or a search's trial runs for its length
	}
	env.Config = c.RunConfig(rung, env.Requests)
	e.db.Record(&env.Config)
	if t.length > 0 {
		env.Config.DurationMs = results.Milliseconds(t.length)
	}
	if c.BreakExpectations {
		env.CheckSkew = 1
	}
	return &run{Env: env, suite: testkit.NewRun(env, mode, e.suiteConfig()), backend: b, repetition: t.repetition,
		level: int(rung[results.AxisConcurrency.Name].Num), rate: env.Config.Rate, concurrency: env.Config.Concurrency,
		rtt: results.Duration(env.Config.DBRTTMs)}
}

// runOne runs one mode once on freshly reset state. The returned Run is filled as far as the
// run got, even on error, so the report shows it.
func (e *engine) runOne(r *run) (results.Run, error) {
	ctx := e.hardCtx
	c := e.cfg
	out := results.Run{Mode: r.Mode, Repetition: r.repetition, Config: r.Config, StartedAt: time.Now().UTC()}
	fail := func(err error) (results.Run, error) {
		out.Error = database.Redact(err.Error())
		return out, err
	}
	meter := clientcost.New(e.db.ServerProcess(ctx)) // the generator's cost (generator.go)
	setUpFrom := meter.ReadCPU()
	if !c.Joining(e.target) { // a process joining a split run finds it set up
		if err := e.target.Reset(ctx); err != nil {
			return fail(fmt.Errorf("resetting tables: %w", err))
		}
		if err := e.suite.Seed(ctx, r.suite); err != nil {
			return fail(fmt.Errorf("seeding: %w", err))
		}
	}
	if err := e.setRunRTT(r); err != nil {
		return fail(err)
	}
	prior := e.target.TakeSessions() // closed before this run: the database's figures wait for them to exit
	tracer := stmttime.New()         // the request path's statements, as the client sees them (requesttime.go)
	var opened connects
	pool, err := e.target.NewPool(ctx, e.loadPool(r, &opened, tracer)) // pool.go
	if err != nil {
		return fail(err)
	}
	defer pool.Close()
	r.Pool = pool.SQL()
	wl, err := e.suite.Workload(ctx, r.suite)
	if err != nil {
		return fail(fmt.Errorf("preparing the %s workload: %w", r.Mode, err))
	}
	if wl.Close != nil {
		defer wl.Close()
	}
	if err := r.backend.Warm(ctx, r.Pool, r.concurrency); err != nil { // before the window, as pgbench
		return fail(err)
	}
	heapmem.Warm(heapmem.Want(r.concurrency, r.Requests)) // the process's own first touches, out of the window
	setUp := clientcost.Phase(setUpFrom, meter.ReadCPU())

	var live load.Live
	in := e.instruments(r, prior, pool, wl, &live, meter) // instruments.go
	defer in.over()
	if err := in.begin(ctx, &out); err != nil {
		return fail(err)
	}
	gc0 := gcPauses()
	res, err := r.backend.RunLoad(ctx, r.Pool, func() (*load.Result, error) { // in this process's role
		lcfg := e.loadConfig(r, &live)
		lcfg.Measuring = in.gen.measuring
		return load.Run(e.stopCtx, lcfg, wl.Op)
	})
	gcPause := gcPauses() - gc0
	if err != nil {
		in.end(ctx, ranLoad{}, &out)
		return fail(err)
	}
	d := e.drain(r, wl, in, res)
	// From here on the run is accounted for, even after a second signal aborted the drain,
	// within the bounds of postLoad (bounds.go).
	post, cancelPost := e.postLoad()
	defer cancelPost()
	in.end(post, ranLoad{res: res, stalled: d.stalled}, &out)
	out.Load = e.loadStats(res, d.end, r)
	churnStats(&out.Load, res, &opened) // pool.go
	out.Interrupted = res.Stopped
	if d.err != nil {
		out.Error = database.Redact("drain: " + d.err.Error())
	}
	if err := in.wait.unreachable; err != nil {
		out.Verification = unverified(err.(*unreachableError).reason(), res, held(d.progress))
		return out, err
	}
	out.RequestTime = requestTime(tracer, in.dbFigs.server, res, gcPause)
	if wl.FlushLoop != nil {
		f := wl.FlushLoop.Stats()
		out.Flush = &f
	}
	if q := r.backend.Figures(); q != nil {
		out.Queue = q.Report()
		if out.Load.IntakeMs > 0 {
			out.Load.AcceptRPS = units.Round(float64(res.Completed)/(out.Load.IntakeMs/1000), 1)
		}
	}
	out.Efficiency, out.EfficiencyBasis = results.Efficiency(out, e.report.Environment.Calibration)
	// Verification runs even after a failed drain: it then shows exactly what is missing.
	var applied testkit.Result
	verifyFrom := meter.ReadCPU()
	out.Verification, out.Reconciliation, applied = e.verify(post, r, res)
	if g := out.Generator; g != nil {
		g.SetUp, g.Verification = setUp, clientcost.Phase(verifyFrom, meter.ReadCPU())
	}
	out.HotSets = hotSets(e.info, r.suite.Config(), applied)
	if d.err != nil {
		out.Verification.Passed = false
	}
	if d.stalled || d.err != nil && out.Verification.Unverified == nil {
		why := "the drain did not finish: " + oneLine(database.Redact(d.err.Error()))
		u := unverified(why, res, held(d.progress)).Unverified
		out.Verification.Unverified = u
	}
	out.Figures = e.suiteFigures(post, r)
	return out, nil
}

// loadConfig is the load of run r.
func (e *engine) loadConfig(r *run, live *load.Live) load.Config {
	c := e.cfg
	lcfg := load.Config{
		Concurrency:      r.concurrency,
		Requests:         r.Requests,
		Duration:         results.Duration(r.Config.DurationMs), // --duration, or a search's trial's length
		Warmup:           c.Warmup,
		Progress:         e.stderr,
		ProgressLabel:    render.ModeLabel(r.Mode, r.Config),
		ProgressInterval: c.ProgressInterval,
		OpContext:        e.hardCtx,
		Live:             live,
		Retry:            c.RetryPolicy(),
		RequestTimeout:   c.RequestTimeout,
	}
	c.OpenLoop.LoadConfig(&lcfg, r.rate, c.Seed)
	return lcfg
}

// drained is how a run's drain went.
type drained struct {
	end      time.Time               // when it ended: the load's end when there was none
	progress func() load.DrainStatus // how far it got (drainProgress); nil: nothing to follow
	stalled  bool                    // a stall ended it (bounds.go)
	err      error
}

// drain waits for the workload's drain (nil: nothing to wait for), once the faults' flusher
// pauses are over, bounded by --drain-timeout and by a stall (bounds.go).
func (e *engine) drain(r *run, wl *testkit.Workload, in *runInstruments, res *load.Result) drained {
	c := e.cfg
	d := drained{end: res.End, progress: drainProgress(r, wl, in.mon.last)}
	if wl.Drain == nil {
		return d
	}
	in.faults.waitPauses()
	dctx, cancelDrain := context.WithTimeout(e.hardCtx, c.DrainTimeout)
	defer cancelDrain()
	sctx, stall := context.WithCancelCause(dctx)
	defer stall(nil)
	stopWatch := watchStall(stall, d.progress, c.RequestTimeout+c.ReconcileTimeout) // bounds.go
	stopLine := e.showDrain(r, d.progress)                                          // watch.go
	d.err = wl.Drain(sctx)
	d.stalled = stopWatch()
	stopLine(d.err == nil)
	d.end = time.Now()
	return d
}

// held is how many accepted writes a drain left unpersisted (0 when it cannot tell).
func held(progress func() load.DrainStatus) int64 {
	if progress == nil {
		return 0
	}
	st := progress()
	if st.Accepted > 0 {
		return max(st.Accepted-st.Persisted, 0)
	}
	return st.Waiting
}

// verify runs the run's verification: who verifies what (the backend says: queues.go), the
// reconciliation of every request, the suite's checks; a query that fails is a failed check, a
// context that ran out an unverified run. applied is the run's requests whose writes must be
// there, when this process verified the whole run (nil when it could not say, or verified its
// own part).
func (e *engine) verify(ctx context.Context, r *run, res *load.Result) (_ results.Verification, _ *results.Reconciliation, applied testkit.Result) {
	suite, vres, roleChecks, verr := e.verification(ctx, r, res)
	var recon *results.Reconciliation
	var must testkit.Result
	if verr == nil {
		recon, must, verr = reconcile(ctx, suite, r.suite, vres)
	}
	var checks []results.Check
	if verr == nil {
		checks, verr = suite.Verify(ctx, r.suite, must)
		_, ownPart := suite.(ownPartOnly)
		if len(checks) == 0 && !ownPart && verr == nil {
			// The engine's lines below account for the requests; they do not read what the
			// requests wrote, and cannot verify a run alone (results.Verification).
			checks = append(checks, results.NotChecked("the suite's checks", "the suite's Verify returned none"))
		}
		checks = append(checks, roleChecks...)
		if !ownPart {
			applied = must
		}
	}
	if recon != nil {
		rc := r.suite.NewChecks()
		reconciliationChecks(recon, rc)
		checks = append(checks, rc.List()...)
	}
	if res.Attempted() > 0 && res.Completed+res.WarmupCompleted == 0 {
		// Totals of nothing match trivially; a run in which every request failed verified
		// nothing and must not read as verified.
		checks = append(checks, results.Compared("requests completed", "> 0", 0, false))
	}
	if verr != nil {
		if ctx.Err() != nil {
			u := unverified("verification did not finish: "+oneLine(database.Redact(verr.Error())), res, 0)
			u.Checks = checks
			return u, recon, nil
		}
		checks = append(checks, results.Compared("verification query", "no error", database.Redact(verr.Error()), false))
	}
	v := results.Verification{Checks: checks}
	switch results.Verdict(checks) {
	case results.CheckPassed:
		v.Passed = true
	case results.CheckNotChecked:
		v.Unverified = unverified(results.NotCheckedReason(checks), res, 0).Unverified
	}
	return v, recon, applied
}

// suiteFigures are the suite's own figures of the run (testkit.FigureReporter), read once it is
// verified. They are an addition to the run: when they cannot be read, the run goes on
// without them (said on stderr).
func (e *engine) suiteFigures(ctx context.Context, r *run) []results.Figure {
	fr, ok := e.suite.(testkit.FigureReporter)
	if !ok {
		return nil
	}
	figures, err := fr.Figures(ctx, r.suite)
	if err != nil {
		fmt.Fprintf(e.stderr, "%s: the suite's own figures are left out of this run: %s\n", e.info.Name, oneLine(database.Redact(err.Error())))
		return nil
	}
	return figures
}

func (e *engine) loadStats(res *load.Result, drainEnd time.Time, r *run) results.Load {
	l := results.Load{
		Concurrency:       r.concurrency,
		CompletedRequests: res.Completed,
		FailedRequests:    res.Failed,
		WarmupRequests:    res.WarmupCompleted + res.WarmupFailed,
		ErrorCounts:       res.ErrorCounts,
		LatencyMs:         results.Latency(res.Latency.Summary()),
		AcquireWaitMs:     results.Latency(res.AcquireWait.Summary()),
	}
	if l.ErrorCounts == nil {
		l.ErrorCounts = map[string]int64{}
	}
	c := e.cfg
	l.Retries = &results.Retries{MaxTries: c.MaxTries, Classes: c.RetryClasses,
		RetriedRequests: res.Retries.RetriedRequests, TriesPerRequest: res.Retries.Tries,
		RetriesByClass: res.Retries.ByClass, FailedAfterLastTryByClass: res.Retries.OutOfTries}
	end := res.End
	if drainEnd.After(end) {
		end = drainEnd
	}
	l.DurationMs = units.Ms(end.Sub(res.MeasureStart))
	l.IntakeMs = units.Ms(res.End.Sub(res.MeasureStart))
	l.DrainMs = units.Ms(end.Sub(res.End))
	if l.DurationMs > 0 {
		l.ThroughputRPS = units.Round(float64(res.Completed)/(l.DurationMs/1000), 1)
	}
	if enc, err := res.Latency.Encode(); err == nil {
		l.LatencyHistogram = enc
	}
	if enc, err := res.AcquireWait.Encode(); err == nil {
		l.AcquireWaitHistogram = enc
	}
	from := res.MeasureStart.UTC()
	l.MeasuredFrom = &from
	l.OpenLoop = openLoopStats(res)
	return l
}

func (e *engine) close() error {
	var err error
	if e.samples != nil {
		err = errors.Join(err, e.samples.Close())
	}
	return errors.Join(err, e.closeDatabase())
}

// closeDatabase closes what a kind's runs opened (runAll): the pooler, the server, the queues'
// backend, the network's proxies; the next kind opens its own.
func (e *engine) closeDatabase() error {
	var err error
	err = errors.Join(err, e.pooler.Close()) // before the server: its connections end first
	if e.target != nil {
		bound := 30 * time.Second
		switch {
		case e.hardCtx.Err() != nil:
			bound = abortedBound
		case e.unreachable:
			bound = attemptBound
		}
		err = errors.Join(err, e.target.CloseWithin(bound))
	}
	err = errors.Join(err, e.queues.Close())
	err = errors.Join(err, e.net.Close())
	e.pooler, e.target, e.db, e.queues = nil, nil, nil, nil // the network's stay: the report's network is read from them (finishNetwork)
	return err
}

func (e *engine) writeReport(stdout io.Writer) error {
	if e.cfg.Output == "" {
		return e.report.Write(stdout)
	}
	return e.report.WriteFile(e.cfg.Output)
}

// openDatabase opens the run's database, of the kind the flags name (package dbkind), sized
// for the invocation's sessions. An error reaching a server given by URL is bad input.
func (e *engine) openDatabase(ctx context.Context) error {
	c := e.cfg
	target, kind, err := dbkind.Open(ctx, dbkind.Options{
		Database: database.Options{URL: c.DatabaseURL(), Schema: c.Schema, KeepSchema: c.KeepsSchema(), ReuseSchema: c.ReuseSchema, SQL: e.info.SQL},
		MySQL:    c.OnMySQL(), Faults: c.Faults,
		Dir: c.PgDir, Unsafe: c.UnsafeNoFsync, MaxConnections: e.sessionsNeeded() + serverMargin,
		PgBinDir: c.PgBinDir, PgUser: c.PgUser, PgDownload: c.PgDownload,
		Notice:        func(msg string) { fmt.Fprintf(e.stderr, "%s: %s\n", e.info.Name, msg) },
		MariaDBBinDir: c.MariaDBBinDir, DeadlockDetectOff: c.InnoDBDeadlockDetect == "off",
		LockWaitTimeoutMs: c.InnoDBLockWaitTimeoutMs, FlushLogAtTrxCommit: c.InnoDBFlushLogAtTrxCommit,
	})
	if bad := (dbkind.BadInput{}); errors.As(err, &bad) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	e.target, e.db = target, kind
	return nil
}

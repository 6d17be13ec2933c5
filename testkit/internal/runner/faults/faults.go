// Package faults owns fault injection: the --fault kinds and their syntax (Parse), a soak's
// rotation of them (Rotation, for --fault-every), the session settings the *-timeout faults
// put on the load's connections (SessionSettings), and the injector that strikes the timed
// faults of one run at their moment, one at a time, and records what each did
// (results.FaultEvent). It acts only through the Target the engine hands it — a
// connection to the run's database, the temporary server, the flushers' pause gate and the
// hooks a workload brings (a queue consumer to kill) — and knows nothing of suites, modes or
// the engine's lifecycle.
package faults

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/results/units"
	"github.com/hotspotkit/hotspotkit/sqldb"
)

// Fault kinds for --fault.
const (
	TerminateBackends = "terminate-backends" // KIND@T: the load's and flushers' sessions ended (pg_terminate_backend, KILL CONNECTION)
	RestartPostgres   = "restart-postgres"   // KIND@T: stop and start the managed server (same data, same port)
	PauseFlush        = "pause-flush"        // KIND@T+D: flushers stop for D (the queue fills up)
	KillConsumer      = "kill-consumer"      // KIND@T: a queue backend's consumer dies (Redis backend)
	CrashPostgres     = "crash-postgres"     // KIND@T: the managed server dies without a checkpoint and recovers
	CrashRedis        = "crash-redis"        // KIND@T[+D]: the managed redis-server is SIGKILLed, back after D
	KillFlusher       = "kill-flusher"       // KIND@T: a flush's backend is terminated between its COPY and COMMIT
	KillWorker        = "kill-worker"        // KIND@T: a suite's own worker stops mid-job without releasing what it holds
	RedisFailover     = "redis-failover"     // KIND@T: a managed cluster's master SIGKILLed, its replica promoted
	RedisReshard      = "redis-reshard"      // KIND@T: slots of a managed cluster's master moved live to another
	PoolerRestart     = "pooler-restart"     // KIND@T: the temporary PgBouncer killed and started again on its port
	PoolerPause       = "pooler-pause"       // KIND@T+D: PAUSE on the pooler's database, RESUME after D (connections held, nothing answered)
	ConnStorm         = "conn-storm"         // KIND@T[=N]: N sessions opened through the service's path, used once, closed at once
	StatementTimeout  = "statement-timeout"  // KIND=MS: statement_timeout on the load's sessions
	LockTimeout       = "lock-timeout"       // KIND=MS: lock_timeout on the load's sessions

	// The network faults strike the path of one target (NetPostgres or NetRedis), through the
	// in-process proxy the service's connections then take (testkit/servers/netdelay).
	NetDelay     = "net-delay"     // KIND:TARGET@T+D[=EXTRA]: EXTRA more round trip for D
	NetBlackhole = "net-blackhole" // KIND:TARGET@T[+D]: bytes held both ways for D (no D: until the run ends), nothing answered, no RST
	NetReset     = "net-reset"     // KIND:TARGET@T: every connection on the path reset at once
)

// The targets of a network fault.
const (
	NetPostgres = "pg"
	NetRedis    = "redis"
	// NetPooler is the hop between the service and its pooler (--pooler); with a pooler,
	// NetPostgres is the pooler's hop to PostgreSQL.
	NetPooler = "pooler"
)

// Network are the network faults' kinds.
var Network = []string{NetDelay, NetBlackhole, NetReset}

// DefaultNetDelay is the extra round trip of a net-delay given no =EXTRA.
const DefaultNetDelay = 50 * time.Millisecond

// Timed are the kinds that strike at a moment (KIND@T).
var Timed = []string{TerminateBackends, RestartPostgres, CrashPostgres, PauseFlush, KillConsumer, KillFlusher, CrashRedis, RedisFailover, RedisReshard, KillWorker, ConnStorm, PoolerRestart, PoolerPause}

// Declared are the kinds a suite's own workload causes (its Workload.Faults hook): a suite
// takes them only by naming them in its Info.Faults, never by leaving Info.Faults nil (every
// other kind), since no other suite has the hook.
var Declared = []string{KillWorker}

// Takes reports whether a suite whose Info.Faults is declared can take a fault of kind.
func Takes(declared []string, kind string) bool {
	if declared == nil {
		return !slices.Contains(Declared, kind)
	}
	return slices.Contains(declared, kind)
}

// DefaultStormSessions is the sessions of a conn-storm given no =N; MaxStormSessions the most
// one may open (each is a backend process of the server's, and takes a slot of its
// max_connections: the temporary server is sized for them).
const (
	DefaultStormSessions = 64
	MaxStormSessions     = 1000
)

// DefaultRedisDown is how long crash-redis keeps the server down when no +D is given.
const DefaultRedisDown = time.Second

// Fault is one parsed --fault.
type Fault struct {
	Kind string
	// At is when a timed fault strikes, from the start of the run's load.
	At time.Duration
	// For is how long pause-flush lasts, or crash-redis keeps the server down.
	For time.Duration
	// Setting is the value in milliseconds of a *-timeout fault.
	Setting int
	// Target is a network fault's: NetPostgres or NetRedis; Extra a net-delay's added round trip.
	Target string
	Extra  time.Duration
	// Sessions is the sessions a conn-storm opens.
	Sessions int
	raw      string
}

// IsNetwork reports whether the fault strikes a network path.
func (f Fault) IsNetwork() bool { return slices.Contains(Network, f.Kind) }

func (f Fault) String() string { return f.raw }

// IsSetting reports whether the fault is a session setting rather than a timed strike.
func (f Fault) IsSetting() bool { return f.Kind == StatementTimeout || f.Kind == LockTimeout }

// Parse reads "terminate-backends@1s", "pause-flush@2s+3s", "lock-timeout=50",
// "net-blackhole:pg@2s+3s", "net-delay:redis@2s+1s=20ms".
func Parse(s string) (Fault, error) {
	if strings.HasPrefix(s, "net-") {
		return parseNetwork(s)
	}
	if strings.HasPrefix(s, ConnStorm+"@") {
		return parseStorm(s)
	}
	f := Fault{raw: s}
	if kind, ms, ok := strings.Cut(s, "="); ok {
		f.Kind = kind
		if !f.IsSetting() {
			return f, fmt.Errorf("--fault %q: only statement-timeout and lock-timeout take =MS", s)
		}
		n, err := strconv.Atoi(ms)
		if err != nil || n < 1 {
			return f, fmt.Errorf("--fault %q: %s wants a positive number of milliseconds", s, kind)
		}
		f.Setting = n
		return f, nil
	}
	kind, when, ok := strings.Cut(s, "@")
	f.Kind = kind
	if !ok {
		return f, fmt.Errorf("--fault %q: want KIND@TIME (kinds: %s) or statement-timeout=MS / lock-timeout=MS", s, strings.Join(Timed, ", "))
	}
	if !slices.Contains(Timed, kind) {
		return f, fmt.Errorf("--fault %q: unknown fault %q (kinds: %s, statement-timeout=MS, lock-timeout=MS)", s, kind, strings.Join(Timed, ", "))
	}
	at, dur, hasDur := strings.Cut(when, "+")
	var err error
	if f.At, err = time.ParseDuration(at); err != nil || f.At < 0 {
		return f, fmt.Errorf("--fault %q: %q is not a duration such as 1s or 500ms", s, at)
	}
	switch {
	case (kind == PauseFlush || kind == PoolerPause) && !hasDur:
		return f, fmt.Errorf("--fault %q: %s wants @T+D, e.g. %s@1s+2s", s, kind, kind)
	case kind == CrashRedis && !hasDur:
		f.For = DefaultRedisDown
	case hasDur && kind != PauseFlush && kind != CrashRedis && kind != PoolerPause:
		return f, fmt.Errorf("--fault %q: only pause-flush, pooler-pause and crash-redis take +D", s)
	case hasDur:
		if f.For, err = time.ParseDuration(dur); err != nil || f.For <= 0 {
			return f, fmt.Errorf("--fault %q: %q is not a positive duration", s, dur)
		}
	}
	return f, nil
}

// parseNetwork reads a network fault: KIND:TARGET@T[+D][=EXTRA].
func parseNetwork(s string) (Fault, error) {
	f := Fault{raw: s}
	syntax := fmt.Errorf("--fault %q: want net-delay:TARGET@T+D[=EXTRA], net-blackhole:TARGET@T[+D] or net-reset:TARGET@T, TARGET pg, redis or pooler", s)
	head, when, ok := strings.Cut(s, "@")
	if !ok {
		return f, syntax
	}
	kind, target, ok := strings.Cut(head, ":")
	f.Kind, f.Target = kind, target
	switch {
	case !slices.Contains(Network, kind):
		return f, fmt.Errorf("--fault %q: unknown fault %q (network kinds: %s)", s, kind, strings.Join(Network, ", "))
	case !ok || (target != NetPostgres && target != NetRedis && target != NetPooler):
		return f, fmt.Errorf("--fault %q: %s wants a target, pg, redis or pooler (e.g. %s:pg@2s)", s, kind, kind)
	}
	when, extra, hasExtra := strings.Cut(when, "=")
	at, dur, hasDur := strings.Cut(when, "+")
	var err error
	if f.At, err = time.ParseDuration(at); err != nil || f.At < 0 {
		return f, fmt.Errorf("--fault %q: %q is not a duration such as 1s or 500ms", s, at)
	}
	switch {
	case kind == NetReset && (hasDur || hasExtra):
		return f, fmt.Errorf("--fault %q: net-reset strikes at once: it takes @T only", s)
	case kind == NetDelay && !hasDur:
		return f, fmt.Errorf("--fault %q: %s lasts a window: want %s:%s@T+D, e.g. %s:%s@2s+3s", s, kind, kind, target, kind, target)
	case hasExtra && kind != NetDelay:
		return f, fmt.Errorf("--fault %q: only net-delay takes =EXTRA", s)
	}
	if hasDur {
		if f.For, err = time.ParseDuration(dur); err != nil || f.For <= 0 {
			return f, fmt.Errorf("--fault %q: %q is not a positive duration", s, dur)
		}
	}
	if kind == NetDelay {
		f.Extra = DefaultNetDelay
		if hasExtra {
			if f.Extra, err = time.ParseDuration(extra); err != nil || f.Extra <= 0 || f.Extra > MaxNetDelay {
				return f, fmt.Errorf("--fault %q: the extra round trip %q must be a duration above 0 and at most %s", s, extra, MaxNetDelay)
			}
		}
	}
	return f, nil
}

// parseStorm reads a conn-storm: conn-storm@T[=N].
func parseStorm(s string) (Fault, error) {
	f := Fault{Kind: ConnStorm, raw: s, Sessions: DefaultStormSessions}
	when, n, hasN := strings.Cut(strings.TrimPrefix(s, ConnStorm+"@"), "=")
	var err error
	if f.At, err = time.ParseDuration(when); err != nil || f.At < 0 {
		return f, fmt.Errorf("--fault %q: %q is not a duration such as 1s or 500ms (want conn-storm@T[=N])", s, when)
	}
	if hasN {
		if f.Sessions, err = strconv.Atoi(n); err != nil || f.Sessions < 1 || f.Sessions > MaxStormSessions {
			return f, fmt.Errorf("--fault %q: a conn-storm's sessions %q must be a number from 1 to %d", s, n, MaxStormSessions)
		}
	}
	return f, nil
}

// MaxNetDelay caps a net-delay's extra round trip (the proxy's own cap, netdelay.MaxRTT).
const MaxNetDelay = time.Second

// SessionSettings are the server settings the faults put on the load's sessions, as dialect d
// names and writes them: PostgreSQL's statement_timeout and lock_timeout in milliseconds;
// MariaDB's max_statement_time in seconds (MySQL 8 has no such setting: its
// max_execution_time bounds a SELECT only, and the engine refuses statement-timeout there) and
// InnoDB's innodb_lock_wait_timeout in whole seconds (the plan refuses a lock-timeout that is
// not a whole number of them on MySQL).
func SessionSettings(faults []Fault, d sqldb.Dialect) map[string]string {
	out := map[string]string{}
	for _, f := range faults {
		switch {
		case f.Kind == StatementTimeout && d == sqldb.MySQL:
			out["max_statement_time"] = strconv.FormatFloat(float64(f.Setting)/1000, 'f', -1, 64)
		case f.Kind == LockTimeout && d == sqldb.MySQL:
			out["innodb_lock_wait_timeout"] = strconv.Itoa((f.Setting + 999) / 1000)
		case f.Kind == StatementTimeout:
			out["statement_timeout"] = strconv.Itoa(f.Setting)
		case f.Kind == LockTimeout:
			out["lock_timeout"] = strconv.Itoa(f.Setting)
		}
	}
	return out
}

// Hook injects a fault a workload knows how to cause (e.g. killing a queue consumer).
type Hook func(ctx context.Context) (detail string, err error)

// Target is what the faults of one run act on; the engine provides it.
type Target interface {
	// Terminate ends, from a connection of its own, the run's live sessions named one of
	// apps (pg_terminate_backend on PostgreSQL, KILL CONNECTION on MySQL), and says how many.
	Terminate(ctx context.Context, apps ...string) (int, error)
	// ConnectService opens a connection to the run's database as the service's connections
	// reach it (the load's pool's path: through the Route, a pooler), for a conn-storm.
	ConnectService(ctx context.Context, appName string) (sqldb.Conn, error)
	// RestartPostgres stops the temporary server cleanly and starts it again in place.
	RestartPostgres(ctx context.Context) error
	// CrashPostgres stops the temporary server without a checkpoint and starts it again in
	// place; it says what happened (crash recovery or not).
	CrashPostgres(ctx context.Context) (detail string, err error)
	// Flushers returns the pause gate of the run's flushers; ok is false when the mode has
	// none.
	Flushers() (pause, resume func(), ok bool)
	// Hook returns the workload's own injector for kind, or nil.
	Hook(kind string) Hook
	// RestartPooler SIGKILLs the temporary PgBouncer and starts it again on its port; it says
	// what the pooler held when it died.
	RestartPooler(ctx context.Context) (detail string, err error)
	// PausePooler PAUSEs the pooler's database for d, then RESUMEs it (also when ctx ends
	// first); it says how long the PAUSE took to take hold.
	PausePooler(ctx context.Context, d time.Duration) (detail string, err error)
	// Path is the proxy the service's connections to target (NetPostgres, NetRedis,
	// NetPooler) go through, for the network faults; an error when there is none.
	Path(target string) (Path, error)
	// Mode names the run's mode in errors.
	Mode() string
}

// RedisTarget is what the Redis faults (crash-redis, redis-failover, redis-reshard) act on: a
// Target whose run's queue is on a Redis the run manages implements it too, and the injector
// finds it by type assertion.
type RedisTarget interface {
	// CrashRedis SIGKILLs the managed redis-server and starts it again after down; it says
	// what Redis held when it died.
	CrashRedis(ctx context.Context, down time.Duration) (detail string, err error)
	// FailoverRedis SIGKILLs a master of the managed cluster and returns once its replica
	// is promoted and the cluster is ok; it says which master, and how long it took.
	FailoverRedis(ctx context.Context) (detail string, down time.Duration, err error)
	// ReshardRedis moves slots of a master of the managed cluster to another, live; it says
	// which and how many, and how long it took.
	ReshardRedis(ctx context.Context) (detail string, took time.Duration, err error)
}

// errNoRedis is a Redis fault on a run whose queue is not on Redis (its Target is no
// RedisTarget).
var errNoRedis = errors.New("needs an async mode on --queue-backend redis")

// Path is a network path the network faults strike (a *netdelay.Proxy).
type Path interface {
	Delay(extra, window time.Duration) error
	Blackhole(window time.Duration) error
	Reset() int
	// Heal ends a Delay's or a Blackhole's window at once.
	Heal()
}

// Injector runs the timed faults of one run.
type Injector struct {
	t      Target
	start  time.Time
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// pausing counts pause-flush faults in effect: the drain waits for them, or closing the
	// queue would resume the flushers early. Once the drain waits (pausesOver), no pause
	// begins: Add after Wait began would race, and a pause would stall the drain.
	pausing    sync.WaitGroup
	pauseMu    sync.Mutex
	pausesOver bool

	// striking serialises the faults that act on a server or a session: a crash due while
	// a restart is still under way strikes once the server is back.
	striking sync.Mutex

	mu     sync.Mutex
	events []results.FaultEvent
	// storms counts the statements the conn-storms ran (StormStatements).
	storms  int64
	struck  []Path // the paths a net-delay or net-blackhole struck: healed by Stop
	lasting []Path // the paths a blackhole without an end struck: healed by Lift
}

// Start schedules faults relative to now; ctx ends every fault still waiting or in effect.
func Start(ctx context.Context, t Target, faults []Fault) *Injector {
	ctx, cancel := context.WithCancel(ctx)
	in := &Injector{t: t, start: time.Now(), cancel: cancel}
	for _, f := range faults {
		if f.IsSetting() {
			in.record(results.FaultEvent{Kind: f.Kind, Detail: fmt.Sprintf("%d ms on every load session", f.Setting)})
			continue
		}
		in.wg.Add(1)
		go func(f Fault) {
			defer in.wg.Done()
			select {
			case <-ctx.Done():
				in.record(results.FaultEvent{Kind: f.Kind, AtMs: units.Ms(f.At),
					Error: fmt.Sprintf("not injected: the run was over after %.0f ms, before the fault was due", units.Ms(time.Since(in.start)))})
				return
			case <-time.After(time.Until(in.start.Add(f.At))):
			}
			in.inject(ctx, f)
		}(f)
	}
	return in
}

func (in *Injector) record(ev results.FaultEvent) {
	in.mu.Lock()
	in.events = append(in.events, ev)
	in.mu.Unlock()
}

func (in *Injector) inject(ctx context.Context, f Fault) {
	if f.Kind != PauseFlush && f.Kind != PoolerPause { // a pause lasts; it holds nothing the others act on
		in.striking.Lock()
		defer in.striking.Unlock()
	}
	ev := results.FaultEvent{Kind: f.Kind, AtMs: units.Ms(time.Since(in.start))}
	var err error
	switch f.Kind {
	case TerminateBackends:
		ev.Detail, err = in.terminateBackends(ctx)
	case RestartPostgres:
		t0 := time.Now()
		err = in.t.RestartPostgres(ctx)
		ev.Duration = units.Ms(time.Since(t0))
		ev.Detail = "server stopped and started on the same port and data"
	case CrashPostgres:
		t0 := time.Now()
		ev.Detail, err = in.t.CrashPostgres(ctx)
		ev.Duration = units.Ms(time.Since(t0))
	case CrashRedis, RedisFailover, RedisReshard:
		var took time.Duration
		ev.Detail, took, err = in.strikeRedis(ctx, f)
		ev.Duration = units.Ms(took)
	case PauseFlush:
		ev.Duration = units.Ms(f.For)
		ev.Detail, err = in.pauseFlush(ctx, f.For)
	case PoolerRestart:
		t0 := time.Now()
		ev.Detail, err = in.t.RestartPooler(ctx)
		ev.Duration = units.Ms(time.Since(t0))
	case PoolerPause:
		ev.Duration = units.Ms(f.For)
		ev.Detail, err = in.t.PausePooler(ctx, f.For)
	case NetDelay, NetBlackhole, NetReset:
		ev.Duration = units.Ms(f.For)
		ev.Detail, err = in.strikeNetwork(f)
	case ConnStorm:
		ev.Storm, err = in.connStorm(ctx, f.Sessions)
		ev.Duration = ev.Storm.TookMs
		ev.Detail = ev.Storm.Detail()
	default:
		hook := in.t.Hook(f.Kind)
		if hook == nil {
			err = fmt.Errorf("%s does not apply to the %s mode with this backend", f.Kind, in.t.Mode())
			break
		}
		ev.Detail, err = hook(ctx)
	}
	if err != nil {
		ev.Error = err.Error()
	}
	in.record(ev)
}

// strikeRedis strikes a Redis fault, if the run's queue is on Redis; took is how long the
// server was down (crash-redis: until it was started again), or the failover or reshard took.
func (in *Injector) strikeRedis(ctx context.Context, f Fault) (detail string, took time.Duration, err error) {
	rt, ok := in.t.(RedisTarget)
	if !ok {
		return "", 0, errNoRedis
	}
	switch f.Kind {
	case CrashRedis:
		t0 := time.Now()
		detail, err = rt.CrashRedis(ctx, f.For)
		return detail, time.Since(t0), err
	case RedisFailover:
		return rt.FailoverRedis(ctx)
	}
	return rt.ReshardRedis(ctx)
}

// WorkersApp is the application_name of the sessions of a suite's own pools (its workers':
// testkit.Run.NewPool), which terminate-backends ends with the load's and the flushers'.
const WorkersApp = "hotspotkit-workers"

// ServiceApps are the names of the sessions terminate-backends ends: the load's, the
// flushers' and a suite's workers' (not the monitor's, not the engine's own).
var ServiceApps = []string{"hotspotkit-load", "hotspotkit-flush", WorkersApp}

// terminateBackends ends every session of the load, the flushers and a suite's workers.
func (in *Injector) terminateBackends(ctx context.Context) (string, error) {
	n, err := in.t.Terminate(ctx, ServiceApps...)
	return fmt.Sprintf("%d sessions terminated", n), err
}

// strikeNetwork strikes a network fault on its target's path; a windowed one returns at once
// and lasts on its own.
func (in *Injector) strikeNetwork(f Fault) (string, error) {
	p, err := in.t.Path(f.Target)
	if err != nil {
		return "", err
	}
	if f.Kind != NetReset {
		in.mu.Lock()
		if f.Lasting() {
			in.lasting = append(in.lasting, p)
		} else {
			in.struck = append(in.struck, p)
		}
		in.mu.Unlock()
	}
	switch {
	case f.Kind == NetDelay:
		return fmt.Sprintf("%s more round trip to %s for %s", f.Extra, f.Target, f.For), p.Delay(f.Extra, f.For)
	case f.Lasting():
		return fmt.Sprintf("every byte to and from %s held until the run ends: nothing answered, no RST", f.Target), p.Blackhole(untilTheEnd)
	case f.Kind == NetBlackhole:
		return fmt.Sprintf("every byte to and from %s held for %s: nothing answered, no RST; delivered in order after", f.Target, f.For), p.Blackhole(f.For)
	}
	return fmt.Sprintf("%d connections to %s reset (RST both ways)", p.Reset(), f.Target), nil
}

func (in *Injector) pauseFlush(ctx context.Context, d time.Duration) (string, error) {
	pause, resume, ok := in.t.Flushers()
	if !ok {
		return "", fmt.Errorf("the %s mode has no flushers to pause", in.t.Mode())
	}
	in.pauseMu.Lock()
	if in.pausesOver {
		in.pauseMu.Unlock()
		return "", errors.New("not injected: the load was over before the pause began")
	}
	in.pausing.Add(1)
	in.pauseMu.Unlock()
	defer in.pausing.Done()
	pause()
	defer resume()
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
	return fmt.Sprintf("flushers paused for %s", d), nil
}

// Started is the moment the faults' times count from.
func (in *Injector) Started() time.Time { return in.start }

// WaitPauses returns when no pause-flush is in effect; none begins afterwards.
func (in *Injector) WaitPauses() {
	in.pauseMu.Lock()
	in.pausesOver = true
	in.pauseMu.Unlock()
	in.pausing.Wait()
}

// untilTheEnd is the window of a blackhole without an end: Lift ends it.
const untilTheEnd = 100 * 365 * 24 * time.Hour

// Lasting reports whether f lasts until the run ends (a net-blackhole without +D): Stop leaves
// it in force, through the drain and the wait for the path before verification; Lift ends it.
func (f Fault) Lasting() bool { return f.Kind == NetBlackhole && f.For == 0 }

// Lift ends the faults that last until the run ends (Lasting), once the run is accounted for.
func (in *Injector) Lift() {
	in.mu.Lock()
	lasting := in.lasting
	in.lasting = nil
	in.mu.Unlock()
	for _, p := range lasting {
		p.Heal()
	}
}

// Stop cancels faults that have not struck yet, ends those still in effect but the lasting
// ones (a pause, a network fault's window: the run's faults end with it, and closing its
// connections does not wait out a blackhole) and returns what happened, in time order.
func (in *Injector) Stop() []results.FaultEvent {
	in.cancel()
	in.wg.Wait()
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, p := range in.struck {
		p.Heal()
	}
	slices.SortFunc(in.events, func(a, b results.FaultEvent) int { return cmp.Compare(a.AtMs, b.AtMs) })
	return in.events
}

// Rotation is a soak's schedule (--fault-every): kinds in turn, one every `every` from
// `every` on, while before until. A pause-flush lasts a quarter of the interval (at most
// 2 s); a crash-redis keeps the server down DefaultRedisDown; a conn-storm opens
// DefaultStormSessions.
func Rotation(kinds []string, every, until time.Duration) []Fault {
	var out []Fault
	if len(kinds) == 0 || every <= 0 {
		return nil
	}
	for i, at := 0, every; at < until; i, at = i+1, at+every {
		f := Fault{Kind: kinds[i%len(kinds)], At: at}
		switch f.Kind {
		case PauseFlush:
			f.For = min(every/4, 2*time.Second)
		case CrashRedis:
			f.For = DefaultRedisDown
		case ConnStorm:
			f.Sessions = DefaultStormSessions
		}
		f.raw = fmt.Sprintf("%s@%s", f.Kind, at)
		if f.For > 0 {
			f.raw += "+" + f.For.String()
		}
		out = append(out, f)
	}
	return out
}

// Package monitor owns what a run observes about the database while the load runs: lock
// waiters attributed to the table (and the row) they queue on, the longest wait, blocked
// sessions and their blockers, the service's sessions and what they are doing, and the load
// pool's usage. It samples on its own dedicated connection (never the load's pool), keeps the
// maxima for the report and writes every sample as one NDJSON line. It must not change
// anything in the database.
//
// The sampling loop, the maxima, the samples file, the pool's usage, the progress and the
// process's figures are the same for every kind of database; what a kind shows of its locks
// and sessions is a View, read once per sample on the view's own connection. PostgreSQL's
// view (pg.go, Start) reads pg_locks and pg_stat_activity; InnoDB's lives in package innodb
// (StartView).
//
// Reading a total: with TotalSQL, each sample also times that query (the read of one hot
// logical row, a sum over its slots) on the monitor's connection while the load runs.
//
// Waiters per physical row: each sample counts, per table, the waiters queued for one physical
// row (Waiter.Row), and the run keeps the largest count per table. It is what --slots
// changes: the waiters of a hot table spread over its slots' rows.
//
// The process itself: each sample records its share of the machine's processors since the
// sample before (package clientcost), and the run keeps the most goroutines seen.
package monitor

import (
	"context"
	"maps"
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/hotspotkit/hotspotkit/hist"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/results/units"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/clientcost"
)

// Unattributed names waiters whose table could not be determined.
const Unattributed = "(unattributed)"

// Config shapes a monitor.
type Config struct {
	// Interval between lock samples (--monitor-interval-ms).
	Interval time.Duration
	// SlowInterval between a view's slow readings (PostgreSQL's pg_blocking_pids) and the
	// PendingSQL probe; at least 1s.
	SlowInterval time.Duration
	// HotTables are always present in max_waiters_by_relation (0 when nothing waited).
	HotTables []string
	// Pool is the load's pool (optional: PgxPool, SQLPool).
	Pool Pool
	// Queue reports the async queue's depth and pending depth (optional).
	Queue func() (depth, pending int64)
	// PendingSQL counts what is still to be flushed (e.g. the outbox), run at SlowInterval (optional).
	PendingSQL string
	// TotalSQL reads one hot logical row's total (with slots, a sum over them); each sample
	// times it (optional).
	TotalSQL string
	// Progress reports completed and failed requests so far (optional).
	Progress func() (completed, failed int64)
	// Samples receives every sample (optional).
	Samples *SampleWriter
	// Process adds the process's RSS, goroutines and open sockets to every sample and keeps
	// them in Series (reading /proc: set it only when something reads them — the samples
	// file, a soak's figures).
	Process bool
	// Pooler reads the pooler between the service and the database at each sample, on a
	// connection of its own to the pooler's console (optional: --pooler).
	Pooler func(ctx context.Context) (*results.PoolerSample, error)
	// Label is copied into every sample.
	Label results.Sample
}

// View is what one kind of database shows the monitor of its locks and sessions, read on a
// connection of the view's own (opened before the monitor starts, reopened by the view when
// lost, closed by Close). The monitor calls it from one goroutine at a time.
type View interface {
	// Read takes the database's part of one sample; slow is set every SlowInterval, for
	// what is too costly to read at every sample.
	Read(ctx context.Context, slow bool) Reading
	// Count runs a query of one integer (Config.PendingSQL).
	Count(ctx context.Context, sql string) (int64, error)
	// Run runs a query and reads its rows (Config.TotalSQL, which the monitor times).
	Run(ctx context.Context, sql string) error
	// Statements is how many transactions the view committed on the database so far: a
	// figure of the run's commits leaves them out. Safe to call at any time.
	Statements() int64
	// Close closes the view's connection.
	Close(ctx context.Context)
}

// Paced is a View that must not be read more often than MinInterval: the monitor samples it
// at that interval at least (LockMonitor.IntervalMs says which it used).
type Paced interface {
	MinInterval() time.Duration
}

// SampleTimeout bounds one sample's reads (a sample that takes longer fails, counted in
// sample_errors), unless the view is a Bounded one.
const SampleTimeout = 5 * time.Second

// Bounded is a View whose sample may take longer than SampleTimeout: one that waits between
// its reads, or whose server takes seconds to answer under the load measured (InnoDB's lock
// tables at a thousand waiters).
type Bounded interface {
	SampleTimeout() time.Duration
}

// Reading is a view's part of one sample.
type Reading struct {
	// Err: the waiters could not be read, and nothing else was.
	Err error
	// Waiters are the service's sessions waiting for a lock, each attributed.
	Waiters []Waiter
	// WaitEvents counts the service's busy sessions by what they wait on (results.Sample's);
	// ServerSessions counts its sessions, idle ones too. SessionsErr: they could not be read
	// (the waiters were).
	WaitEvents     map[string]int64
	ServerSessions int64
	SessionsErr    error
	// SessionsOnClient counts those of its sessions waiting on the client: idle, or in a
	// transaction waiting for its next statement.
	SessionsOnClient int64
	// Blocked and Blockers count the blocked sessions and the distinct sessions blocking them
	// (nil: not read in this sample). BlockersErr: they could not be read, and the sample
	// counts as failed.
	Blocked, Blockers *int64
	BlockersErr       error
	// Blocker is the transaction blocking the most waiters, where the view names it.
	Blocker *results.Blocker
	// ServerLockWaits is every session's lock waits on the server, where the view has such a
	// count (InnoDB's Innodb_row_lock_current_waits).
	ServerLockWaits *int64
}

// Waiter is one session waiting for a lock.
type Waiter struct {
	// Table it queues on (Unattributed when unknown); Row the physical row within it, "" when
	// none can be named; LockType what kind of lock it waits for.
	Table, Row, LockType string
	// WaitMs is how long it has waited so far.
	WaitMs float64
}

// Monitor samples until Stop.
type Monitor struct {
	cfg     Config
	view    View
	start   time.Time
	cancel  context.CancelFunc
	done    chan struct{}
	poolAt0 PoolStats

	mu      sync.Mutex
	locks   results.LockMonitor
	pool    results.Pool
	minIdle int32
	waits   map[string]int64
	// totalRead times TotalSQL.
	totalRead *hist.Histogram
	// last is the latest sample, for Last.
	last results.Sample
	// series keeps every sample's progress and process figures, for Series.
	series []Point
	// pooler keeps the maxima of Config.Pooler's readings (Pooler).
	pooler results.Pooler
	// cpu gives each sample the process's share of the machine since the sample before;
	// maxGoroutines is the most goroutines at a sample.
	cpu           *clientcost.Sampler
	maxGoroutines int
	// conns is the process's open TCP sockets at the latest slow reading: counting them looks
	// at every descriptor (three system calls each), which ten times a second cost the client
	// more than the rest of a sample.
	conns int
}

// StartView begins sampling view, which must be open. Samples that fail are counted in
// sample_errors, never silently skipped; the view reconnects at the next sample when its
// connection was lost (a fault terminated it, the server restarted).
func StartView(ctx context.Context, view View, cfg Config) *Monitor {
	if cfg.Interval <= 0 {
		cfg.Interval = 100 * time.Millisecond
	}
	if p, ok := view.(Paced); ok {
		cfg.Interval = max(cfg.Interval, p.MinInterval())
	}
	if cfg.SlowInterval < time.Second {
		cfg.SlowInterval = time.Second
	}
	ctx, cancel := context.WithCancel(ctx)
	m := &Monitor{cfg: cfg, view: view, start: time.Now(), cancel: cancel, done: make(chan struct{}), minIdle: math.MaxInt32,
		waits: map[string]int64{}, totalRead: hist.New(), cpu: clientcost.NewSampler()}
	m.locks.IntervalMs = cfg.Interval.Milliseconds()
	m.locks.MaxWaitersByRelation = map[string]int64{}
	for _, t := range cfg.HotTables {
		m.locks.MaxWaitersByRelation[t] = 0
	}
	m.locks.MaxWaitersByLockType = map[string]int64{}
	m.locks.MaxWaitersPerRowByRelation = map[string]int64{}
	if cfg.Pool != nil {
		m.poolAt0 = cfg.Pool.Stats()
		m.pool.MaxConns = m.poolAt0.Max
		m.pool.IdleReserve = IdleReserve(m.poolAt0.Max)
	}
	go m.loop(ctx)
	return m
}

// IdleReserve is the idle-connection reserve below which a busy pool counts as under pressure:
// ⌈10% of max⌉ clamped to 2..10, as the reference gateway computes it.
func IdleReserve(maxConns int32) int32 {
	r := (maxConns + 9) / 10
	return min(max(r, 2), 10)
}

func (m *Monitor) loop(ctx context.Context) {
	defer close(m.done)
	tick := time.NewTicker(m.cfg.Interval)
	defer tick.Stop()
	var lastSlow time.Time
	for {
		now := time.Now()
		slow := now.Sub(lastSlow) >= m.cfg.SlowInterval
		if slow {
			lastSlow = now
		}
		m.sample(ctx, now, slow)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (m *Monitor) sample(ctx context.Context, now time.Time, slow bool) {
	s := m.cfg.Label
	s.Time = now
	s.ElapsedMs = units.Ms(now.Sub(m.start))
	timeout := SampleTimeout
	if b, ok := m.view.(Bounded); ok {
		timeout = b.SampleTimeout()
	}
	qctx, cancel := context.WithTimeout(ctx, timeout)
	r := m.view.Read(qctx, slow)
	err := r.Err
	sampleErr := err
	byRel := map[string]int64{}
	byType := map[string]int64{}
	byRow := map[[2]string]int64{}
	longest := map[string]float64{}
	var total int64
	var oldest float64
	if err == nil {
		for _, w := range r.Waiters {
			byRel[w.Table]++
			byType[w.LockType]++
			if w.Row != "" {
				byRow[[2]string{w.Table, w.Row}]++
			}
			total++
			oldest = max(oldest, w.WaitMs)
			longest[w.Table] = max(longest[w.Table], w.WaitMs)
		}
	}
	maxPerRow := map[string]int64{}
	for k, n := range byRow {
		maxPerRow[k[0]] = max(maxPerRow[k[0]], n)
	}
	blocked, blockers := r.Blocked, r.Blockers
	if err == nil && r.BlockersErr != nil {
		sampleErr = r.BlockersErr
		blocked, blockers = nil, nil
	}
	var pending int64
	var havePending bool
	if slow && sampleErr == nil && m.cfg.PendingSQL != "" {
		if n, e := m.view.Count(qctx, m.cfg.PendingSQL); e == nil {
			pending, havePending = n, true
		} else {
			sampleErr = e
		}
	}
	lockOK := sampleErr == nil
	waitErr := r.SessionsErr
	if err != nil {
		waitErr = nil // nothing after the waiters was read
	}
	if waitErr != nil && sampleErr == nil {
		sampleErr = waitErr
	}
	var readTime time.Duration
	if err == nil && m.cfg.TotalSQL != "" {
		t0 := time.Now()
		if e := m.view.Run(qctx, m.cfg.TotalSQL); e == nil {
			readTime = time.Since(t0)
		} else if sampleErr == nil {
			sampleErr = e
		}
	}
	var poolerErr error
	if m.cfg.Pooler != nil {
		s.Pooler, poolerErr = m.cfg.Pooler(qctx)
	}
	cancel()
	if ctx.Err() != nil {
		return // stopping: a cancelled query is not a sample
	}

	s.LockWaiters = total
	s.WaitersByRelation = byRel
	s.MaxWaitersPerRow = maxPerRow
	s.WaitersByLockType = byType
	s.OldestLockWaitMs = units.Round(oldest, 3)
	if err == nil {
		s.BlockedSessions, s.Blockers = blocked, blockers
		s.Blocker = r.Blocker
		s.ServerLockWaits = r.ServerLockWaits
		s.ServerSessions = r.ServerSessions
		s.SessionsOnClient = r.SessionsOnClient
		if waitErr == nil {
			s.WaitEvents = r.WaitEvents
		}
	}
	if havePending {
		s.OutboxPending = &pending
	}
	if m.cfg.Pool != nil {
		st := m.cfg.Pool.Stats()
		s.PoolAcquired, s.PoolIdle, s.PoolMax = st.Acquired, st.Idle, st.Max
		if s.PoolMax > 0 {
			s.PoolUsageBasisPts = int64(s.PoolAcquired) * 10000 / int64(s.PoolMax)
		}
		// Under pressure: busy, and no more than the reserve of connections left to hand out
		// without waiting — idle ones plus those the pool may still open. (Counting idle ones
		// alone would call a lazily growing pool "under pressure" at its first request.)
		s.PoolPressure = s.PoolAcquired > 0 && s.PoolMax-s.PoolAcquired <= IdleReserve(s.PoolMax)
	}
	if m.cfg.Queue != nil {
		d, p := m.cfg.Queue()
		s.QueueDepth, s.QueuePendingDepth = &d, &p
	}
	if m.cfg.Progress != nil {
		s.CompletedRequests, s.FailedRequests = m.cfg.Progress()
	}
	if m.cfg.Process {
		if slow {
			m.conns = openTCPSockets()
		}
		s.RSSBytes, s.Goroutines = processStats()
		s.OpenConns = m.conns
	}
	goroutines := s.Goroutines
	if !m.cfg.Process {
		goroutines = runtime.NumGoroutine()
	}
	s.ClientCPUShare = m.cpu.Share()
	if sampleErr != nil {
		s.SampleError = sampleErr.Error()
	}

	m.mu.Lock()
	if readTime > 0 {
		m.totalRead.Record(readTime)
	}
	m.maxGoroutines = max(m.maxGoroutines, goroutines)
	m.fold(&s, lockOK, longest)
	m.foldPooler(s.Pooler, poolerErr)
	if waitErr != nil && lockOK {
		m.locks.SampleErrors++ // the lock part was kept; the sample still failed in part
	}
	if m.cfg.Process {
		m.series = append(m.series, Point{Time: now, Completed: s.CompletedRequests, RSSBytes: s.RSSBytes,
			Goroutines: s.Goroutines, OpenConns: s.OpenConns})
	}
	lastPending := m.last.OutboxPending
	m.last = s
	if s.OutboxPending == nil { // counted every SlowInterval only: keep the latest count
		m.last.OutboxPending = lastPending
	}
	m.mu.Unlock()
	if m.cfg.Samples != nil {
		m.cfg.Samples.Write(&s)
	}
}

// fold keeps the maxima of one sample (longest: the longest wait by table); locks is guarded
// by mu.
func (m *Monitor) fold(s *results.Sample, lockOK bool, longest map[string]float64) {
	l := &m.locks
	if lockOK {
		l.Samples++
		if s.LockWaiters > 0 {
			l.WaiterSamples++
		}
		l.MaxLockWaiters = max(l.MaxLockWaiters, s.LockWaiters)
		for rel, n := range s.WaitersByRelation {
			l.MaxWaitersByRelation[rel] = max(l.MaxWaitersByRelation[rel], n)
		}
		for rel, n := range s.MaxWaitersPerRow {
			l.MaxWaitersPerRowByRelation[rel] = max(l.MaxWaitersPerRowByRelation[rel], n)
		}
		for lt, n := range s.WaitersByLockType {
			l.MaxWaitersByLockType[lt] = max(l.MaxWaitersByLockType[lt], n)
		}
		for rel, ms := range longest {
			if l.MaxLockWaitMsByRelation == nil {
				l.MaxLockWaitMsByRelation = map[string]float64{}
			}
			l.MaxLockWaitMsByRelation[rel] = max(l.MaxLockWaitMsByRelation[rel], units.Round(ms, 3))
		}
		l.MaxLockWaitMs = max(l.MaxLockWaitMs, s.OldestLockWaitMs)
		if w := s.ServerLockWaits; w != nil {
			l.MaxServerLockWaits = max(l.MaxServerLockWaits, *w)
		}
		if b := s.Blocker; b != nil && (l.Blocker == nil || b.Waiters >= l.Blocker.Waiters) {
			l.Blocker = b
		}
	} else {
		l.SampleErrors++
	}
	if s.BlockedSessions != nil {
		l.BlockerSamples++
		l.MaxBlockedSessions = max(l.MaxBlockedSessions, *s.BlockedSessions)
		l.MaxBlockers = max(l.MaxBlockers, *s.Blockers)
	}
	for event, n := range s.WaitEvents {
		m.waits[event] += n
	}
	m.pool.MaxServerSessions = max(m.pool.MaxServerSessions, s.ServerSessions)
	m.pool.SessionSamples += s.ServerSessions
	m.pool.ClientWaitSamples += s.SessionsOnClient
	if m.cfg.Pool != nil {
		p := &m.pool
		p.MaxAcquired = max(p.MaxAcquired, s.PoolAcquired)
		m.minIdle = min(m.minIdle, s.PoolIdle)
		p.MaxUsageBasisPoints = max(p.MaxUsageBasisPoints, s.PoolUsageBasisPts)
		if s.PoolPressure {
			p.PressureSamples++
		}
	}
}

// foldPooler keeps the maxima of one reading of the pooler (nil without one); guarded by mu.
func (m *Monitor) foldPooler(p *results.PoolerSample, err error) {
	if m.cfg.Pooler == nil {
		return
	}
	f := &m.pooler
	if err != nil || p == nil {
		f.SampleErrors++
		return
	}
	f.Samples++
	if p.ClientsWaiting > 0 {
		f.WaitingSamples++
	}
	f.MaxClientsActive = max(f.MaxClientsActive, p.ClientsActive)
	f.MaxClientsWaiting = max(f.MaxClientsWaiting, p.ClientsWaiting)
	f.MaxWaitMs = max(f.MaxWaitMs, p.MaxWaitMs)
	f.MaxServersActive = max(f.MaxServersActive, p.ServersActive)
	f.MaxServersIdle = max(f.MaxServersIdle, p.ServersIdle)
}

// Pooler returns the maxima of the pooler's readings so far (the zero Pooler without
// Config.Pooler); the caller fills in what the pooler is.
func (m *Monitor) Pooler() results.Pooler {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.pooler
}

// Last returns the latest sample (the zero Sample before the first one). Its maps are the
// sample's own and must not be modified.
func (m *Monitor) Last() results.Sample {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.last
}

// MaxGoroutines returns the most goroutines the process had at a sample so far.
func (m *Monitor) MaxGoroutines() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.maxGoroutines
}

// Series returns the progress and process figures of every sample so far, in time order
// (empty unless Config.Process).
func (m *Monitor) Series() []Point {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Point(nil), m.series...)
}

// WaitEvents returns the totals of the wait-event counts over every sample so far.
func (m *Monitor) WaitEvents() map[string]int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.waits)
}

// Statements returns how many transactions the monitor committed on its connection (the
// view's Statements).
func (m *Monitor) Statements() int64 { return m.view.Statements() }

// Stop ends sampling, takes one last sample (within ctx, and the sample's own bound), closes
// the view and returns the run's lock and pool summaries.
func (m *Monitor) Stop(ctx context.Context) (results.LockMonitor, results.Pool) {
	m.cancel()
	<-m.done
	m.sample(ctx, time.Now(), true)
	m.view.Close(ctx)
	m.mu.Lock()
	defer m.mu.Unlock()
	pool := m.pool
	if m.cfg.Pool != nil {
		st := m.cfg.Pool.Stats()
		pool.AcquireCount = st.Acquires - m.poolAt0.Acquires
		pool.EmptyAcquireCount = st.EmptyAcquires - m.poolAt0.EmptyAcquires
		pool.CanceledAcquireCount = st.CanceledAcquires - m.poolAt0.CanceledAcquires
		if m.minIdle != math.MaxInt32 {
			pool.MinIdle = m.minIdle
		}
	}
	if m.totalRead.Count() > 0 {
		read := results.Latency(m.totalRead.Summary())
		m.locks.TotalReadMs = &read
		if enc, err := m.totalRead.Encode(); err == nil {
			m.locks.TotalReadHistogram = enc
		}
	}
	return m.locks, pool
}

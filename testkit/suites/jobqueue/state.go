package jobqueue

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotspotkit/hotspotkit/hist"
)

// runState is what one run's workers saw, read by Verify and Figures: per job, how often it
// was claimed and run to its end (tally), and the run's counters and histograms. Everything
// is counted where it happened, from many goroutines at once.
type runState struct {
	g      jobs
	policy string // --on-complete (the river mode keeps its rows whatever it says)
	lease  time.Duration
	tally  tally

	inserted    atomic.Int64           // requests whose insert committed (acknowledged)
	claims      atomic.Int64           // claim statements (River: fetches) that took at least one job
	claimed     atomic.Int64           // jobs those claims took
	firstClaims atomic.Int64           // of those, the jobs' first claims
	completed   atomic.Int64           // jobs a completion completed (the queue counts a batch when it is written)
	fenced      atomic.Int64           // completions that found their claim gone (a later claim held the job)
	renewals    atomic.Int64           // lease renewals (statements)
	reaped      atomic.Int64           // leases the reaper found run out (jobs handed back)
	errors      atomic.Int64           // statements of the workers that failed (a fault struck them)
	lastError   atomic.Pointer[string] // the last of those, said when the jobs do not get done
	killed      atomic.Int64           // workers killed (kill-worker)
	held        atomic.Int64           // jobs the killed workers held: claimed and not completed
	maxDepth    atomic.Int64           // the most jobs inserted and not yet claimed at once

	claimLatency *hist.Sharded // a claim statement that took jobs, sent to its last row read
	timeInQueue  *hist.Sharded // a job's insert to its run's start

	firstInsert, lastInsert, lastClaim, done atomic.Int64 // unix ns
	// errorsAtDone is errors when every job was found done: what a stop does after (River's
	// cancelling the job of a killed worker) is not a fault's.
	errorsAtDone atomic.Int64
	// reruns are the claims beyond each job's first (Verify counts them), and rescued the jobs
	// River's rescuer handed back.
	reruns, rescued atomic.Int64

	before tableFigures // the queue's tables before the load (figures.go)
}

const shards = 16

func newRunState(g jobs, policy string, lease time.Duration) *runState {
	return &runState{g: g, policy: policy, lease: lease, claimLatency: hist.NewSharded(shards), timeInQueue: hist.NewSharded(shards)}
}

// failed counts a worker's statement that failed with err, and keeps err as the last.
func (s *runState) failed(err error) {
	s.errors.Add(1)
	text := err.Error()
	s.lastError.Store(&text)
}

// insertedOne counts an acknowledged insert.
func (s *runState) insertedOne(start time.Time) {
	s.firstInsert.CompareAndSwap(0, start.UnixNano())
	s.lastInsert.Store(time.Now().UnixNano())
	n := s.inserted.Add(1)
	if depth := n - s.firstClaims.Load(); depth > s.maxDepth.Load() {
		s.maxDepth.Store(depth) // a racy maximum: a figure, not a check
	}
}

// claimedOne counts a job a claim took, on attempt.
func (s *runState) claimedOne(id int64, attempt int32) {
	s.tally.at(id).claims.Add(1)
	s.claimed.Add(1)
	if attempt == 1 {
		s.firstClaims.Add(1)
	}
	s.lastClaim.Store(time.Now().UnixNano())
}

// startedOne records a job's time in the queue, from its insert to its run's start (a claimed
// job waits in its worker's batch too).
func (s *runState) startedOne(shard int, waited time.Duration) { s.timeInQueue.Record(shard, waited) }

// finishedOne counts a run of job id that reached its end.
func (s *runState) finishedOne(id int64) { s.tally.at(id).finished.Add(1) }

// tally counts per job, by the job's id (its request index), in chunks allocated as ids arrive:
// a run bounded by --duration does not know its job count in advance.
type tally struct {
	mu     sync.RWMutex
	chunks []*[chunk]perJob
}

const chunk = 1 << 14

type perJob struct {
	claims   atomic.Int32 // claims that took it (attempts a worker saw)
	finished atomic.Int32 // runs that reached their end
	tries    atomic.Int32 // insert tries (a retry looks for the job first)
}

// at is job id's counters.
func (t *tally) at(id int64) *perJob {
	c := int(id / chunk)
	t.mu.RLock()
	if c < len(t.chunks) && t.chunks[c] != nil {
		p := &t.chunks[c][id%chunk]
		t.mu.RUnlock()
		return p
	}
	t.mu.RUnlock()
	t.mu.Lock()
	defer t.mu.Unlock()
	for len(t.chunks) <= c {
		t.chunks = append(t.chunks, nil)
	}
	if t.chunks[c] == nil {
		t.chunks[c] = new([chunk]perJob)
	}
	return &t.chunks[c][id%chunk]
}

// runs are request indexes 0..n-1 as Verify counts them: how many must exist, how many of
// those were run to their end other than once, how many never, and the claims beyond each
// job's first (re-runs) and of jobs that must not exist.
type runs struct {
	finishedTwice, neverFinished, extraClaims, strays int64
}

func (t *tally) count(n int64, must func(int64) bool) runs {
	var out runs
	for i := range n {
		p := t.at(i)
		claims, finished := int64(p.claims.Load()), p.finished.Load()
		if !must(i) {
			if claims > 0 || finished > 0 {
				out.strays++
			}
			continue
		}
		switch {
		case finished > 1:
			out.finishedTwice++
		case finished == 0:
			out.neverFinished++
		}
		out.extraClaims += max(claims-1, 0)
	}
	return out
}

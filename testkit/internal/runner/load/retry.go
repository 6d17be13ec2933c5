package load

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hotspotkit/hotspotkit/sqldb"
)

// DefaultRetryClasses are the error classes a request is tried again for, as a gateway in
// front of PostgreSQL retries: the connection lost or refused, the server shutting down or
// starting up, a serialization failure, a deadlock, a lock timeout; and MySQL's ends of a
// session as PostgreSQL's 57P01 is (the server shutting down, 1053; MariaDB's KILL
// CONNECTION, 1927) — InnoDB's deadlock (1213) and lock wait timeout (1205) are retried only
// when named, as a MySQL client decides for its own transactions. 57014 (statement
// cancelled) is left out: it is also what a cancelled request gets, so it is retried only when
// a statement timeout is set on purpose (the caller adds it).
var DefaultRetryClasses = []string{ClassConnClosed, ClassConnError, "57P01", "57P03", "40001", "40P01", "55P03",
	sqldb.ClassMySQLServerShutdown, sqldb.ClassMariaDBConnectionKilled}

// retryableNames are the classes other than SQLSTATEs that a retry set may name.
var retryableNames = []string{ClassConnClosed, ClassConnError, ClassDeadlineExceeded, ClassRequestTimeout}

// ValidateRetryClass accepts a class that a retry set may name: a server's own (a SQLSTATE
// such as 40P01, five digits or capital letters; a MySQL error such as mysql-1213) or one of
// conn_closed, conn_error, deadline_exceeded, request_timeout.
func ValidateRetryClass(class string) error {
	if slices.Contains(retryableNames, class) || sqldb.IsServerClass(class) {
		return nil
	}
	return fmt.Errorf("unknown error class %q (want a SQLSTATE such as 40P01, a MySQL error such as mysql-1213, or one of %s)", class, strings.Join(retryableNames, ", "))
}

// Retry is the policy of Request.Try: how often and after how long a failed unit of a request
// (e.g. its transaction) is tried again. The zero value tries once.
type Retry struct {
	// MaxTries is the most tries per unit, the first included (0 counts as 1).
	MaxTries int
	// Backoff is the wait before the first retry; it doubles per retry up to BackoffCap
	// (0: 32 × Backoff), and each wait is jittered to between half and all of it.
	Backoff, BackoffCap time.Duration
	// Seed makes the jitter reproducible: the wait is a function of Seed, the request index
	// and the retry number.
	Seed int64
	// Classes are the retryable error classes (Classify). A COMMIT whose outcome is unknown
	// is retried when the error behind it is; the retry must then be idempotent.
	Classes []string
}

func (p *Retry) maxTries() int { return max(p.MaxTries, 1) }

// retryable reports whether err may be tried again under p: by its own class, or for an
// unknown outcome by the class of the error behind it.
func (p *Retry) retryable(err error) bool {
	class := Classify(err)
	var u *unknownError
	if class == ClassUnknownOutcome && errors.As(err, &u) {
		class = Classify(u.err)
	}
	return slices.Contains(p.Classes, class)
}

// backoff is the wait before retry number n (1 for the first retry) of request index.
func (p *Retry) backoff(index int64, n int) time.Duration {
	if p.Backoff <= 0 {
		return 0
	}
	ceiling := p.BackoffCap
	if ceiling <= 0 {
		ceiling = 32 * p.Backoff
	}
	d := p.Backoff
	for i := 1; i < n && d < ceiling; i++ {
		d *= 2
	}
	d = min(d, ceiling)
	x := splitmix(uint64(p.Seed) ^ splitmix(uint64(index)<<8|uint64(n&0xff)))
	frac := float64(x>>11) / (1 << 53)
	return d/2 + time.Duration(frac*float64(d/2))
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// Try runs fn, and runs it again while it fails with a class the run's Retry policy names and
// tries are left, waiting the policy's backoff in between (cut short by ctx). fn is one
// atomic unit of the request — a transaction, an enqueue — and must be idempotent: a try
// whose outcome was unknown may have taken effect. The request's latency includes every try
// and wait. Try returns fn's last error; the request is recorded as of unknown outcome when
// any try's outcome was unknown and none succeeded after it.
//
// Under a request timeout (Config.RequestTimeout) each try has its own: fn's context is
// cancelled when the try runs longer, fn's error is then of class request_timeout and an
// unknown outcome, and the next try (when the policy names the class) runs under a fresh
// context of the run's, not under ctx.
func (r *Request) Try(ctx context.Context, fn func(ctx context.Context) error) error {
	p := r.retry
	for try := 1; ; try++ {
		tctx := r.beginTry(ctx)
		err := r.endTry(fn(tctx))
		if err == nil {
			return nil
		}
		if IsUnknown(err) {
			r.unknown = true
		}
		timedOut := IsRequestTimeout(err)
		if timedOut {
			ctx = r.opCtx // the timed-out try's context is cancelled; the run's is not
		}
		if p == nil || !p.retryable(err) || ctx.Err() != nil {
			return err
		}
		if try >= p.maxTries() {
			r.outOfTries = true
			return err
		}
		r.stats.retry(Classify(err))
		r.retries++
		if wait := p.backoff(r.Index, try); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return err
			}
		}
	}
}

// retryStats are one worker's retry tallies.
type retryStats struct {
	retriedRequests int64
	tries           map[int]int64
	byClass         map[string]int64
	outOfTries      map[string]int64
}

func (s *retryStats) retry(class string) {
	if s.byClass == nil {
		s.byClass = make(map[string]int64)
	}
	s.byClass[class]++
}

// finish records a finished request: its tries and, when it failed on a retryable class
// after its last try, that class.
func (s *retryStats) finish(req *Request, err error) {
	if s.tries == nil {
		s.tries = make(map[int]int64)
		s.outOfTries = make(map[string]int64)
	}
	s.tries[1+req.retries]++
	if req.retries > 0 {
		s.retriedRequests++
	}
	if err != nil && req.outOfTries {
		s.outOfTries[Classify(err)]++
	}
}

// Retries is what the retry policy did over a run, warm-up included.
type Retries struct {
	// RetriedRequests needed more than one try (and then succeeded or not).
	RetriedRequests int64
	// Tries counts requests by the number of tries they took (all units together).
	Tries map[int]int64
	// ByClass counts retries by the class of the error that caused them.
	ByClass map[string]int64
	// OutOfTries counts the requests that failed after their last try, by the class of the
	// last error (a retryable one: the request ran out of tries).
	OutOfTries map[string]int64
}

func (r *Retries) add(s *retryStats) {
	r.RetriedRequests += s.retriedRequests
	for k, v := range s.tries {
		r.Tries[k] += v
	}
	for k, v := range s.byClass {
		r.ByClass[k] += v
	}
	for k, v := range s.outOfTries {
		r.OutOfTries[k] += v
	}
}

package load

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// flaky counts the tries of every request.
type flaky struct {
	mu    sync.Mutex
	tries map[int64]int
}

func (f *flaky) try(i int64) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.tries == nil {
		f.tries = make(map[int64]int)
	}
	f.tries[i]++
	return f.tries[i]
}

func TestTryRetriesRetryableClassesAndCountsFromTheFirstTry(t *testing.T) {
	const requests = 40
	deadlock := &pgconn.PgError{Code: "40P01"}
	f := new(flaky)
	policy := &Retry{MaxTries: 4, Classes: DefaultRetryClasses}
	res := run(t, context.Background(), Config{Concurrency: 8, Requests: requests, Retry: policy},
		func(ctx context.Context, r *Request) error {
			return r.Try(ctx, func(context.Context) error {
				n := f.try(r.Index)
				switch r.Index % 4 {
				case 1: // succeeds on its third try
					if n < 3 {
						return deadlock
					}
				case 2: // never succeeds: runs out of tries
					return io.EOF
				case 3: // not retryable: one try
					return errors.New("boom")
				}
				return nil
			})
		})
	assertTotals(t, res)
	if res.Completed != requests/2 || res.Failed != requests/2 {
		t.Fatalf("completed %d, failed %d; want %d each", res.Completed, res.Failed, requests/2)
	}
	for i := int64(0); i < requests; i++ {
		want := map[int64]int{0: 1, 1: 3, 2: 4, 3: 1}[i%4]
		if got := f.tries[i]; got != want {
			t.Errorf("request %d tried %d times, want %d", i, got, want)
		}
	}
	rt := res.Retries
	quarter := int64(requests / 4)
	if rt.RetriedRequests != 2*quarter {
		t.Errorf("retried requests %d, want %d", rt.RetriedRequests, 2*quarter)
	}
	if rt.Tries[1] != 2*quarter || rt.Tries[3] != quarter || rt.Tries[4] != quarter {
		t.Errorf("tries per request %v", rt.Tries)
	}
	if rt.ByClass["40P01"] != 2*quarter || rt.ByClass[ClassConnClosed] != 3*quarter {
		t.Errorf("retries by class %v", rt.ByClass)
	}
	if len(rt.OutOfTries) != 1 || rt.OutOfTries[ClassConnClosed] != quarter {
		t.Errorf("failed after the last try %v, want only conn_closed %d", rt.OutOfTries, quarter)
	}
}

// A try whose outcome was unknown may have committed: if no later try succeeds, the request
// is looked up (UnknownOutcome), whatever the last try's error was.
func TestUnknownTryMakesAFailedRequestUnknown(t *testing.T) {
	policy := &Retry{MaxTries: 2, Classes: DefaultRetryClasses}
	res := run(t, context.Background(), Config{Concurrency: 2, Requests: 4, Retry: policy},
		func(ctx context.Context, r *Request) error {
			try := 0
			return r.Try(ctx, func(context.Context) error {
				try++
				switch {
				case try == 1:
					return Unknown(io.ErrUnexpectedEOF) // the COMMIT's answer was lost: retried
				case r.Index%2 == 0:
					return nil
				}
				return &pgconn.PgError{Code: "57P03"}
			})
		})
	for i := int64(0); i < 4; i++ {
		want := Succeeded
		if i%2 == 1 {
			want = UnknownOutcome
		}
		if got := res.Outcomes.Get(i); got != want {
			t.Errorf("request %d: %s, want %s", i, got, want)
		}
	}
	if res.Retries.ByClass[ClassUnknownOutcome] != 4 {
		t.Errorf("retries by class %v, want 4 unknown_outcome", res.Retries.ByClass)
	}
}

func TestTryWithoutAPolicyTriesOnce(t *testing.T) {
	tries := 0
	res := run(t, context.Background(), Config{Concurrency: 1, Requests: 1}, func(ctx context.Context, r *Request) error {
		return r.Try(ctx, func(context.Context) error { tries++; return io.EOF })
	})
	if tries != 1 || res.Failed != 1 || res.Retries.RetriedRequests != 0 || res.Retries.Tries[1] != 1 {
		t.Errorf("tries %d, result %+v", tries, res.Retries)
	}
}

func TestBackoffIsExponentialCappedJitteredAndReproducible(t *testing.T) {
	p := &Retry{Backoff: 10 * time.Millisecond, Seed: 7}
	for n := 1; n <= 10; n++ {
		full := min(10*time.Millisecond<<(n-1), 320*time.Millisecond)
		d := p.backoff(42, n)
		if d < full/2 || d > full {
			t.Errorf("retry %d: backoff %s outside [%s, %s]", n, d, full/2, full)
		}
		if again := p.backoff(42, n); again != d {
			t.Errorf("retry %d: %s then %s for the same seed and request", n, d, again)
		}
	}
	other := &Retry{Backoff: 10 * time.Millisecond, Seed: 8}
	same := 0
	for i := int64(0); i < 100; i++ {
		if p.backoff(i, 3) == other.backoff(i, 3) {
			same++
		}
	}
	if same > 10 {
		t.Errorf("%d of 100 backoffs equal under another seed: the seed does not drive the jitter", same)
	}
	if d := (&Retry{}).backoff(1, 5); d != 0 {
		t.Errorf("no backoff configured, got %s", d)
	}
}

func TestTryStopsWaitingWhenTheContextEnds(t *testing.T) {
	inBubble(t, testTryStopsWaitingWhenTheContextEnds)
}

// On the bubble's clock the hour's backoff would pass at once: the try must end with no time
// gone by, not after the backoff.
func testTryStopsWaitingWhenTheContextEnds(t *testing.T) {
	start := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	p := &Retry{MaxTries: 3, Backoff: time.Hour, Classes: DefaultRetryClasses}
	req := &Request{retry: p, stats: new(retryStats)}
	tries := 0
	err := req.Try(ctx, func(context.Context) error {
		tries++
		cancel() // the wait that follows must end at once
		return io.EOF
	})
	if !errors.Is(err, io.EOF) || tries != 1 || time.Since(start) != 0 {
		t.Errorf("err %v after %d tries and %v, want io.EOF after 1, at once", err, tries, time.Since(start))
	}
}

func TestValidateRetryClass(t *testing.T) {
	for _, ok := range []string{"40P01", "57014", ClassConnClosed, ClassConnError, ClassDeadlineExceeded} {
		if err := ValidateRetryClass(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"bogus", "40p01", "4001", "", ClassPanic, ClassUnknownOutcome} {
		if err := ValidateRetryClass(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

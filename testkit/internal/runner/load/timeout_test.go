package load

import (
	"context"
	"errors"
	"testing"
	"time"
)

// hang blocks until its context ends, as a read on a connection whose peer never answers does
// once the context reaches the socket.
func hang(ctx context.Context) error {
	<-ctx.Done()
	return context.Cause(ctx)
}

func TestRequestTimeoutEndsAHungTryAsAnUnknownOutcome(t *testing.T) {
	const timeout = 50 * time.Millisecond
	res := run(t, context.Background(), Config{Concurrency: 4, Requests: 8, RequestTimeout: timeout},
		func(ctx context.Context, r *Request) error {
			if r.Index%2 == 0 {
				return nil
			}
			return r.Try(ctx, hang)
		})
	assertTotals(t, res)
	if res.Completed != 4 || res.Failed != 4 {
		t.Fatalf("completed %d, failed %d; want 4 each", res.Completed, res.Failed)
	}
	if got := res.ErrorCounts[ClassRequestTimeout]; got != 4 {
		t.Fatalf("error counts %v; want 4 of %s", res.ErrorCounts, ClassRequestTimeout)
	}
	if got := res.Outcomes.Count(UnknownOutcome); got != 4 {
		t.Fatalf("%d unknown outcomes, want 4: a timed-out try may have committed", got)
	}
	if res.Longest < timeout || res.Longest > 20*timeout {
		t.Fatalf("the longest request took %s; want about %s", res.Longest, timeout)
	}
}

func TestRequestTimeoutBoundsAnOpThatDoesNotCallTry(t *testing.T) {
	res := run(t, context.Background(), Config{Concurrency: 2, Requests: 2, RequestTimeout: 30 * time.Millisecond},
		func(ctx context.Context, r *Request) error { return hang(ctx) })
	if got := res.ErrorCounts[ClassRequestTimeout]; got != 2 {
		t.Fatalf("error counts %v; want 2 of %s", res.ErrorCounts, ClassRequestTimeout)
	}
}

func TestRequestTimeoutIsRetriedOnlyWhenItsClassIsNamed(t *testing.T) {
	for _, tc := range []struct {
		classes   []string
		wantTries int
		wantOK    bool
	}{
		{DefaultRetryClasses, 1, false},
		{append([]string{ClassRequestTimeout}, DefaultRetryClasses...), 2, true},
	} {
		f := new(flaky)
		res := run(t, context.Background(), Config{Concurrency: 1, Requests: 1, RequestTimeout: 30 * time.Millisecond,
			Retry: &Retry{MaxTries: 3, Classes: tc.classes}},
			func(ctx context.Context, r *Request) error {
				return r.Try(ctx, func(ctx context.Context) error {
					if f.try(r.Index) == 1 {
						return hang(ctx) // the first try hangs; the second runs under a fresh context
					}
					return ctx.Err()
				})
			})
		if got := f.tries[0]; got != tc.wantTries {
			t.Errorf("classes %v: %d tries, want %d", tc.classes, got, tc.wantTries)
		}
		if ok := res.Completed == 1; ok != tc.wantOK {
			t.Errorf("classes %v: completed %d, failed %d (%v)", tc.classes, res.Completed, res.Failed, res.ErrorSamples)
		}
		if tc.wantOK && res.Retries.ByClass[ClassRequestTimeout] != 1 {
			t.Errorf("retries by class %v; want one %s", res.Retries.ByClass, ClassRequestTimeout)
		}
		if tc.wantOK && res.Outcomes.Get(0) != Succeeded {
			t.Errorf("outcome %v after a retry succeeded", res.Outcomes.Get(0))
		}
	}
}

func TestRequestTimeoutLeavesAFastTryAlone(t *testing.T) {
	res := run(t, context.Background(), Config{Concurrency: 4, Requests: 2000, RequestTimeout: time.Second},
		func(ctx context.Context, r *Request) error {
			return r.Try(ctx, func(ctx context.Context) error { return ctx.Err() })
		})
	if res.Completed != 2000 {
		t.Fatalf("completed %d of 2000: %v", res.Completed, res.ErrorSamples)
	}
}

func TestRequestTimeoutKeepsAHardAbortApart(t *testing.T) {
	opCtx, abort := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, abort)
	res := run(t, context.Background(), Config{Concurrency: 1, Requests: 1, RequestTimeout: time.Minute, OpContext: opCtx},
		func(ctx context.Context, r *Request) error { return r.Try(ctx, hang) })
	if res.ErrorCounts[ClassContextCanceled] != 1 || res.ErrorCounts[ClassRequestTimeout] != 0 {
		t.Fatalf("error counts %v; want the abort's context_canceled, not a timeout", res.ErrorCounts)
	}
}

func TestValidateRetryClassTakesRequestTimeout(t *testing.T) {
	if err := ValidateRetryClass(ClassRequestTimeout); err != nil {
		t.Fatal(err)
	}
	if err := (&Config{Concurrency: 1, Requests: 1, RequestTimeout: -time.Second}).validate(); err == nil {
		t.Fatal("a negative request timeout validated")
	}
	var te *timeoutError
	if !errors.As(&timeoutError{err: Unknown(errors.New("x"))}, &te) || !IsUnknown(te) {
		t.Fatal("a timeout error is not an unknown outcome")
	}
}

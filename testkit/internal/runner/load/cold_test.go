package load

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A request whose statements ran on a cold session (NoteColdSession under the context its Op
// was given, or a context derived from it, inside Try or not, under a request timeout or not)
// is counted, and its latency recorded apart when it succeeded; the others are not.
func TestColdSessionRequestsAreCountedApart(t *testing.T) {
	NoteColdSession(context.Background()) // outside a request: nothing to mark, no panic
	for _, timeout := range []time.Duration{0, time.Minute} {
		op := func(ctx context.Context, r *Request) error {
			return r.Try(ctx, func(ctx context.Context) error {
				if r.Index%3 == 0 {
					NoteColdSession(context.WithValue(ctx, struct{}{}, "a statement's")) // as pgx's tracer sees it
				}
				if r.Index%5 == 0 {
					return errors.New("failed")
				}
				return nil
			})
		}
		res := run(t, context.Background(), Config{Concurrency: 4, Requests: 100, RequestTimeout: timeout}, op)
		// Cold: 0, 3, ..., 99 (34); failed among them: 0, 15, ..., 90 (7).
		if res.ColdSessions != 34 || res.ColdLatency.Count() != 27 {
			t.Errorf("timeout %s: %d cold requests, %d cold latencies; want 34 and 27", timeout, res.ColdSessions, res.ColdLatency.Count())
		}
		if res.Latency.Count() != 80 {
			t.Errorf("timeout %s: %d latencies, want every success's (80)", timeout, res.Latency.Count())
		}
	}
}

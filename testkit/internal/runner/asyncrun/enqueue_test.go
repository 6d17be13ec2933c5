package asyncrun

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/load"
)

// An async request's records are enqueued as one group under --max-tries: a group whose
// inline write (--queue-full sync) failed with a retryable class is enqueued again whole (the
// backend took none of it); a group the full queue dropped fails the request at once.
func TestEnqueueAllRetriesTheWholeGroup(t *testing.T) {
	var calls []string
	tries := 0
	enqueue := func(_ context.Context, recs []string) (queue.Outcome, error) {
		calls = append(calls, fmt.Sprint(recs))
		switch {
		case recs[0] == "drop":
			return queue.Dropped, nil
		case tries == 0:
			tries++
			return queue.Rejected, fmt.Errorf("queue: inline write (queue full): %w", &pgconn.PgError{Code: "40P01"})
		}
		return queue.WrittenInline, nil
	}
	policy := &load.Retry{MaxTries: 3, Classes: load.DefaultRetryClasses}
	res, err := load.Run(context.Background(), load.Config{Concurrency: 1, Requests: 2, Retry: policy},
		func(ctx context.Context, req *load.Request) error {
			recs := []string{"a", "b", "c"}
			if req.Index == 1 {
				recs = []string{"drop", "never"}
			}
			return enqueueAll(ctx, req, recs, enqueue)
		})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(calls), "[[a b c] [a b c] [drop never]]"; got != want {
		t.Errorf("enqueued %s, want %s", got, want)
	}
	if res.Outcomes.Get(0) != load.Succeeded || res.Outcomes.Get(1) != load.Failed {
		t.Errorf("outcomes %s, %s; want succeeded, failed", res.Outcomes.Get(0), res.Outcomes.Get(1))
	}
	if res.Retries.ByClass["40P01"] != 1 || res.ErrorCounts["dropped"] != 1 || res.Retries.Tries[2] != 1 {
		t.Errorf("retries %+v, errors %v", res.Retries, res.ErrorCounts)
	}
}

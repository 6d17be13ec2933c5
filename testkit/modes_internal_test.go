package testkit

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/testkit/load"
)

// An async request's enqueue follows --max-tries per record: a record whose inline write
// (--queue-full sync) failed with a retryable class is enqueued again, the records before it
// are not; a record the full queue dropped fails the request at once.
func TestEnqueueAllRetriesTheFailedRecordOnly(t *testing.T) {
	var calls []string
	failed := map[string]bool{}
	enqueue := func(_ context.Context, rec string) (queue.Outcome, error) {
		calls = append(calls, rec)
		switch {
		case rec == "b" && !failed[rec]:
			failed[rec] = true
			return queue.Rejected, fmt.Errorf("queue: inline write (queue full): %w", &pgconn.PgError{Code: "40P01"})
		case rec == "drop":
			return queue.Dropped, nil
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
	if got := fmt.Sprint(calls); got != "[a b b c drop]" {
		t.Errorf("enqueued %s, want [a b b c drop]", got)
	}
	if res.Outcomes.Get(0) != load.Succeeded || res.Outcomes.Get(1) != load.Failed {
		t.Errorf("outcomes %s, %s; want succeeded, failed", res.Outcomes.Get(0), res.Outcomes.Get(1))
	}
	if res.Retries.ByClass["40P01"] != 1 || res.ErrorCounts["dropped"] != 1 || res.Retries.Tries[2] != 1 {
		t.Errorf("retries %+v, errors %v", res.Retries, res.ErrorCounts)
	}
}

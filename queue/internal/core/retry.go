package core

// Outcomes of RetryBatch.
const (
	// BatchWritten: an attempt succeeded.
	BatchWritten = iota
	// BatchRetriesUsed: the first attempt and MaxRetries retries all failed; the backend
	// writes the records one by one (fallback).
	BatchRetriesUsed
	// BatchGivenUp: a wait was cut short (Close's deadline, a dead consumer); nothing more is
	// attempted.
	BatchGivenUp
)

// RetryBatch is the batch attempt loop every backend shares, so that retries, backoff and
// their counters mean the same whatever the backend: write is called until it succeeds, or
// until maxRetries retries (the option as Options.Defaults resolves it) have failed too. The
// first failure counts the batch's n source records in FlushFailed (once however often it
// fails); each retry counts one in Retries. wait sleeps before retry number attempt (1-based;
// a backend waits Options.RetryWait and may park there while paused) and reports false to
// give up.
func RetryBatch(c *Counters, n, maxRetries int, write func() error, wait func(attempt int) bool) int {
	failed := false
	for attempt := 1; ; attempt++ {
		if write() == nil {
			return BatchWritten
		}
		if !failed {
			failed = true
			c.FlushFailed.Add(int64(n))
		}
		if attempt > maxRetries {
			return BatchRetriesUsed
		}
		if !wait(attempt) {
			return BatchGivenUp
		}
		c.Retries.Add(1)
	}
}

// Package core owns what every queue backend shares, so that the in-memory queue (package
// queue) and the Redis-streams one (queue/redisq) count, close, pause, retry, compact and read
// their options the same way: the counters behind queue.Metrics and the Enqueue side of the
// close handshake (Counters), the Close side (Lifecycle), the pause state (Switch), the batch
// attempt loop (RetryBatch), PolicySync's inline write (WriteInline), slot compaction
// (Compactor), and the validation and defaults of the options both backends read
// (Options, a view of queue.Options). It is plumbing: a service imports queue or redisq,
// never this package, and nothing here may time or print anything.
//
// Package queue imports this one, so nothing here can name queue's types. Where a backend
// must hand one over, this package declares a twin with exactly the same fields (Options,
// Metrics), and the backend converts between the two; the compiler refuses the conversion
// once they differ, so the twins cannot drift apart.
package core

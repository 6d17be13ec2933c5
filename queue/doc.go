// Package queue owns batched asynchronous persistence with slot compaction, and the Interface
// contract that every queue backend (this in-memory Queue, the Redis-streams one in
// queue/redisq) offers a service. Callers hand records to Enqueue (or a request's several
// records, as one unit, to EnqueueAll) and return at once; background workers write them to
// the database in batches, one transaction per batch. A slot is the unit a record lands in (a
// row, usually its unique key). With compaction on, records aimed at the same slot inside one
// batch are folded into one (Options.Merge) before the write, so a hot row receives one
// statement per batch instead of one per record.
//
// The package knows no schema and no SQL: the caller supplies the slot key, the merge and a
// Flusher (usually TxFlusher around a TxWriter, on the SQL handles of package sqldb: pgx's or
// database/sql's). It must not print anything; it only exports counters (Metrics, with
// Accounted, the invariant's right-hand side), a persist-lag histogram (PersistLag) and, for
// the in-memory Queue, where its flushing time went
// (FlushTimes, FlushDurations) for the caller to report. It is a library a service can
// import: it depends on nothing of this module but packages hist and sqldb, and on no report
// type (a report converts Metrics to its own). A service sees what it uses: New and Options,
// the Interface's methods, Metrics, the Flusher and its adapters (TxFlusher, and PgFlusher and
// MySQLFlusher for a service's own pool; TxWriter, FlusherFunc; sqldb.Rollback and
// sqldb.CommitOutcomeUnknown for a Flusher of its own), the Codec a backend outside the
// process needs (DefaultCodec), the full policies, the errors and Compact. What
// every backend shares so that each counts, closes, pauses, retries and reads its options the
// same way is plumbing, in queue/internal/core, which this Queue and queue/redisq both
// build on. The transports beneath differ: per-worker in-memory fifos here, a Redis stream in
// queue/redisq.
//
// # Ordering
//
// A record is routed to one of Options.Workers workers by a hash of its slot key
// (hash/maphash.Comparable), so all queued writes to one slot go through one worker, in the
// order Enqueue accepted them, and reach the Flusher in that order: within a batch (folded in
// order by Merge when compacting) and across batches (a worker flushes one batch at a time and
// retries a failed batch before taking the next). Two exceptions are inherent to the full
// policies: PolicyDrop loses records, and PolicySync writes a record inline, possibly before
// earlier records of the same slot that are still queued.
//
// Options.Worker routes slots by the caller's rule instead (numbered slots of one hot row
// dealt out to different workers). Options.Spread gives up the order for throughput: each
// Enqueue call's records go to the next worker in turn, so a hot slot's records are written
// by every worker at once, in no particular order across workers. It is for merges that
// commute (counters that add up, a GREATEST), where one hot slot would otherwise keep one
// worker busy and leave the others idle.
//
// # Groups
//
// EnqueueAll takes a group of records (a request's, which may aim at several slots and so at
// several workers) as one unit: room is reserved for all of them at once, and when there is
// none the full policy applies to the whole group — all written inline in one transaction
// (PolicySync), all dropped (PolicyDrop), or all queued once all fit (PolicyBlock). A caller
// never sees part of its request queued while the rest failed. Use PolicyBlock when per-slot
// order must hold without exception.
//
// # Metrics
//
// All counters are int64 and count source records (what callers passed to Enqueue or
// EnqueueAll) unless
// stated otherwise. The JSON names are the struct tags of Metrics.
//
//	capacity                 Options.Capacity: the most records waiting for a worker at once, all
//	                         workers together (one hot slot may use all of it)
//	depth                    records waiting in the workers' fifos now
//	pending_depth            records accepted (Queued) and not yet committed, written by fallback
//	                         or abandoned: fifo contents plus every worker's batch in hand,
//	                         including batches being retried or written record by record
//	max_depth                the largest pending_depth observed by an accepting Enqueue
//	enqueued_total           records offered (every record passed to Enqueue or EnqueueAll,
//	                         whatever the outcome)
//	flushed_total            source records in committed batch flushes, each counted once
//	flush_batches_total      committed batch flush transactions (Flusher.Flush calls that
//	                         returned nil; failed attempts and fallback writes are not counted)
//	flush_sql_ops_total      sum of FlushResult.SQLOps over those committed batch flushes
//	flush_sql_records_total  records handed to the Flusher in those committed flushes, that is
//	                         after compaction (equal to flushed_total without compaction)
//	compacted_total          flushed_total − flush_sql_records_total: writes saved by compaction
//	dropped_total            records refused because the queue was full under PolicyDrop
//	flush_failed_total       distinct source records whose batch flush failed at least once;
//	                         a record is counted once however often its batch is retried
//	                         (a failed inline write under PolicySync counts as rejected only)
//	retries_total            Flusher.Flush calls that re-send records whose previous attempt
//	                         failed: batch attempts after the first, and repeated attempts of a
//	                         record being written individually after its batch gave up
//	sync_fallback_total      records written outside the batches: by the caller under
//	                         PolicySync when the queue was full (Outcome WrittenInline; its
//	                         group in one Flusher.Flush), or one by one by a worker once a
//	                         batch's first attempt and its MaxRetries retries have all failed
//	rejected_total           records of Enqueue calls that returned an error (Outcome
//	                         Rejected): queue closed, ctx done while waiting under
//	                         PolicyBlock, group larger than the capacity under PolicyBlock,
//	                         inline write failed
//	abandoned_total          accepted records still unwritten when Close's deadline expired
//
// Counters are updated with atomics and read one by one, so a Metrics taken while the queue
// runs is not a consistent cut (pending_depth may briefly lag the totals); after Close returns
// it is exact.
//
// # Persist lag
//
// PersistLag is a µs histogram with one value per written source record (batch or fallback,
// not dropped, rejected or abandoned ones): commit time minus the time Enqueue was called,
// both read from the monotonic clock. It includes the wait in the queue, batching delay, retries and,
// under PolicyBlock, the caller's wait for room.
//
// # Invariant
//
// Every offered record ends in exactly one of five places, so once Close has returned (and no
// Enqueue call is still in progress, since each call counts itself on entry):
//
//	enqueued_total = flushed_total + sync_fallback_total + dropped_total + rejected_total + abandoned_total
//
// and pending_depth = depth = 0; abandoned records leave pending_depth too, so it is 0 in
// particular when abandoned_total is 0. While the queue runs, the right-hand side plus
// pending_depth equals enqueued_total except for Enqueue calls in progress (waiting under
// PolicyBlock, writing inline) and updates in flight. Nothing accepted is dropped silently: a
// record the Flusher keeps refusing stays pending, retried with backoff, until Close's
// deadline abandons it, and Close then reports how many were abandoned.
package queue

// Package redisq is the durable queue.Backend: records travel through a Redis stream, so what a
// producer accepted survives the producer, and consumers in any process finish the work. It
// owns the stream protocol (producing, the consumer group, reclaiming, dead-lettering, the
// atomic acknowledgement) and the exactly-once bookkeeping in PostgreSQL (its table of applied
// entry ids); the caller supplies the record's Codec, slot key, merge and TxWriter exactly as
// for the in-memory queue, and cannot tell the two backends apart. It times and prints nothing;
// it exports counters (queue.Metrics plus StreamMetrics) and a persist-lag histogram.
//
// # Keys
//
// Options.Stream is the stream; Stream+":dlq" the dead-letter stream (bounded by
// Options.DeadLetterMaxLen with XADD MAXLEN); Stream+":stats" a hash of run-wide counters
// updated atomically with each XADD and acknowledgement (RunStats), which stay right even when
// a process of the run was killed; Stream+":replies" the last reply of each consumer's
// acknowledging call, replayed when that reply was lost.
//
// # Protocol
//
// Producing: EnqueueAll encodes its group of records (Enqueue: a group of one) and hands the
// group to one of Options.Senders goroutines, which send the groups waiting at that moment in
// ONE Lua script call (group commit): per record an XADD of an entry {d: payload, t: enqueue
// time in µs since the Unix epoch}. EnqueueAll returns once Redis has answered for its group.
// The script adds a group whole or not at all: it refuses a group when XLEN plus the group's
// size would pass Options.Capacity, and the full policy decides for the whole group (drop;
// sync: the caller writes all its records to the database itself, in one transaction; block:
// wait for room for all). Nothing is ever trimmed from the stream: acknowledged entries are
// deleted, so XLEN counts exactly the entries not yet acknowledged (undelivered ones plus the
// consumer group's pending ones).
// go-redis retries are off: an error after the script was sent makes the outcome unknown
// (ErrOutcomeUnknown) instead of risking a second XADD of the same record.
//
// Consuming: Options.Workers consumers of one group read with XREADGROUP COUNT BatchSize and a
// bounded BLOCK (never 0, which in go-redis means forever), keep reading until the batch is
// full or FlushInterval has passed since its oldest record was enqueued, then flush it in ONE
// database transaction:
//
//	BEGIN
//	INSERT INTO queue_applied_entries (stream, entry_id) SELECT $1, unnest($2::text[])
//	    ON CONFLICT DO NOTHING RETURNING entry_id      -- which entries are new
//	the caller's TxWriter, on the new entries only (compacted per slot as queue.Compact does
//	    and sorted by Compare; without compaction sorted stably by Compare, so concurrent
//	    consumers lock rows in one order)
//	COMMIT
//
// and then acknowledge and delete the entries in one Lua script (XACK, and XDEL of what that
// XACK removed, plus the run-wide counters), atomically. A batch that fails is retried
// MaxRetries times with backoff, then written entry by entry; an entry that still fails stays
// pending for the reclaimer. An entry that cannot be decoded goes straight to the dead-letter
// stream.
//
// Reclaiming: every ReclaimInterval one goroutine per consuming process takes over entries
// idle for longer than ReclaimIdle with XAUTOCLAIM, continuing from the cursor the previous
// call returned (back at 0-0 only once a scan has wrapped), reads their delivery counts with
// XPENDING and flushes them like a batch. An entry delivered more than MaxDeliveries times is
// not flushed again: it is acknowledged, deleted and copied to the dead-letter stream in one
// script (unless its id is already in the applied-ids table, in which case it is acknowledged
// as a duplicate).
//
// # Applied ids
//
// The table (Options.AppliedTable, default queue_applied_entries, one for every stream) holds
// the stream and id of every entry whose effect a flush committed, written in the flush's own
// transaction. A consuming New creates it when it is missing (AppliedTableSQL is the
// statement, for a deployment whose database role may not create tables). It would grow by
// one row per entry forever; instead every Options.PruneInterval (default 1m; negative:
// never) each consuming process deletes the ids that no delivery can need any more: those
// below the stream's first entry (or, with the stream empty, up to the last id it generated),
// since entries leave the stream only by an acknowledgement that deletes them (XACK and XDEL
// in one script, whether the entry was written, skipped or dead-lettered) and new entries take
// larger ids. A pass deletes below
// the bound the previous pass read, so an id stays until its entry has been out of the
// stream for at least one interval. The table therefore holds the ids of the entries still in
// the stream plus those of about two intervals' acknowledgements.
//
// # Crash guarantees
//
// A consumer killed at any point loses nothing and counts nothing twice (package redisqtest
// stops consumers at the two points that matter, so tests can kill a process there). Before the
// commit, its entries are pending and uncommitted: they are reclaimed and applied once. After
// the commit and before the acknowledgement, their ids are in the applied-ids table: the
// consumer that reclaims them finds them there, skips them (duplicate_skipped_total) and
// acknowledges them. The acknowledgement itself is atomic, so an entry is never deleted
// unacknowledged or acknowledged and left in the stream. The same holds for a flush whose
// COMMIT outcome is unknown: its retry is a duplicate skip if the commit had happened. Pruning
// keeps this for a consumer that is not killed but frozen (a stopped process, a long pause)
// with a batch it read, which another consumer took over after ReclaimIdle and wrote: when it
// thaws, its insert finds the ids, unless it stayed frozen for longer than ReclaimIdle plus
// PruneInterval, after which it would write that batch a second time. Keep PruneInterval above
// the longest freeze a process may suffer, or negative. Ordering per slot holds within a batch
// only: consumers run concurrently, so callers must apply records commutatively or guard their
// order (as the in-memory queue's PolicySync already requires).
//
// # Metrics
//
// queue.Metrics keeps its names, with these meanings for this backend (counts of this process
// unless stated otherwise):
//
//	capacity                 Options.Capacity: the most entries the stream may hold (0: no cap)
//	depth                    entries in the stream not yet delivered to any consumer
//	pending_depth            entries in the stream (XLEN): accepted and not yet acknowledged,
//	                         delivered or not, by any process of the run
//	max_depth                the largest XLEN a producer of this process saw after its XADDs
//	enqueued_total           records offered (one per Enqueue, a group's size per EnqueueAll)
//	flushed_total            entries this process acknowledged after a committed batch flush:
//	                         applied by it, or found already applied (duplicate_skipped_total)
//	flush_batches_total      committed batch flush transactions
//	flush_sql_ops_total      statements of those transactions, the applied-ids INSERT included
//	flush_sql_records_total  records handed to the TxWriter in them (after compaction)
//	compacted_total          new entries committed in batch flushes minus flush_sql_records_total
//	dropped_total            records refused because the stream was full under PolicyDrop
//	flush_failed_total       entries whose batch flush failed at least once (counted once)
//	retries_total            batch flush attempts after the first
//	sync_fallback_total      records written outside the batches: inline by the caller under
//	                         PolicySync (stream full; a group in one transaction), or one by
//	                         one by a consumer once a batch's retries were used up, then
//	                         acknowledged
//	rejected_total           records of Enqueue calls that returned an error (closed, encoding
//	                         failed, Redis failed, ctx done while blocked)
//	abandoned_total          entries this process gave up on: moved to the dead-letter stream
//	                         (stream.dead_lettered_total), plus, when it runs both roles and
//	                         Close's deadline expired, the entries still in the stream
//
// StreamMetrics adds length (XLEN) and pending_entries (the group's pending count) — both
// run-wide — and acked_total (entries this process acknowledged and deleted, for any
// reason: flushed, written individually or dead-lettered), reclaimed_total (entries it took
// over with XAUTOCLAIM), redelivered_total (entries it handed to a flush although they had
// been delivered before), dead_lettered_total and duplicate_skipped_total.
//
// # Invariant
//
// Every entry is acknowledged exactly once, by the one process whose XACK removed it, and only
// that process counts it. So for a process running both roles alone on its stream (the
// default), once Close has returned, exactly as for the in-memory queue:
//
//	enqueued_total = flushed_total + sync_fallback_total + dropped_total + rejected_total + abandoned_total
//	acked_total    = flushed_total + (sync_fallback_total written by consumers) + dead_lettered_total
//
// With the roles split over processes the same equations hold for the sums over all of them,
// a killed process included — which is why the run-wide hash (RunStats) exists: there,
// accepted = acked + XLEN at every moment, and acked = applied + duplicate + fallback +
// dead_lettered.
package redisq

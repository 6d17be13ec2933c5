// Package redisq is the durable queue.Interface: records travel through a Redis stream, so
// what a producer accepted survives the producer, and consumers in any process finish the
// work. It owns the stream protocol (producing, the consumer group, reclaiming,
// dead-lettering, the atomic acknowledgement) and the exactly-once bookkeeping in the
// database, PostgreSQL or MySQL/MariaDB (its table of applied entry ids); the caller supplies the record's Codec, slot key, merge and TxWriter exactly as
// for the in-memory queue, and cannot tell the two backends apart. It times and prints nothing;
// it exports counters (queue.Metrics plus StreamMetrics) and a persist-lag histogram.
//
// # Keys
//
// Options.Stream is the stream. The keys beside it share its hash slot, so that every script
// and multi-key command stays in one slot on Redis Cluster: they are named after the stream
// wrapped in a hash tag, {Stream}, which hashes like the bare name (a Stream that has a tag
// of its own, "a{t}b", is their prefix as it is). {Stream}:dlq is the dead-letter stream
// (bounded by Options.DeadLetterMaxLen with XADD MAXLEN); {Stream}:stats a hash of run-wide
// counters updated atomically with each XADD and acknowledgement (RunStats), which stay right
// even when a process of the run was killed; {Stream}:replies the last reply of each
// producer's adding and each consumer's acknowledging call, replayed when that call comes
// again. (Before sharding these were Stream+":dlq" and so on, which on a cluster lay in
// other slots.)
//
// With Options.Shards = S > 1 there are S streams, "{Stream:shard<i>}" for i in [0, S) (a
// ".<j>" added to the tag where needed to put shard i in the i-th S-th of the 16384 slots, so
// that the shards spread over a cluster's masters, each of which owns a range of slots until
// someone moves them; every process derives the same names). Each shard has its own
// "{Stream:shard<i>}:dlq", ":stats", ":replies" and ":lease"; "{Stream}:consumers" is the set
// of live consumers. Stream itself is then no key, and must contain no braces. Queue.Streams
// lists the shards' streams.
//
// # Redis Cluster
//
// Pass a *redis.ClusterClient as Options.Client. Keep MaxRetries at -1 (as for one server)
// and MaxRedirects at its default (3) or above: go-redis's cluster client bounds its own loop
// by MaxRedirects, not MaxRetries. In that loop (go-redis v9, ClusterClient.process) it
// follows MOVED and ASK at once, and retries after a backoff on TRYAGAIN, CLUSTERDOWN,
// MASTERDOWN, LOADING, READONLY and NOREPLICAS: all replies by which Redis refuses a command
// before running it, so these retries are safe. But the same loop also sends a command again
// after a broken connection (EOF) or a read timeout, MaxRetries -1 notwithstanding, and such a
// command may have run. So every script that changes a stream is idempotent: the adding
// script, like the acknowledging ones, carries its caller's name and a token and, sent again,
// returns the reply it kept instead of running twice (a resend can only come after the first
// send, on a connection opened later, so it arrives after it). Where go-redis gives up on a
// refusal (past MaxRedirects, a slot migrating for long) redisq runs the script again itself
// until its timeout. Every other error leaves an Enqueue's outcome unknown, as on one server.
// Size PoolSize (per node) for Senders plus the consumers, as for one server. A failover
// loses what the killed master had acknowledged and not yet replicated, like a crash of one
// server loses what it had not written to its append-only file: the run-wide counters move
// with the data, so a lost entry is lost to them too.
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
// (ErrOutcomeUnknown) instead of risking a second XADD of the same record; a script sent
// twice all the same (see "Redis Cluster") adds its records once.
//
// Consuming (one shard; for more see "Shards"): Options.Workers consumers of one group read with XREADGROUP COUNT BatchSize and a
// bounded BLOCK (never 0, which in go-redis means forever), keep reading until the batch is
// full or FlushInterval has passed since its oldest record was enqueued, then flush it in ONE
// database transaction:
//
//	BEGIN
//	INSERT INTO queue_applied_entries (stream, entry_id) SELECT $1, unnest($2::text[])
//	    ON CONFLICT DO NOTHING RETURNING entry_id      -- which entries are new
//	    (MySQL: INSERT IGNORE of the batch's rows; when it inserted fewer than the batch,
//	    a read of the rows it inserted: see "Applied ids")
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
// # Shards
//
// Producing: a record goes to shard FNV-1a(Key(rec)) mod S (the key's decimal text for
// integers, fmt's %v for other types: keys must print the same in every process), so every
// record of a key is on one shard, in the order its producer enqueued it. Each shard has its
// own senders (Senders in all, at least one a shard). A group (EnqueueAll) whose records all
// go to one shard is added as above, whole or not at all. A group spanning shards is split in
// one part per shard; no script can span them (different slots), so with a Capacity the
// producer reads the shards' lengths first and, when every part fits, adds each part to its
// shard without a cap — the group goes in whole, the full policy applies to the whole group
// when a part does not fit, and the caller sees one outcome, as with one stream. The price:
// Capacity is Options.Capacity/S per shard (rounded up), checked exactly by the script for a
// one-shard group, and a shard may pass it by the parts of cross-shard groups that found room
// at the same moment. The parts are sent concurrently; if one fails (ErrOutcomeUnknown) the
// others may be in: the caller looks the group up, as for a script that failed midway.
//
// Consuming: each shard is read by one consumer at a time, the one that holds its lease
// ({Stream:shard<i>}:lease, SET NX PX ShardLease with the consumer's name). Every consuming
// process renews a heartbeat in {Stream}:consumers and its leases every ShardLease/3, gives
// back leases beyond its share, ceil(S / live consumers), and takes free ones up to it; it
// starts one reader (Consumer+"-s<i>") per shard it holds, which reads, flushes and
// acknowledges that shard's batches one after another (so per-key order holds across batches
// too, reclaimed entries aside) and reclaims the shard's idle entries between them. A shard
// given back is released only after its reader has acknowledged its batch. A lease that could
// not be renewed (someone else holds it) makes its reader stop after the batch in hand. When
// a consumer dies its heartbeat and leases expire after ShardLease; the others' share grows
// and they take its shards within a renewal period (so within about 4/3 ShardLease), read new
// entries at once, and for 3 ShardLease after taking a shard reclaim the entries idle for
// ShardLease (not ReclaimIdle): those the dead reader held. Close releases the leases and
// the heartbeat once the streams are empty; until then a closing consumer keeps taking
// shards others leave. Run-wide counters (RunStats, ReadRunStats) and the stream metrics
// (length, pending) are sums over the shards.
//
// Exactly once holds shard by shard by the argument below, which never relied on one consumer
// per stream: each shard's entry ids are recorded in the applied-ids table under the shard's
// stream key (ids of different streams may be equal), in the transaction that writes their
// effect. Ownership only orders and spreads the work. When it fails — a reader frozen past
// its lease, whose shard another consumer took over and whose batch it reclaimed — the thawed
// reader's insert of the batch's ids finds them applied and writes nothing; its
// acknowledgement counts each entry once with whichever acknowledgement comes first (XACK
// removes an entry from the pending list once). Pruning keeps this as below: each shard's ids
// are pruned below its own stream's first entry.
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
// On MySQL and MariaDB (Options.DB of dialect sqldb.MySQL; InnoDB) the table keeps an id as
// its two numbers, (stream, ms, seq) its key, and a stream key of at most 512 bytes. MySQL 8
// has no RETURNING and neither has arrays, so a batch's ids go in with one multi-row INSERT
// IGNORE, each row marked with a random number of the flush: when it inserted as many rows as
// the batch has, every entry is new (one statement, as on PostgreSQL); when fewer — a
// redelivery — one read of the batch's rows that bear the flush's mark says which it
// inserted. An INSERT that meets an id of another transaction not yet committed waits for it
// to end, so an id is new to exactly one committed transaction on both databases. Two
// consumers writing the same entries at once (a frozen consumer thawed, its batch taken
// over) may deadlock on MySQL; InnoDB rolls one back and its flush is tried again.
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
// unless stated otherwise; lengths are summed over the shards):
//
//	capacity                 Options.Capacity: the most entries the stream may hold (0: no cap)
//	depth                    entries in the stream not yet delivered to any consumer
//	pending_depth            entries in the stream (XLEN): accepted and not yet acknowledged,
//	                         delivered or not, by any process of the run
//	max_depth                the largest XLEN a producer of this process saw after its XADDs
//	                         (of one shard's stream, with Shards > 1)
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

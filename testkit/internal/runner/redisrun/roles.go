package redisrun

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hotspotkit/hotspotkit/hist"
	"github.com/hotspotkit/hotspotkit/queue/redisq"
	"github.com/hotspotkit/hotspotkit/queue/redisq/redisqtest"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/load"
)

// A run split over processes (--role producer / consumer, on the Redis backend):
//
//   - Every process opens the same --postgres-url (or --mysql-url), --schema (on MySQL the
//     run's database) and --redis-url. The first one creates the schema, resets and seeds it
//     and starts the stream afresh; the others join with --reuse-schema and touch neither.
//   - A producer registers in queue_producers (its id, first request index and count), runs
//     the load, and once every record it offered has Redis's answer records each request's
//     outcome there and marks itself finished. Producer k's requests are the run-wide indexes
//     [k×requests, (k+1)×requests); ranges must not overlap, which registration checks.
//   - A consumer runs no load. It consumes until the run is over: --expect-producers
//     producers have registered, all registered producers have finished, and the stream
//     holds no entry (every entry acknowledged or dead-lettered, by any consumer).
//   - A consumer with --verify then checks the database against the union of the producers'
//     outcomes, as the run of a single process would be checked, plus the run-wide stream
//     counters. Producers and plain consumers check only their own part.

// DB is the connection the protocol's statements run on: the run's pool or the engine's own
// connection.
type DB = sqldb.DB

// Stream is what the engine needs about one run on the Redis backend: this process's role,
// where its producers register, and the run-wide counters its checks compare.
type Stream struct {
	Key string
	// Streams are the queue's streams (redisq.Queue.Streams: Key alone, or its shards'), the
	// stream column of the applied-ids table.
	Streams    []string
	Role       redisq.Role
	ProducerID int   // --producer-id (producers)
	Offset     int64 // a producer's first run-wide request index
	Requests   int64 // this producer's requests
	// RunStats reads the counters every process of the run keeps in Redis.
	RunStats func(ctx context.Context) (redisq.RunStats, error)
}

// StreamKey names a run's stream: the same in every process of a split run (same schema,
// mode and run index), distinct for every run of an invocation.
func StreamKey(schema string, index int, mode string) string {
	return fmt.Sprintf("hotspotkit:%s:%d:%s", schema, index, mode)
}

// EmptyResult is the load result of a process that ran no load (a consumer).
func EmptyResult() *load.Result {
	now := time.Now()
	return &load.Result{Start: now, MeasureStart: now, End: now, ErrorCounts: map[string]int64{},
		Latency: hist.New(), AcquireWait: hist.New(), Outcomes: load.NewOutcomes(0)}
}

// registry are a dialect's statements on queue_producers and the applied-ids table that
// differ between the databases; the others are written once.
type registry struct {
	// lock serialises registrations, within tx, until the unlock it returns has run and tx
	// has ended.
	lock func(ctx context.Context, tx sqldb.Tx) (unlock func(), err error)
	// overlapping finds a producer of stream $1 that is producer $2 or covers some of the
	// request indexes [$3, $3 + $4).
	overlapping string
	// inStreams is a condition on the stream column: one of streams.
	inStreams func(streams []string) (string, []any)
}

var registries = map[sqldb.Dialect]registry{
	sqldb.Postgres: {
		lock: func(ctx context.Context, tx sqldb.Tx) (func(), error) {
			_, err := tx.Exec(ctx, `LOCK TABLE queue_producers IN SHARE ROW EXCLUSIVE MODE`) // until the transaction ends
			return func() {}, err
		},
		overlapping: `SELECT producer_id FROM queue_producers
			WHERE stream = $1 AND (producer_id = $2 OR (first_index < $3::int8 + $4::int8 AND $3::int8 < first_index + requests))`,
		inStreams: func(streams []string) (string, []any) { return `stream = ANY($1)`, []any{streams} },
	},
	// MySQL has no lock on a table that a transaction's end releases (LOCK TABLES commits the
	// transaction), and a locking read alone does not serialise: registrations that find none
	// all take the gap after the stream's rows and deadlock on their inserts, InnoDB rolling
	// back one after another (32 producers at once: some failed after 5 tries, in 6 runs of
	// 10). So a named lock of the run's database (GET_LOCK, the session's) serialises them; it
	// is released before the commit (a session's, not the transaction's), and the locking read
	// then waits for the previous registration's row until that commits.
	sqldb.MySQL: {
		lock: mysqlRegistryLock,
		overlapping: `SELECT producer_id FROM queue_producers
			WHERE stream = $1 AND (producer_id = $2 OR (first_index < $3 + $4 AND $3 < first_index + requests))
			FOR UPDATE`,
		inStreams: func(streams []string) (string, []any) {
			marks := make([]string, len(streams))
			args := make([]any, len(streams))
			for i, s := range streams {
				marks[i], args[i] = "$"+strconv.Itoa(i+1), s
			}
			return `stream IN (` + strings.Join(marks, ", ") + `)`, args
		},
	},
}

// registryLockName is the named lock of a run's registrations on MySQL: the run's database's
// (SHA1's 40 digits keep it within MySQL's 64 characters).
const registryLockName = `CONCAT('hotspotkit:', SHA1(CONCAT(DATABASE(), '.queue_producers')))`

// registryLockWait bounds the wait for another registration of the run (each is three
// statements).
const registryLockWait = 30 * time.Second

// mysqlRegistryLock takes the run's registry lock on tx's session.
func mysqlRegistryLock(ctx context.Context, tx sqldb.Tx) (func(), error) {
	var got sql.NullInt64
	err := tx.QueryRow(ctx, `SELECT GET_LOCK(`+registryLockName+`, $1)`, int(registryLockWait.Seconds())).Scan(&got)
	if err == nil && got.Int64 != 1 {
		err = fmt.Errorf("another producer's registration held the lock for %s", registryLockWait)
	}
	if err != nil {
		return nil, err
	}
	return func() { _, _ = tx.Exec(context.WithoutCancel(ctx), `SELECT RELEASE_LOCK(`+registryLockName+`)`) }, nil
}

// registryOf is db's dialect's registry.
func registryOf(db sqldb.Querier) (registry, error) {
	r, ok := registries[db.Dialect()]
	if !ok {
		return r, fmt.Errorf("a split run's registry has no statements for %s", db.Dialect())
	}
	return r, nil
}

// Register records this producer's request range in queue_producers, refusing a range that
// overlaps another producer's.
func (sr *Stream) Register(ctx context.Context, db DB) error {
	reg, err := registryOf(db)
	if err != nil {
		return err
	}
	id := sr.ProducerID
	return sqldb.BeginFunc(ctx, db, func(tx sqldb.Tx) error {
		// One registration at a time, so that two overlapping ranges cannot both pass the check.
		unlock, err := reg.lock(ctx, tx)
		if err != nil {
			return fmt.Errorf("registering the producer: %w", err)
		}
		defer unlock()
		var other int
		err = tx.QueryRow(ctx, reg.overlapping, sr.Key, id, sr.Offset, sr.Requests).Scan(&other)
		switch {
		case err == nil:
			return fmt.Errorf("--producer-id %d: producer %d of this run already covers some of the request indexes [%d, %d) (give every producer its own id and the same --requests)",
				id, other, sr.Offset, sr.Offset+sr.Requests)
		case !errors.Is(err, sqldb.ErrNoRows):
			return fmt.Errorf("registering the producer: %w", err)
		}
		_, err = tx.Exec(ctx, `INSERT INTO queue_producers (stream, producer_id, first_index, requests) VALUES ($1, $2, $3, $4)`,
			sr.Key, id, sr.Offset, sr.Requests)
		return err
	})
}

// Finish records the outcome of each of this producer's requests and marks it finished. Every
// Enqueue returned only with Redis's answer, so what the outcomes say is final.
func (sr *Stream) Finish(ctx context.Context, db DB, res *load.Result) error {
	outcomes := make([]byte, sr.Requests)
	var accepted int64
	res.Outcomes.Each(func(i int64, o load.Outcome) {
		if i < sr.Requests {
			outcomes[i] = byte(o)
			if o == load.Succeeded {
				accepted++
			}
		}
	})
	// CURRENT_TIMESTAMP(6) on both: MySQL's now() is whole seconds (a producer finished before
	// it started).
	n, err := db.Exec(context.WithoutCancel(ctx), `UPDATE queue_producers SET finished_at = CURRENT_TIMESTAMP(6), accepted = $3, outcomes = $4
		WHERE stream = $1 AND producer_id = $2`, sr.Key, sr.ProducerID, accepted, outcomes)
	if err == nil && n != 1 {
		err = errors.New("its registration is gone (was the schema reset by another process?)")
	}
	if err != nil {
		return fmt.Errorf("recording the producer's outcomes: %w", err)
	}
	return nil
}

// Producers counts the run's producers.
func (sr *Stream) Producers(ctx context.Context, db DB) (registered, finished int, err error) {
	err = db.QueryRow(ctx, `SELECT count(*), count(finished_at) FROM queue_producers WHERE stream = $1`, sr.Key).
		Scan(&registered, &finished)
	return registered, finished, err
}

// WaitForProducers returns once expect producers have registered and all registered ones
// have finished: from then on nothing new enters the stream.
func (sr *Stream) WaitForProducers(ctx context.Context, db DB, expect int) error {
	for {
		registered, finished, err := sr.Producers(ctx, db)
		if err == nil && registered >= expect && finished == registered {
			return nil
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = fmt.Errorf("%d of %d expected producers registered, %d finished", registered, expect, finished)
			}
			return fmt.Errorf("waiting for the producers: %w: %w", err, context.Cause(ctx))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// ProducersResult rebuilds the outcome of every run-wide request from the producers'
// records, for the verifying consumer.
func (sr *Stream) ProducersResult(ctx context.Context, db DB) (*load.Result, error) {
	rows, err := db.Query(ctx, `SELECT first_index, requests, outcomes FROM queue_producers
		WHERE stream = $1 AND outcomes IS NOT NULL ORDER BY first_index`, sr.Key)
	if err != nil {
		return nil, fmt.Errorf("reading the producers' outcomes: %w", err)
	}
	res := EmptyResult()
	var first, n int64
	var outcomes []byte
	err = sqldb.ForEachRow(rows, []any{&first, &n, &outcomes}, func() error {
		res.Outcomes.Set(first+n-1, load.NotAttempted) // sets Len; the outcomes follow
		for i, o := range outcomes {
			if o != byte(load.NotAttempted) {
				res.Outcomes.Set(first+int64(i), load.Outcome(o))
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the producers' outcomes: %w", err)
	}
	return res, nil
}

// Accepted is the number of accepted requests this producer recorded for the consumers (-1
// before it finished).
func (sr *Stream) Accepted(ctx context.Context, db DB) (int64, error) {
	var accepted int64
	err := db.QueryRow(ctx, `SELECT coalesce(accepted, -1) FROM queue_producers WHERE stream = $1 AND producer_id = $2`,
		sr.Key, sr.ProducerID).Scan(&accepted)
	if err != nil {
		return 0, fmt.Errorf("reading the producer's record: %w", err)
	}
	return accepted, nil
}

func (sr *Stream) streams() []string {
	if len(sr.Streams) == 0 {
		return []string{sr.Key}
	}
	return sr.Streams
}

// AppliedEntries counts the entry ids the run's writers recorded in queue_applied_entries.
func (sr *Stream) AppliedEntries(ctx context.Context, db DB) (int64, error) {
	reg, err := registryOf(db)
	if err != nil {
		return 0, err
	}
	in, args := reg.inStreams(sr.streams())
	var n int64
	if err := db.QueryRow(ctx, `SELECT count(*) FROM queue_applied_entries WHERE `+in, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("counting the applied entries: %w", err)
	}
	return n, nil
}

// CrashEnv names the test-only environment variable that stops a consumer at one point of
// its batch cycle ("after-read": a batch read, nothing committed; "after-commit": committed,
// not acknowledged). The process prints a line to stderr and freezes there, so that a test can
// SIGKILL it at exactly that point.
const CrashEnv = "HOTSPOTKIT_TEST_CRASH"

// CrashHook maps $HOTSPOTKIT_TEST_CRASH onto redisq's test hook (nil when unset).
func CrashHook() redisqtest.Hook {
	point := os.Getenv(CrashEnv)
	if point == "" {
		return nil
	}
	var once sync.Once
	return func(_, p string, ids []string) {
		if p != point {
			return
		}
		once.Do(func() {
			fmt.Fprintf(os.Stderr, "hotspotkit: %s=%s: consumer stopped at %s holding %d entries (pid %d)\n",
				CrashEnv, point, p, len(ids), os.Getpid())
			select {} // frozen here until the test kills the process
		})
	}
}

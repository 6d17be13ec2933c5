package candidates

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/mariadbtest"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/cli"
	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

func TestMain(m *testing.M) { os.Exit(mariadbtest.Stop(testdb.Main(m))) }

func TestEveryPersistenceLevelInEveryModeVerifies(t *testing.T) {
	const requests = 600
	for _, persistence := range []string{PersistFull, PersistTerminal, PersistNone} {
		t.Run(persistence, func(t *testing.T) {
			// What the run must write, for these flags and the default --seed.
			g := lifecycle{seed: 1, persistence: persistence, retryRate: 0.2, failureRate: 0.1}
			var writes, rows int64
			for i := int64(0); i < requests; i++ {
				writes += int64(len(g.writes(i)))
				rows += int64(len(g.rows(i)))
			}
			if persistence == PersistNone && (writes != 0 || rows != 0) {
				t.Fatalf("none generates %d writes, %d rows", writes, rows)
			}
			rep, stderr := suitetest.Runs(t, New(), 3, "--requests", strconv.Itoa(requests), "--concurrency", "120",
				"--persistence", persistence, "--retry-rate", "0.2", "--failure-rate", "0.1",
				"--modes", "sync,async,async-compact", "--flush-interval-ms", "20")
			for _, r := range rep.Runs {
				suitetest.Verified(t, r)
				suitetest.Completed(t, r, requests)
				if got := checkActual(r, checkRows); got != strconv.FormatInt(rows, 10) {
					t.Errorf("%s: %s rows, want %d", r.Mode, got, rows)
				}
				switch {
				case persistence == PersistNone:
					if r.Reconciliation != nil {
						t.Errorf("%s: none has nothing to reconcile: %+v", r.Mode, r.Reconciliation)
					}
				case r.Reconciliation == nil || r.Reconciliation.Persisted != requests || r.Reconciliation.Lost != 0:
					t.Errorf("%s: reconciliation %+v", r.Mode, r.Reconciliation)
				}
				q := r.Queue
				if r.Mode == testkit.Sync.String() {
					if q != nil {
						t.Errorf("sync has a queue: %+v", q)
					}
					continue
				}
				if q == nil || q.EnqueuedTotal != writes || q.FlushedTotal != writes || q.DroppedTotal != 0 ||
					q.FlushFailedTotal != 0 || q.SyncFallbackTotal != 0 || q.PendingDepth != 0 || q.Depth != 0 {
					t.Errorf("%s queue: %+v (want %d records enqueued and flushed)", r.Mode, q, writes)
					continue
				}
				switch {
				case r.Mode == testkit.Async.String() && q.CompactedTotal != 0:
					t.Errorf("async compacted %d records", q.CompactedTotal)
				case r.Mode == testkit.AsyncCompact.String() && writes > 0 && (q.CompactedTotal == 0 || q.FlushSQLOpsTotal != q.FlushBatchesTotal):
					t.Errorf("async-compact: compacted %d, %d statements for %d batches", q.CompactedTotal, q.FlushSQLOpsTotal, q.FlushBatchesTotal)
				}
			}
			if !strings.Contains(stderr, "request_candidate_queue_enqueued_total") {
				t.Errorf("no reference-named queue metrics on stderr:\n%s", stderr)
			}
		})
	}
}

// With a queue too small for the load and --queue-full sync, callers write inline and overtake
// queued writes of their own slots; the SQL guard must keep every row right regardless.
func TestInlineWritesOvertakingQueuedOnesStillVerify(t *testing.T) {
	code, rep, stderr := suitetest.RunShared(t, New(), "--requests", "800", "--concurrency", "200",
		"--persistence", "full", "--retry-rate", "0.3", "--modes", "async,async-compact",
		"--queue-capacity", "4", "--queue-workers", "2", "--queue-full", "sync", "--flush-interval-ms", "20")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, r := range rep.Runs {
		suitetest.Verified(t, r)
		if r.Queue == nil || r.Queue.SyncFallbackTotal == 0 {
			t.Errorf("%s: the full queue never wrote inline: %+v", r.Mode, r.Queue)
		}
	}
}

// The guard in the database, apart from the queue: a late non-terminal write, in a later
// transaction or later in the same batch, never takes a terminal row back.
func TestSQLGuardKeepsTheLatestState(t *testing.T) {
	suitetest.EachDatabase(t, New(), func(t *testing.T, db sqldb.DB) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		w := batchWriter{dialectOf(db.Dialect())}
		write := func(recs ...record) {
			t.Helper()
			err := sqldb.BeginFunc(ctx, db, func(tx sqldb.Tx) error {
				_, err := w.WriteBatch(ctx, tx, recs)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		type row struct {
			status, provider string
			extra            map[string]any
			code             *int32
			created          time.Time
		}
		read := func(s slot) row {
			t.Helper()
			var r row
			var extra []byte
			err := db.QueryRow(ctx, `SELECT status, provider_id, extra_data, status_code, created_at FROM request_candidates
			WHERE request_id = $1 AND candidate_index = $2 AND retry_index = $3`, requestID(s.Request), s.Candidate, s.Retry).
				Scan(&r.status, &r.provider, &extra, &r.code, &r.created)
			if err == nil {
				err = json.Unmarshal(extra, &r.extra)
			}
			if err != nil {
				t.Fatal(err)
			}
			return r
		}

		a := slot{Request: 1}
		write(record{slot: a, Status: success, StatusCode: int4(200), CreatedAt: at(t0.Add(time.Second)), Extra: map[string]any{"tokens": 5}})
		write(record{slot: a, Status: pending, ProviderID: text("p0"), CreatedAt: at(t0), Extra: map[string]any{"model": "m"}})
		write(record{slot: a, Status: streaming, CreatedAt: at(t0.Add(time.Minute))})
		got := read(a)
		if got.status != "success" || got.code == nil || *got.code != 200 || got.provider != "p0" ||
			!reflect.DeepEqual(got.extra, map[string]any{"model": "m", "tokens": 5.0}) || !got.created.Equal(t0) {
			t.Errorf("after success, late pending, late streaming: %+v", got)
		}

		// One batch, uncompacted, the slot's writes out of lifecycle order: layered into three
		// statements, the guard still decides.
		b := slot{Request: 2, Candidate: 1}
		write(record{slot: b, Status: streaming, CreatedAt: at(t0)},
			record{slot: b, Status: failed, StatusCode: int4(502), CreatedAt: at(t0)},
			record{slot: b, Status: pending, ProviderID: text("p1"), CreatedAt: at(t0)})
		if got := read(b); got.status != "failed" || got.code == nil || *got.code != 502 || got.provider != "p1" {
			t.Errorf("batch streaming, failed, pending: %+v", got)
		}

		c := slot{Request: 3}
		write(record{slot: c, Status: streaming, CreatedAt: at(t0)})
		write(record{slot: c, Status: pending, ProviderID: text("p2"), CreatedAt: at(t0)})
		if got := read(c); got.status != "streaming" || got.provider != "p2" {
			t.Errorf("streaming then a late pending: %+v", got)
		}
	})
}

// The verification's reads find every kind of difference, on both databases: the lifecycles'
// rows written in compacted batches compare clean; then a row with another provider, one with
// another extra_data key, one with a status taken back, one row gone and a stray request each
// show in their own count.
func TestVerificationFindsEveryDifference(t *testing.T) {
	suitetest.EachDatabase(t, New(), func(t *testing.T, db sqldb.DB) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		g := lifecycle{seed: 1, persistence: PersistFull, retryRate: 0.3, failureRate: 0.2}
		d := dialectOf(db.Dialect())
		const requests = 300
		var want expectation
		var writes []record
		for i := range int64(requests) {
			writes = append(writes, g.writes(i)...)
			want.indexes, want.requests = append(want.indexes, i), append(want.requests, requestID(i))
			want.slots = append(want.slots, int32(len(g.rows(i))))
		}
		err := sqldb.BeginFunc(ctx, db, func(tx sqldb.Tx) error {
			_, err := batchWriter{d}.WriteBatch(ctx, tx, queue.Compact(writes, keyOf, merge, compareSlots))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		check := func(what string, wantOff int64, wantDiffs slotDiffs) {
			t.Helper()
			off, err := d.offRequests(ctx, db, want)
			if err != nil {
				t.Fatal(err)
			}
			diffs, err := d.compareRows(ctx, db, g, want.indexes)
			if err != nil {
				t.Fatal(err)
			}
			if off != wantOff || diffs != wantDiffs {
				t.Errorf("%s: %d request_ids off, %+v; want %d, %+v", what, off, diffs, wantOff, wantDiffs)
			}
		}
		check("as written", 0, slotDiffs{})
		counts, err := d.tableCounts(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		if rows := sum(want.slots); counts.rows != rows || counts.requests != requests {
			t.Errorf("counts %+v, want %d rows of %d requests", counts, rows, requests)
		}
		for _, st := range []string{
			`UPDATE request_candidates SET provider_id = 'another' WHERE request_id = 'req-1' AND candidate_index = 0`,
			`UPDATE request_candidates SET extra_data = '{"model": "gpt-5"}' WHERE request_id = 'req-2' AND candidate_index = 0`,
			`UPDATE request_candidates SET status = 'pending' WHERE request_id = 'req-3' AND candidate_index = 0`,
			`DELETE FROM request_candidates WHERE request_id = 'req-4' AND candidate_index = 0`,
			`INSERT INTO request_candidates (request_id, candidate_index, retry_index, status, created_at, extra_data)
				VALUES ('req-99999', 0, 0, 'pending', '2026-01-01 00:00:00', '{}')`,
		} {
			if _, err := db.Exec(ctx, st); err != nil {
				t.Fatalf("%s: %v", st, err)
			}
		}
		check("changed", 2, slotDiffs{missing: 1, statusOff: 1, columnsOff: 2})
	})
}

func sum(v []int32) (n int64) {
	for _, x := range v {
		n += int64(x)
	}
	return n
}

func TestBrokenExpectationExitsOne(t *testing.T) {
	for _, persistence := range []string{PersistTerminal, PersistNone} {
		t.Run(persistence, func(t *testing.T) {
			suitetest.BrokenExpectations(t, New(), suitetest.Shared(t, "--requests", "200", "--concurrency", "20",
				"--persistence", persistence, "--modes", "async-compact")...)
		})
	}
}

func TestBadFlagsExitTwo(t *testing.T) {
	for _, args := range [][]string{
		{"--persistence", "some"},
		{"--retry-rate", "1.5"},
		{"--failure-rate", "-0.1"},
		{"--modes", "outbox"},
		{"--slots", "4"}, // no counter rows to split
		{"--slots-levels", "1,4"},
		{"--slot-pick", "random"},
	} {
		var stdout, stderr bytes.Buffer
		if code := cli.Execute(New(), args, &stdout, &stderr); code != cli.ExitUsage {
			t.Errorf("%v: exit %d, want %d\n%s", args, code, cli.ExitUsage, stderr.String())
		}
		if lines := strings.Count(strings.TrimSpace(stderr.String()), "\n"); strings.HasPrefix(args[0], "--slot") &&
			(!strings.Contains(stderr.String(), "has no counter rows to split into slots") || lines > 1) {
			t.Errorf("%v: want the one-line slots error, got:\n%s", args, stderr.String())
		}
	}
}

// TestRedisBackendVerifies runs the async modes on Redis streams (a managed redis-server): every kind of record (full persistence, retries, failures) travels as JSON
// (the default codec) and the rows come out exact.
func TestRedisBackendVerifies(t *testing.T) {
	const requests = 600
	g := lifecycle{seed: 1, persistence: PersistFull, retryRate: 0.2, failureRate: 0.1}
	var writes int64
	for i := range int64(requests) {
		writes += int64(len(g.writes(i)))
	}
	suitetest.OnRedis(t, New(), requests, writes,
		"--persistence", PersistFull, "--retry-rate", "0.2", "--failure-rate", "0.1")
}

// Requests whose COMMIT reply was lost are looked up and counted once, with and without
// retries.
func TestLostCommitsAreLookedUp(t *testing.T) {
	suitetest.LostCommits(t, New(), "sync", 700, 100)
}

func TestEveryModeVerifiesOverA1msNetwork(t *testing.T) {
	suitetest.OverNetwork(t, New(), 100, 8)
}

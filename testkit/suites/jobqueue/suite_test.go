package jobqueue

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/mariadbtest"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/cli"
	"github.com/hotspotkit/hotspotkit/testkit/suitetest"
)

func TestMain(m *testing.M) { os.Exit(mariadbtest.Stop(testdb.Main(m))) }

// small is a run small enough for a test: few workers, no job time, quick polls and the queue
// flushing often. The lease is short, but it outlasts a completion's wait in the queue on a
// busy machine (a lease that ran out first would run the job again: see TestUnderServerFaults). The tests that run the binary run side by side: most of
// their time is waiting (for leases, River's rescuer, a server's restart), not work.
var small = []string{"--workers", "4", "--concurrency", "20", "--lease-ms", "2000", "--poll-ms", "5", "--flush-interval-ms", "10"}

func args(extra ...string) []string { return append(append([]string{}, small...), extra...) }

func figure(t *testing.T, r results.Run, name string) float64 {
	t.Helper()
	v, ok := r.Figure(name)
	if !ok {
		t.Errorf("%s: no figure %s: %+v", r.Mode, name, r.Figures)
	}
	return v
}

// Every mode, River's included, completes every job exactly once, with the figures a run shows;
// async-compact writes a batch's completions in one statement and one transaction. (Commits per
// job are logged, not compared: the claims' and idle polls' transactions count too, and how many
// of those a run makes depends on the machine's load: 2.50 against sync's 2.62 on a busy CI.)
func TestEveryModeCompletesEveryJobOnce(t *testing.T) {
	t.Parallel()
	const jobs = 600
	rep, stderr := suitetest.Runs(t, New(), 4, args("--requests", strconv.Itoa(jobs), "--modes", "sync,async,async-compact,river")...)
	perJob := map[string]float64{}
	for _, r := range rep.Runs {
		suitetest.Exact(t, r)
		suitetest.Completed(t, r, jobs)
		if rc := r.Reconciliation; rc.Persisted != jobs {
			t.Errorf("%s: %d jobs found, want %d", r.Mode, rc.Persisted, jobs)
		}
		for _, name := range []string{FigInsertedPerS, FigClaimedPerS, FigCompletedPerS, FigClaimP99, FigInQueueP99, FigTableAfter} {
			if figure(t, r, name) <= 0 {
				t.Errorf("%s: figure %s is %v", r.Mode, name, figure(t, r, name))
			}
		}
		// Every job leaves a dead tuple at least, unless autovacuum came by during the run: on
		// the tests' shared server it may, and leave 0 after sync's 600 jobs.
		vacuumed := figure(t, r, FigAutovacuums) > 0
		if figure(t, r, FigReruns) != 0 || figure(t, r, FigDeadAfter) < jobs && !vacuumed {
			t.Errorf("%s: %v re-runs, %v dead tuples after %d jobs (autovacuum ran %v times)", r.Mode,
				figure(t, r, FigReruns), figure(t, r, FigDeadAfter), jobs, figure(t, r, FigAutovacuums))
		}
		if r.Database == nil {
			t.Fatalf("%s: no database figures", r.Mode)
		}
		perJob[r.Mode] = r.Database.PerRequest.Commits
		q := r.Queue
		switch r.Mode {
		case "sync", "river":
			if q != nil {
				t.Errorf("%s has a completion queue: %+v", r.Mode, q)
			}
		case "async-compact":
			if q == nil || q.EnqueuedTotal != jobs || q.FlushedTotal != jobs || q.FlushSQLOpsTotal != q.FlushBatchesTotal || q.FlushBatchesTotal*4 > jobs {
				t.Errorf("async-compact: want %d completions in one statement per batch, at least 4 a batch: %+v", jobs, q)
			}
		case "async":
			if q == nil || q.EnqueuedTotal != jobs || q.FlushSQLOpsTotal != jobs {
				t.Errorf("async: want %d completions, one statement each: %+v", jobs, q)
			}
		}
	}
	t.Logf("commits per job: %v", perJob)
	if !strings.Contains(stderr, "async-compact against river") {
		t.Errorf("no async-compact/river line in the summary:\n%s", stderr)
	}
}

// Deleted and archived jobs are verified too: none left in the queue, each archived once.
func TestDeletedAndArchivedJobs(t *testing.T) {
	t.Parallel()
	for _, policy := range []string{Delete, Archive} {
		t.Run(policy, func(t *testing.T) {
			rep, _ := suitetest.Runs(t, New(), 2, args("--requests", "400", "--modes", "sync,async-compact", "--on-complete", policy)...)
			for _, r := range rep.Runs {
				suitetest.Exact(t, r)
				suitetest.Completed(t, r, 400)
				if tb := r.Database.Tables["jobs"]; tb.Deleted != 400 {
					t.Errorf("%s: %d jobs deleted, want 400", r.Mode, tb.Deleted)
				}
				if tb := r.Database.Tables["jobs_archive"]; (policy == Archive) != (tb.Inserted == 400) {
					t.Errorf("%s %s: %d rows archived", policy, r.Mode, tb.Inserted)
				}
			}
		})
	}
}

// A worker killed mid-job holds its claimed jobs until their lease runs out; they are claimed
// and run again, counted as re-runs, and still completed once.
func TestKilledWorkersJobsRunAgainOnce(t *testing.T) {
	t.Parallel()
	rep, _ := suitetest.Runs(t, New(), 2, args("--requests", "600", "--modes", "sync,async-compact", "--job-ms", "1",
		"--lease-ms", "1500", "--fault", "kill-worker@50ms")...)
	for _, r := range rep.Runs {
		suitetest.Exact(t, r)
		if !suitetest.Fired(r, testkit.FaultKillWorker) {
			t.Fatalf("%s: no worker was killed: %+v", r.Mode, r.Faults)
		}
		held := figure(t, r, FigHeld)
		if held < 1 || figure(t, r, FigReruns) != held || figure(t, r, FigLeasesRunOut) != held {
			t.Errorf("%s: %v jobs held, %v re-runs, %v leases run out: want them equal and > 0", r.Mode, held,
				figure(t, r, FigReruns), figure(t, r, FigLeasesRunOut))
		}
		if !suitetest.CheckPassed(r, checkReruns, held) || !suitetest.CheckPassed(r, checkTwice, 0) {
			t.Errorf("%s: checks %+v", r.Mode, r.Verification.Checks)
		}
	}
}

// River's worker killed mid-job never returns: River's rescuer hands its job back once it has
// been running for the lease (RescueStuckJobsAfter), and it runs again, once. The rescuer runs
// within a second of the client's start, then every 30 s: with a 2 s lease its first round
// comes before the lease has run out, and the test waits for the second. Every other job
// must be completed within the lease, or a round finds it still running and runs it again: a
// 300 ms lease on a loaded CI (14 jobs/s, jobs a second in the queue) has several of 40
// rescued so.
func TestRiversKilledWorkerIsRescued(t *testing.T) {
	t.Parallel()
	rep, _ := suitetest.Runs(t, New(), 1, args("--requests", "40", "--modes", "river", "--lease-ms", "2000", "--fault", "kill-worker@0s")...)
	r := rep.Runs[0]
	suitetest.Exact(t, r)
	suitetest.Completed(t, r, 40)
	if !suitetest.Fired(r, testkit.FaultKillWorker) || figure(t, r, FigHeld) != 1 || figure(t, r, FigReruns) != 1 ||
		figure(t, r, FigLeasesRunOut) != 1 || !suitetest.CheckPassed(r, checkReruns, 1) {
		t.Errorf("river: want the killed worker's one job rescued and run again once: faults %+v figures %+v", r.Faults, r.Figures)
	}
}

// A job that outlives its lease keeps it while its worker renews it: nothing runs twice.
func TestLeasesOfLongJobsAreRenewed(t *testing.T) {
	t.Parallel()
	// Renewed with half the lease left: 1 s for the renewal's round trip, which on a loaded
	// machine (a CI running four test binaries under -race) can take more than 500 ms.
	rep, _ := suitetest.Runs(t, New(), 1, "--requests", "8", "--workers", "4", "--claim-batch", "2", "--concurrency", "4",
		"--job-ms", "2600", "--job-spread", "0", "--lease-ms", "2000", "--modes", "sync")
	r := rep.Runs[0]
	suitetest.Exact(t, r)
	if figure(t, r, FigRenewals) == 0 || figure(t, r, FigReruns) != 0 || figure(t, r, FigLeasesRunOut) != 0 {
		t.Errorf("want leases renewed and nothing run again: %+v", r.Figures)
	}
}

// Requests whose COMMIT reply was lost are looked up and found once, with one try and with
// retries (which look for the job first, in our table as in River's).
func TestLostCommitsAreLookedUp(t *testing.T) {
	t.Parallel()
	suitetest.LostCommits(t, New(), "async-compact,river", 70, 10)
}

// The completions travel through a real Redis stream and complete every job once: on a
// redis-server and on a Redis Cluster (3 masters, the queue on 3 stream shards), each started
// by the run and gone after it.
func TestRedisCompletionQueue(t *testing.T) {
	t.Parallel()
	const jobs = 400
	suitetest.EachRedis(t, []string{"managed", "cluster"}, func(t *testing.T, _ string, where []string) *results.Report {
		rep, _ := suitetest.Runs(t, New(), 2, args(append([]string{"--requests", strconv.Itoa(jobs), "--modes", "async,async-compact",
			"--queue-backend", "redis"}, where...)...)...)
		for _, r := range rep.Runs {
			suitetest.Exact(t, r)
			suitetest.Completed(t, r, jobs)
			q := r.Queue
			if q == nil || q.Backend != "redis" || q.Stream == nil || q.EnqueuedTotal != jobs || q.Stream.AckedTotal != jobs || q.Stream.Length != 0 {
				t.Errorf("%s: want %d completions through the stream: %+v", r.Mode, jobs, q)
			}
		}
		return rep
	})
}

// Cut off, restarted and crashed, the server loses no job and completes none twice, in every
// mode. The lease outlasts the outages (a lease that ran out during one would run a job whose
// completion was on its way again); a claim whose reply was lost runs again after it: counted,
// not a failure. The inserts arrive at a rate, so that the faults strike while they do.
func TestUnderServerFaults(t *testing.T) {
	t.Parallel()
	code, rep, stderr := suitetest.Run(t, New(), args("--requests", "1200", "--rate", "1000", "--job-ms", "1",
		"--modes", "sync,async-compact,river", "--lease-ms", "10000", "--max-tries", "20", "--retry-backoff-ms", "20",
		"--fault", "terminate-backends@100ms", "--fault", "restart-postgres@300ms", "--fault", "crash-postgres@800ms")...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, r := range rep.Runs {
		for _, kind := range []string{testkit.FaultTerminateBackends, testkit.FaultRestartPostgres, testkit.FaultCrashPostgres} {
			if !suitetest.Fired(r, kind) {
				t.Errorf("%s: %s did not strike: %+v", r.Mode, kind, r.Faults)
			}
		}
		suitetest.Exact(t, r)
		suitetest.Completed(t, r, 1200)
	}
}

func TestBrokenExpectationExitsOne(t *testing.T) {
	t.Parallel()
	suitetest.BrokenExpectations(t, New(), suitetest.Shared(t, args("--requests", "100", "--modes", "async-compact")...)...)
}

// Bad input is one line and exit 2, before anything starts (no report is written).
func TestBadInputExitsTwo(t *testing.T) {
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"--claim-batch", "0"}, "--claim-batch 0"},
		{[]string{"--job-ms", "20", "--lease-ms", "100", "--renew=false"}, "--renew=false"},
		{[]string{"--on-complete", "forget"}, `--on-complete "forget"`},
		{[]string{"--modes", "river", "--job-ms", "20", "--lease-ms", "25"}, "River cannot renew"},
		{[]string{"--workers", "0"}, "--workers 0"},
		{[]string{"--priorities", "5"}, "--priorities 5"},
		{[]string{"--modes", "outbox"}, "unknown mode"},
		{[]string{"--database", "mariadb", "--modes", "sync,river"}, "River has no MySQL driver"},
		{[]string{"--database", "mariadb"}, "River has no MySQL driver"}, // the default modes hold River's
		{[]string{"--queue-backend", "redis", "--role", "producer", "--redis-url", "redis://127.0.0.1:1"}, "--role"},
	} {
		out := filepath.Join(t.TempDir(), "report.json")
		var stdout, stderr bytes.Buffer
		code := cli.Execute(New(), append(c.args, "--output", out), &stdout, &stderr)
		first, _, _ := strings.Cut(stderr.String(), "\n")
		if code != cli.ExitUsage || !strings.Contains(first, c.says) {
			t.Errorf("%v: exit %d, want %d and a line saying %q:\n%s", c.args, code, cli.ExitUsage, c.says, stderr.String())
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: a report was written", c.args)
		}
	}
}

// The completion writer, given a batch again (a queue retrying it after a COMMIT whose outcome
// was lost), or a batch overlapping one it wrote, completes nothing twice; nor does a
// completion of an earlier claim of a job claimed again. On both databases.
func TestCompletionWriterAppliesEachCompletionOnce(t *testing.T) {
	suitetest.EachDatabase(t, New(), func(t *testing.T, db sqldb.DB) {
		for _, policy := range OnComplete {
			for _, compact := range []bool{false, true} {
				t.Run(policy+"/compact="+strconv.FormatBool(compact), func(t *testing.T) {
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					defer cancel()
					for _, table := range []string{"jobs", "jobs_archive"} {
						if _, err := db.Exec(ctx, "DELETE FROM "+table); err != nil {
							t.Fatal(err)
						}
					}
					d := dialectOf(db.Dialect(), policy)
					insertJobs(t, db, d, 6)
					if held, err := d.claim(ctx, db, 6, time.Minute); err != nil || len(held) != 6 {
						t.Fatalf("claimed %d jobs (%v), want 6", len(held), err)
					}
					completed := 0
					w := completionWriter{sql: d, compact: compact, done: func(n int) { completed += n }}
					write := func(cs ...completion) {
						t.Helper()
						if err := sqldb.BeginFunc(ctx, db, func(tx sqldb.Tx) error { _, err := w.WriteBatch(ctx, tx, cs); return err }); err != nil {
							t.Fatal(err)
						}
					}
					write(completion{0, 1}, completion{1, 1}, completion{2, 1})
					write(completion{0, 1}, completion{1, 1}, completion{2, 1}) // the same batch again
					write(completion{2, 1}, completion{3, 1})                   // overlapping
					write(completion{4, 0})                                     // an earlier claim's
					if completed != 4 {
						t.Errorf("%d jobs completed, want 4", completed)
					}
					var done, multi int64
					sql := `SELECT COUNT(CASE WHEN state = 'completed' THEN 1 END), COUNT(CASE WHEN state = 'completed' AND completions <> 1 THEN 1 END) FROM jobs`
					if policy == Archive {
						sql = `SELECT COUNT(*), COUNT(CASE WHEN completions <> 1 THEN 1 END) FROM jobs_archive`
					}
					if policy == Delete {
						sql = `SELECT 6 - COUNT(*), 0 FROM jobs`
					}
					if err := db.QueryRow(ctx, sql).Scan(&done, &multi); err != nil {
						t.Fatal(err)
					}
					if done != 4 || multi != 0 {
						t.Errorf("%d jobs done, %d other than once; want 4 and 0", done, multi)
					}
				})
			}
		}
	})
}

// insertJobs inserts jobs 0..n-1 (each twice: the second finds it there).
func insertJobs(t *testing.T, db sqldb.DB, d dialect, n int64) {
	t.Helper()
	g := jobs{seed: 1, priorities: 4}
	for range 2 {
		for i := range n {
			if _, err := db.Exec(context.Background(), d.insertSQL(), i, g.priority(i), g.args(i)); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// The lease path's statements on both databases: claimers at once take every job once, in
// priority order within each claim; a lease that ran out is reaped and the job claimed again;
// a renewal keeps the lease of the claim that holds a job and not an earlier one's; a sync
// completion completes a job for the claim that holds it only.
func TestLeasePathStatements(t *testing.T) {
	suitetest.EachDatabase(t, New(), func(t *testing.T, db sqldb.DB) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		d := dialectOf(db.Dialect(), Keep)
		const n = 40
		insertJobs(t, db, d, n)
		var mu sync.Mutex
		claims := map[int64]int{}
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for {
					held, err := d.claim(ctx, db, 5, time.Minute)
					if err != nil {
						t.Error(err)
						return
					}
					if len(held) == 0 {
						return
					}
					mu.Lock()
					for k, j := range held {
						claims[j.ID]++
						if j.Attempt != 1 || (k > 0 && j.Priority < held[k-1].Priority) {
							t.Errorf("claim %+v: want first attempts in priority order", held)
						}
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		for i := range int64(n) {
			if claims[i] != 1 {
				t.Errorf("job %d claimed %d times, want once", i, claims[i])
			}
		}

		// Job 0's lease runs out: reaped, claimed again on attempt 2.
		if _, err := db.Exec(ctx, d.insertSQL(), int64(n), 1, `{"i": 40, "ms": 0}`); err != nil {
			t.Fatal(err)
		}
		held, err := d.claim(ctx, db, 1, time.Millisecond)
		if err != nil || len(held) != 1 || held[0].ID != n {
			t.Fatalf("claimed %+v (%v), want job %d", held, err, n)
		}
		time.Sleep(20 * time.Millisecond)
		if reaped, err := db.Exec(ctx, d.reapSQL()); err != nil || reaped != 1 {
			t.Fatalf("reaped %d (%v), want 1", reaped, err)
		}
		again, err := d.claim(ctx, db, 1, time.Minute)
		if err != nil || len(again) != 1 || again[0].ID != n || again[0].Attempt != 2 {
			t.Fatalf("claimed again %+v (%v), want job %d on attempt 2", again, err, n)
		}
		first, second := completion{n, 1}, completion{n, 2}
		kept, err := d.renew(ctx, db, []completion{first, {1, 1}}, time.Minute)
		if err != nil || kept[n] || !kept[1] || len(kept) != 1 {
			t.Errorf("renewing job %d's first claim and job 1's: kept %v (%v), want job 1's only", n, kept, err)
		}
		if kept, err := d.renew(ctx, db, []completion{second}, time.Minute); err != nil || !kept[n] {
			t.Errorf("renewing job %d's second claim: kept %v (%v)", n, kept, err)
		}
		for _, c := range []struct {
			claim completion
			want  int64
		}{{first, 0}, {second, 1}, {second, 0}} {
			if got, err := d.completeOne(ctx, db, c.claim); err != nil || got != c.want {
				t.Errorf("completing %+v: %d (%v), want %d", c.claim, got, err, c.want)
			}
		}
	})
}

func TestSkipLockedVersions(t *testing.T) {
	for version, want := range map[string]bool{
		"10.11.19-MariaDB-0+deb12u1": true, "10.6.4-MariaDB": true, "11.4.2-MariaDB-log": true,
		"10.5.23-MariaDB": false, "10.4.1-MariaDB": false, "8.0.36": true, "8.4.0-commercial": true,
		"5.7.44-log": false, "": false,
	} {
		if got := skipsLocked(version); got != want {
			t.Errorf("skipsLocked(%q) = %v, want %v", version, got, want)
		}
	}
}

// Job i's time and priority are the same in every mode and stay in their ranges.
func TestJobsAreReproducibleAndInRange(t *testing.T) {
	g := jobs{seed: 7, jobMs: 10, spread: 0.5, priorities: 4}
	seen := map[int16]bool{}
	for i := range int64(5000) {
		ms, p := g.ms(i), g.priority(i)
		if ms < 5 || ms > 15 || p < 1 || p > 4 || ms != g.ms(i) || !strings.Contains(g.args(i), `"ms": `+strconv.Itoa(int(ms))) {
			t.Fatalf("job %d: %d ms, priority %d, args %s", i, ms, p, g.args(i))
		}
		seen[p] = true
	}
	if len(seen) != 4 || g.longest() != 15*time.Millisecond {
		t.Errorf("priorities %v, longest %v", seen, g.longest())
	}
}

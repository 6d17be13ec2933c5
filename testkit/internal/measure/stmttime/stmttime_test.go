package stmttime_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/internal/measure/stmttime"
)

func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }

// TestTracerTimesEveryStatementOfAPool runs a transaction, a failing statement, a batch and a
// COPY on a traced pool against a real PostgreSQL: each is counted under its text (a batch
// under its first statement's, a COPY under its table), failures apart, and its time is at
// least the server's sleep inside it.
func TestTracerTimesEveryStatementOfAPool(t *testing.T) {
	ctx := context.Background()
	target := testdb.New(t)
	tr := stmttime.New()
	pool, err := target.NewPool(ctx, database.PoolOptions{MaxConns: 2, AppName: "hotspotkit-stmttime-test", Tracer: tr})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, `CREATE TABLE traced (id int PRIMARY KEY, n int NOT NULL DEFAULT 0)`); err != nil {
		t.Fatal(err)
	}
	const update = `UPDATE traced SET n = n + 1 WHERE id = $1`
	if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO traced (id) VALUES (1), (2)`); err != nil {
			return err
		}
		for range 3 {
			if _, err := tx.Exec(ctx, update, 1); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, `SELECT pg_sleep(0.02)`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO traced (id) VALUES (1)`); err == nil {
		t.Fatal("a duplicate key went in")
	}
	var b pgx.Batch
	b.Queue(update, 2)
	b.Queue(update, 2)
	if err := pool.SendBatch(ctx, &b).Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.CopyFrom(ctx, pgx.Identifier{"traced"}, []string{"id"}, pgx.CopyFromRows([][]any{{3}, {4}})); err != nil {
		t.Fatal(err)
	}

	got := map[string]stmttime.Timed{}
	for _, s := range tr.Totals() {
		got[stmttime.Normalize(s.SQL)] = s
	}
	for sql, calls := range map[string]int64{
		"begin": 1, "commit": 1, update: 3, "INSERT INTO traced (id) VALUES (1), (2)": 1,
		"SELECT pg_sleep(0.02)": 1, "INSERT INTO traced (id) VALUES (1)": 1,
		"batch of 2: " + update: 1, `COPY "traced"`: 1,
	} {
		if s := got[sql]; s.Calls != calls {
			t.Errorf("%q: %d calls, want %d (traced: %v)", sql, s.Calls, calls, keys(got))
		}
	}
	if s := got["INSERT INTO traced (id) VALUES (1)"]; s.Failed != 1 {
		t.Errorf("the duplicate INSERT: %d failed, want 1", s.Failed)
	}
	if s := got["SELECT pg_sleep(0.02)"]; s.Total.Seconds() < 0.02 {
		t.Errorf("a 20 ms sleep took %v on the client", s.Total)
	}
	// Largest first. (Which statement is largest is the machine's: on a loaded one the COPY
	// can take longer than the 20 ms sleep.)
	totals := tr.Totals()
	for i := 1; i < len(totals); i++ {
		if totals[i].Total > totals[i-1].Total {
			t.Errorf("totals not by time, largest first: %v before %v", totals[i-1], totals[i])
		}
	}
}

func keys(m map[string]stmttime.Timed) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestNormalize(t *testing.T) {
	if got := stmttime.Normalize("\n\tUPDATE  t\n\t SET n = 1 "); got != "UPDATE t SET n = 1" || strings.Contains(got, "\t") {
		t.Errorf("Normalize: %q", got)
	}
}

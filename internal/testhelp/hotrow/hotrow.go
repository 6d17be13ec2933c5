// Package hotrow is a test-only suite written for both dialects, PostgreSQL's and MySQL's: the
// smallest thing that shows a run end to end on either kind of database (the engine's tests,
// baseline's) without a suite of the kit's own.
package hotrow

import (
	"context"
	"testing/fstest"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit"
)

// Suite is the smallest suite written for both dialects (hotrow): each request claims its index (a
// row of hot_claims, so that a retry after a lost COMMIT reply adds nothing) and adds one to
// the one hot row, in one transaction; verification counts both against the requests applied.
type Suite struct{}

func (Suite) Info() testkit.Info {
	return testkit.Info{Name: "hotrow", Summary: "one hot row, both dialects", Example: "hotrow",
		Modes: []testkit.Mode{testkit.Sync}, DefaultModes: []testkit.Mode{testkit.Sync}, HotTables: []string{"hot_row"},
		SQL: fstest.MapFS{
			"hotrow.sql": {Data: []byte(`CREATE TABLE IF NOT EXISTS hot_row (id bigint PRIMARY KEY, n bigint NOT NULL);
CREATE TABLE IF NOT EXISTS hot_claims (request_index bigint PRIMARY KEY);`)},
			"mysql/hotrow.sql": {Data: []byte(`CREATE TABLE IF NOT EXISTS hot_row (id BIGINT PRIMARY KEY, n BIGINT NOT NULL) ENGINE = InnoDB;
CREATE TABLE IF NOT EXISTS hot_claims (request_index BIGINT PRIMARY KEY) ENGINE = InnoDB;`)},
		}}
}

func (Suite) Seed(ctx context.Context, r *testkit.Run) error {
	_, err := r.Admin().Exec(ctx, "INSERT INTO hot_row (id, n) VALUES (1, 0)")
	return err
}

func (Suite) Workload(_ context.Context, r *testkit.Run) (*testkit.Workload, error) {
	return &testkit.Workload{Op: r.SyncTx(func(ctx context.Context, tx sqldb.Tx, i int64) error {
		if _, err := tx.Exec(ctx, "INSERT INTO hot_claims (request_index) VALUES ($1)", i); err != nil {
			if sqldb.IsUniqueViolation(err) {
				return testkit.ErrAlreadyWritten
			}
			return err
		}
		_, err := tx.Exec(ctx, "UPDATE hot_row SET n = n + 1 WHERE id = 1")
		return err
	})}, nil
}

func (Suite) Persisted(ctx context.Context, r *testkit.Run, n int64) ([]int32, error) {
	out := make([]int32, n)
	rows, err := r.Admin().Query(ctx, "SELECT request_index FROM hot_claims")
	if err != nil {
		return nil, err
	}
	var i int64
	return out, sqldb.ForEachRow(rows, []any{&i}, func() error {
		if i >= 0 && i < n {
			out[i]++
		}
		return nil
	})
}

func (Suite) Verify(ctx context.Context, r *testkit.Run, res testkit.Result) ([]results.Check, error) {
	var applied int64
	for i := range res.Len() {
		if res.Applied(i) {
			applied++
		}
	}
	c := r.NewChecks()
	n, err := testkit.QueryInt(ctx, r.Admin(), "SELECT n FROM hot_row WHERE id = 1")
	if err != nil {
		return nil, err
	}
	claims, err := testkit.QueryInt(ctx, r.Admin(), "SELECT COUNT(*) FROM hot_claims")
	if err != nil {
		return nil, err
	}
	c.Int("the hot row's count", applied, n)
	c.Int("claims", applied, claims)
	return c.List(), nil
}

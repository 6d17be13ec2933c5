package script

import (
	"context"
	"fmt"
	"strconv"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit"
)

// verify checks a run against the requests whose writes must be there: every row the script
// updates exactly (package counters: the seed's values plus the applied requests' deltas), the
// rows it appends exactly once, its other tables unchanged. A script the queue modes cannot
// take is not recomputable (its writes depend on what it reads, or on constraints): its run is
// checked for every request written once and its other tables unchanged, and what the requests
// wrote is a check not made, which leaves the run unverified.
func (p *prepared) verify(ctx context.Context, r *testkit.Run, res testkit.Result) ([]results.Check, error) {
	var checks []results.Check
	c := r.NewChecks()
	unclaimed := p.unclaimed(r)
	if n := testkit.Unresolved(res); unclaimed && n > 0 {
		// Without a claim an unknown outcome cannot be looked up: the rows may hold its
		// writes or not, and no expectation of them is exact.
		c.NotChecked("what the requests wrote", fmt.Sprintf("%d requests' outcomes are unknown, and the run (--as-written) kept no claim to look them up by", n))
		if err := p.checkNoClaims(ctx, r, c); err != nil {
			return nil, err
		}
	} else if p.core != nil {
		cs, err := p.core.Verify(ctx, r, res)
		if err != nil {
			return nil, err
		}
		checks = append(checks, cs...)
		for k, t := range p.inserted {
			if err := p.checkAppended(ctx, r.Admin(), c, res, k, t); err != nil {
				return nil, err
			}
		}
	} else {
		var applied int64
		for i := range res.Len() {
			if res.Applied(i) {
				applied++
			}
		}
		var err error
		if unclaimed {
			err = p.checkNoClaims(ctx, r, c)
		} else {
			err = checkClaims(ctx, r, c, "counter_claims rows = applied requests", applied)
		}
		if err != nil {
			return nil, err
		}
		c.NotChecked("what the requests wrote", "not recomputable: "+p.deferral)
	}
	for _, t := range p.unchanged {
		sum, err := p.sql.checksum(ctx, r.Admin(), t)
		if err != nil {
			return nil, err
		}
		c.Text(t+" unchanged (no statement writes it)", p.sums[t], sum)
	}
	return append(checks, c.List()...), nil
}

// checkNoClaims checks that a run whose requests carried no claim (--as-written) left none.
func (p *prepared) checkNoClaims(ctx context.Context, r *testkit.Run, c *testkit.Checks) error {
	return checkClaims(ctx, r, c, "counter_claims rows: none (the requests ran without a claim)", 0)
}

// checkClaims checks, as the check named name, that the run left want claims.
func checkClaims(ctx context.Context, r *testkit.Run, c *testkit.Checks, name string, want int64) error {
	var claims int64
	if err := r.Admin().QueryRow(ctx, `SELECT count(*) FROM counter_claims`).Scan(&claims); err != nil {
		return fmt.Errorf("counting the claims: %w", err)
	}
	c.Int(name, want, claims)
	return nil
}

// checkAppended checks table t (the k-th the script inserts into): its rows are the seed's and
// exactly those the applied requests' INSERTs append, each once, compared on the columns the
// INSERTs give client values; the columns they give a server time are checked for presence.
func (p *prepared) checkAppended(ctx context.Context, conn sqldb.Conn, c *testkit.Checks, res testkit.Result, k int, t string) error {
	var ws []*write
	for i := range p.writes {
		if w := &p.writes[i]; w.insert != nil && w.insert.Table.Name == t {
			ws = append(ws, w)
		}
	}
	cols := ws[0].paramCols
	for _, w := range ws[1:] {
		if !sameColumns(cols, w.paramCols) {
			c.NotChecked(t+": the rows the applied requests appended", "INSERTs of different columns append to it, which the kit does not compare")
			return nil
		}
	}
	var rows [][]*string
	for i := range res.Len() {
		if !res.Applied(i) {
			continue
		}
		for _, w := range ws {
			var err error
			if rows, err = p.insertRows(w, i, rows); err != nil {
				return err
			}
		}
	}
	id := p.sql.quote(t)
	seed := seedPrefix + strconv.Itoa(k)
	var got, extra, missing int64
	if len(cols) == 0 { // nothing but server values and defaults: the count is what can be checked
		err := conn.QueryRow(ctx, "SELECT (SELECT count(*) FROM "+id+") - (SELECT count(*) FROM "+seed+")").Scan(&got)
		c.Int(t+": rows the applied requests inserted", int64(len(rows)), got)
		return err
	}
	got, extra, missing, err := p.sql.compareAppended(ctx, conn, t, seed, cols, rows)
	if err != nil {
		return fmt.Errorf("comparing %s's rows: %w", t, err)
	}
	c.Int(t+": rows inserted = the applied requests' rows", int64(len(rows)), got)
	c.Int(t+": rows no applied request inserted (a duplicate, or another's)", 0, extra)
	c.Int(t+": applied requests' rows missing", 0, missing)
	for _, col := range serverColumns(ws) {
		var nulls, seedNulls int64
		cid := p.sql.quote(col)
		if err := conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM `+id+` WHERE `+cid+` IS NULL), (SELECT count(*) FROM `+seed+` WHERE `+cid+` IS NULL)`).Scan(&nulls, &seedNulls); err != nil {
			return err
		}
		c.Int(t+"."+col+" set on every inserted row (the server's value: checked for presence only)", seedNulls, nulls)
	}
	return nil
}

func sameColumns(a, b []appendColumn) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if a[k].col.Name != b[k].col.Name {
			return false
		}
	}
	return true
}

// serverColumns are the columns the INSERTs ws give a server time.
func serverColumns(ws []*write) []string {
	var out []string
	for _, w := range ws {
		for _, c := range w.appendCols {
			if c.param == 0 {
				out = append(out, c.col.Name)
			}
		}
	}
	return out
}

// persisted counts every request's claim rows (the core's where it declares the script).
func (p *prepared) persisted(ctx context.Context, r *testkit.Run, n int64) ([]int32, error) {
	if p.unclaimed(r) {
		return nil, testkit.ErrNothingToReconcile
	}
	if p.core != nil {
		return p.core.Persisted(ctx, r, n)
	}
	rows, err := r.Admin().Query(ctx, `SELECT request_index, count(*) FROM counter_claims GROUP BY 1`)
	if err != nil {
		return nil, err
	}
	counts := make([]int32, n)
	var i, claims int64
	err = sqldb.ForEachRow(rows, []any{&i, &claims}, func() error {
		if i >= 0 && i < n {
			counts[i] = int32(claims)
		}
		return nil
	})
	return counts, err
}

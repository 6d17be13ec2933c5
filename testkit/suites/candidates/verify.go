package candidates

import (
	"context"
	"fmt"

	"github.com/hotspotkit/hotspotkit/testkit"
)

// Check names the summary block reads back.
const (
	checkRows     = "request_candidates rows = slots written"
	checkRequests = "distinct request_id = requests that wrote"
)

// expectation is what the requests that must be there leave in request_candidates. The rows
// themselves are not kept: compareRows generates them again, a chunk at a time, so that
// verification holds a chunk of rows in memory, not the run's.
type expectation struct {
	indexes  []int64  // every request that wrote, by index
	requests []string // its request_id
	slots    []int32  // its number of slots
	rows     int64    // slots of all of them
	byStatus [len(statusNames)]int64
}

func (s *Suite) expect(r *testkit.Run, res testkit.Result) expectation {
	g := s.lifecycle(r)
	var e expectation
	if g.persistence == PersistNone { // nothing persists: no rows to expect (lifecycle.rows)
		return e
	}
	n := res.Len()
	for i := int64(0); i < n; i++ {
		if !res.Applied(i) {
			continue
		}
		// The candidates a request's rows are made of (lifecycle.rows): their count and final
		// status are all this needs; compareRows builds the rows themselves.
		cands := g.candidates(i)
		e.indexes = append(e.indexes, i)
		e.requests = append(e.requests, requestID(i))
		e.slots = append(e.slots, int32(len(cands)))
		e.rows += int64(len(cands))
		for _, c := range cands {
			e.byStatus[c.outcome]++
		}
	}
	return e
}

// verifyChunk is how many requests' rows compareRows compares at once.
const verifyChunk = 4096

// slotDiffs count the expected slots missing from the table or differing from it.
type slotDiffs struct{ missing, statusOff, columnsOff int64 }

// Verify checks request_candidates exactly against the lifecycles of the requests that must
// be there: the number of rows and of request_ids, the rows of every request_id, every slot's
// final status and every other column, and the counts by status (0 rows for --persistence none).
func (s *Suite) Verify(ctx context.Context, r *testkit.Run, res testkit.Result) ([]testkit.Check, error) {
	want := s.expect(r, res)
	c := r.NewChecks()

	stmts := dialectOf(r.Dialect())
	got, err := stmts.tableCounts(ctx, r.Admin())
	if err != nil {
		return nil, fmt.Errorf("counting request_candidates: %w", err)
	}
	c.Int(checkRows, want.rows, got.rows)
	c.Int(checkRequests, int64(len(want.requests)), got.requests)

	// The slot is the primary key, so duplicates cannot exist; a request with too many or
	// too few rows can.
	offRequests, err := stmts.offRequests(ctx, r.Admin(), want)
	if err != nil {
		return nil, err
	}
	c.Int("request_ids whose row count differs from their slots", 0, offRequests)

	d, err := stmts.compareRows(ctx, r.Admin(), s.lifecycle(r), want.indexes)
	if err != nil {
		return nil, err
	}
	c.Int("slots missing", 0, d.missing)
	c.Int("slots whose final status differs from the lifecycle's last state", 0, d.statusOff)
	c.Int("slots whose other columns differ (ids, codes, timings, created_at, merged extra_data)", 0, d.columnsOff)

	for st, n := range want.byStatus {
		c.Int("rows with status "+status(st).String(), n, got.byStatus[st])
	}
	return c.List(), nil
}

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

// verifyChunk is how many requests' rows compareRows sends in one statement.
const verifyChunk = 4096

// slotDiffs count the expected slots missing from the table or differing from it.
type slotDiffs struct{ missing, statusOff, columnsOff int64 }

// compareRows compares every slot the requests at indexes must leave with the table, a chunk
// of requests per statement.
func compareRows(ctx context.Context, r *testkit.Run, g lifecycle, indexes []int64) (slotDiffs, error) {
	var d slotDiffs
	var rows []record
	for start := 0; start < len(indexes); start += verifyChunk {
		rows = rows[:0]
		for _, i := range indexes[start:min(start+verifyChunk, len(indexes))] {
			rows = append(rows, g.rows(i)...)
		}
		args, err := recordArgs(rows)
		if err != nil {
			return d, err
		}
		var missing, statusOff, columnsOff int64
		err = r.Admin().QueryRow(ctx, `
			SELECT count(*) FILTER (WHERE t.request_id IS NULL),
			       count(*) FILTER (WHERE t.status <> r.status),
			       count(*) FILTER (WHERE t.request_id IS NOT NULL AND
			           (t.provider_id, t.provider_key_id, t.endpoint_id, t.status_code, t.error_type,
			            t.error_message, t.latency_ms, t.first_byte_ms, t.extra_data, t.created_at,
			            t.started_at, t.finished_at)
			           IS DISTINCT FROM
			           (r.provider_id, r.provider_key_id, r.endpoint_id, r.status_code, r.error_type,
			            r.error_message, r.latency_ms, r.first_byte_ms, r.extra_data::jsonb, r.created_at,
			            r.started_at, r.finished_at))
			FROM `+unnestRecords+`
			LEFT JOIN request_candidates t
			       ON (t.request_id, t.candidate_index, t.retry_index) = (r.request_id, r.candidate_index, r.retry_index)`,
			args...).Scan(&missing, &statusOff, &columnsOff)
		if err != nil {
			return d, fmt.Errorf("comparing slots: %w", err)
		}
		d.missing += missing
		d.statusOff += statusOff
		d.columnsOff += columnsOff
	}
	return d, nil
}

// Verify checks request_candidates exactly against the lifecycles of the requests that must
// be there: the number of rows and of request_ids, the rows of every request_id, every slot's
// final status and every other column, and the counts by status (0 rows for --persistence none).
func (s *Suite) Verify(ctx context.Context, r *testkit.Run, res testkit.Result) ([]testkit.Check, error) {
	want := s.expect(r, res)
	c := r.NewChecks()

	var rows, requests int64
	var byStatus [len(statusNames)]int64
	err := r.Admin().QueryRow(ctx, `
		SELECT count(*), count(DISTINCT request_id),
		       count(*) FILTER (WHERE status = 'pending'), count(*) FILTER (WHERE status = 'streaming'),
		       count(*) FILTER (WHERE status = 'success'), count(*) FILTER (WHERE status = 'failed'),
		       count(*) FILTER (WHERE status = 'cancelled')
		FROM request_candidates`).
		Scan(&rows, &requests, &byStatus[pending], &byStatus[streaming], &byStatus[success], &byStatus[failed], &byStatus[cancelled])
	if err != nil {
		return nil, fmt.Errorf("counting request_candidates: %w", err)
	}
	c.Int(checkRows, want.rows, rows)
	c.Int(checkRequests, int64(len(want.requests)), requests)

	// The slot is the primary key, so duplicates cannot exist; a request with too many or
	// too few rows can.
	offRequests, err := testkit.QueryInt(ctx, r.Admin(), `
		SELECT count(*)
		FROM (SELECT request_id, count(*) AS n FROM request_candidates GROUP BY request_id) AS got
		FULL JOIN unnest($1::text[], $2::int4[]) AS w(request_id, n) USING (request_id)
		WHERE got.n IS DISTINCT FROM w.n`, want.requests, want.slots)
	if err != nil {
		return nil, err
	}
	c.Int("request_ids whose row count differs from their slots", 0, offRequests)

	d, err := compareRows(ctx, r, s.lifecycle(r), want.indexes)
	if err != nil {
		return nil, err
	}
	c.Int("slots missing", 0, d.missing)
	c.Int("slots whose final status differs from the lifecycle's last state", 0, d.statusOff)
	c.Int("slots whose other columns differ (ids, codes, timings, created_at, merged extra_data)", 0, d.columnsOff)

	for st, n := range want.byStatus {
		c.Int("rows with status "+status(st).String(), n, byStatus[st])
	}
	return c.List(), nil
}

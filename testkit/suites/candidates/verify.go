package candidates

import (
	"context"
	"fmt"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/load"
)

// Check names the summary block reads back.
const (
	checkRows     = "request_candidates rows = slots written"
	checkRequests = "distinct request_id = requests that wrote"
)

// expectation is what the requests that must be there leave in request_candidates.
type expectation struct {
	rows     []record // every slot's final row
	requests []string // request_id of every request that wrote
	slots    []int32  // its number of slots
	byStatus [len(statusNames)]int64
}

func (s *Suite) expect(r *testkit.Run, res *load.Result) expectation {
	g := s.lifecycle(r)
	var e expectation
	n := res.Outcomes.Len()
	for i := int64(0); i < n; i++ {
		if !r.Applied(i) {
			continue
		}
		rows := g.rows(i)
		if len(rows) == 0 {
			continue
		}
		e.rows = append(e.rows, rows...)
		e.requests = append(e.requests, requestID(i))
		e.slots = append(e.slots, int32(len(rows)))
		for _, row := range rows {
			e.byStatus[row.Status]++
		}
	}
	return e
}

// Verify checks request_candidates exactly against the lifecycles of the requests that must
// be there: the number of rows and of request_ids, the rows of every request_id, every slot's
// final status and every other column, and the counts by status (0 rows for --persistence none).
func (s *Suite) Verify(ctx context.Context, r *testkit.Run, res *load.Result) ([]results.Check, error) {
	want := s.expect(r, res)
	c := r.NewChecks()

	var rows, requests int64
	var byStatus [len(statusNames)]int64
	err := r.Admin.QueryRow(ctx, `
		SELECT count(*), count(DISTINCT request_id),
		       count(*) FILTER (WHERE status = 'pending'), count(*) FILTER (WHERE status = 'streaming'),
		       count(*) FILTER (WHERE status = 'success'), count(*) FILTER (WHERE status = 'failed'),
		       count(*) FILTER (WHERE status = 'cancelled')
		FROM request_candidates`).
		Scan(&rows, &requests, &byStatus[pending], &byStatus[streaming], &byStatus[success], &byStatus[failed], &byStatus[cancelled])
	if err != nil {
		return nil, fmt.Errorf("counting request_candidates: %w", err)
	}
	c.Int(checkRows, int64(len(want.rows)), rows)
	c.Int(checkRequests, int64(len(want.requests)), requests)

	// The slot is the primary key, so duplicates cannot exist; a request with too many or
	// too few rows can.
	offRequests, err := testkit.QueryInt(ctx, r.Admin, `
		SELECT count(*)
		FROM (SELECT request_id, count(*) AS n FROM request_candidates GROUP BY request_id) AS got
		FULL JOIN unnest($1::text[], $2::int4[]) AS w(request_id, n) USING (request_id)
		WHERE got.n IS DISTINCT FROM w.n`, want.requests, want.slots)
	if err != nil {
		return nil, err
	}
	c.Int("request_ids whose row count differs from their slots", 0, offRequests)

	args, err := recordArgs(want.rows)
	if err != nil {
		return nil, err
	}
	var missing, statusOff, columnsOff int64
	err = r.Admin.QueryRow(ctx, `
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
		return nil, fmt.Errorf("comparing slots: %w", err)
	}
	c.Int("slots missing", 0, missing)
	c.Int("slots whose final status differs from the lifecycle's last state", 0, statusOff)
	c.Int("slots whose other columns differ (ids, codes, timings, created_at, merged extra_data)", 0, columnsOff)

	for st, n := range want.byStatus {
		c.Int("rows with status "+status(st).String(), n, byStatus[st])
	}
	return c.List(), nil
}

package candidates

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit"
)

// pgSQL is the suite's SQL on PostgreSQL: a batch's records travel as one array per column
// (unnest), and the verification compares on the server.
type pgSQL struct{}

// recordColumns are the table's columns in the order of recordArgs; unnestRecords turns
// recordArgs into rows named r, and recordColumnsCast selects them (extra_data travels as text).
const (
	recordColumns = `request_id, candidate_index, retry_index, status, provider_id, provider_key_id,
	endpoint_id, status_code, error_type, error_message, latency_ms, first_byte_ms, extra_data,
	created_at, started_at, finished_at`
	recordColumnsCast = `r.request_id, r.candidate_index, r.retry_index, r.status, r.provider_id,
	r.provider_key_id, r.endpoint_id, r.status_code, r.error_type, r.error_message, r.latency_ms,
	r.first_byte_ms, r.extra_data::jsonb, r.created_at, r.started_at, r.finished_at`
	unnestRecords = `unnest($1::text[], $2::int4[], $3::int4[], $4::text[], $5::text[], $6::text[],
	$7::text[], $8::int4[], $9::text[], $10::text[], $11::int4[], $12::int4[], $13::text[],
	$14::timestamptz[], $15::timestamptz[], $16::timestamptz[]) AS r(` + recordColumns + `)`
)

// upsertSQL writes a batch of records, one per array element, in one statement. No slot may
// appear twice in it (ON CONFLICT DO UPDATE touches a row at most once per statement).
//
// The guards keep the row right whatever order the writes land in — under --queue-full sync
// an inline write can overtake queued writes of its slot, so correctness must not rest on the
// queue: the status only advances (the rule of advance: a stored terminal status is never
// overwritten by a non-terminal one, streaming never by pending), other columns take the
// incoming value when it is present, extra_data objects merge shallowly (incoming keys win),
// created_at keeps the earliest.
const upsertSQL = `
INSERT INTO request_candidates AS t (` + recordColumns + `)
SELECT ` + recordColumnsCast + `
FROM ` + unnestRecords + `
ON CONFLICT (request_id, candidate_index, retry_index) DO UPDATE SET
	status = CASE
		WHEN EXCLUDED.status IN ('success', 'failed', 'cancelled') THEN EXCLUDED.status
		WHEN t.status IN ('success', 'failed', 'cancelled') THEN t.status
		WHEN t.status = 'streaming' AND EXCLUDED.status = 'pending' THEN t.status
		ELSE EXCLUDED.status
	END,
	provider_id     = COALESCE(EXCLUDED.provider_id, t.provider_id),
	provider_key_id = COALESCE(EXCLUDED.provider_key_id, t.provider_key_id),
	endpoint_id     = COALESCE(EXCLUDED.endpoint_id, t.endpoint_id),
	status_code     = COALESCE(EXCLUDED.status_code, t.status_code),
	error_type      = COALESCE(EXCLUDED.error_type, t.error_type),
	error_message   = COALESCE(EXCLUDED.error_message, t.error_message),
	latency_ms      = COALESCE(EXCLUDED.latency_ms, t.latency_ms),
	first_byte_ms   = COALESCE(EXCLUDED.first_byte_ms, t.first_byte_ms),
	extra_data      = t.extra_data || EXCLUDED.extra_data,
	created_at      = LEAST(t.created_at, EXCLUDED.created_at),
	started_at      = COALESCE(EXCLUDED.started_at, t.started_at),
	finished_at     = COALESCE(EXCLUDED.finished_at, t.finished_at)`

// upsert writes recs (distinct slots) with upsertSQL.
func (pgSQL) upsert(ctx context.Context, tx sqldb.Tx, recs []record) error {
	args, err := recordArgs(recs)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, upsertSQL, args...); err != nil {
		return fmt.Errorf("upsert %d request_candidates: %w", len(recs), err)
	}
	return nil
}

// recordArgs returns recs as one array per column, in the order of recordColumns, of pgx's
// types; an absent field is a NULL element.
func recordArgs(recs []record) ([]any, error) {
	n := len(recs)
	var (
		ids                     = make([]string, n)
		cands, retries          = make([]int32, n), make([]int32, n)
		statuses, extras        = make([]string, n), make([]string, n)
		providers, keys, ends   = make([]pgtype.Text, n), make([]pgtype.Text, n), make([]pgtype.Text, n)
		errTypes, errMsgs       = make([]pgtype.Text, n), make([]pgtype.Text, n)
		codes, lat, firstByte   = make([]pgtype.Int4, n), make([]pgtype.Int4, n), make([]pgtype.Int4, n)
		created, started, ended = make([]pgtype.Timestamptz, n), make([]pgtype.Timestamptz, n), make([]pgtype.Timestamptz, n)
	)
	for i, r := range recs {
		extra, err := extraJSON(r.Extra)
		if err != nil {
			return nil, err
		}
		ids[i], cands[i], retries[i], statuses[i], extras[i] = requestID(r.Request), r.Candidate, r.Retry, r.Status.String(), extra
		providers[i], keys[i], ends[i] = pgText(r.ProviderID), pgText(r.KeyID), pgText(r.EndpointID)
		errTypes[i], errMsgs[i] = pgText(r.ErrorType), pgText(r.ErrorMessage)
		codes[i], lat[i], firstByte[i] = pgInt4(r.StatusCode), pgInt4(r.LatencyMs), pgInt4(r.FirstByteMs)
		created[i], started[i], ended[i] = pgTime(r.CreatedAt), pgTime(r.StartedAt), pgTime(r.FinishedAt)
	}
	return []any{ids, cands, retries, statuses, providers, keys, ends, codes,
		errTypes, errMsgs, lat, firstByte, extras, created, started, ended}, nil
}

func pgText(v sql.NullString) pgtype.Text {
	return pgtype.Text{String: v.String, Valid: v.Valid}
}

func pgInt4(v sql.NullInt32) pgtype.Int4 { return pgtype.Int4{Int32: v.Int32, Valid: v.Valid} }

func pgTime(v sql.NullTime) pgtype.Timestamptz {
	return pgtype.Timestamptz{Time: v.Time, Valid: v.Valid}
}

func (pgSQL) tableCounts(ctx context.Context, q sqldb.Querier) (tableCounts, error) {
	var c tableCounts
	err := q.QueryRow(ctx, `
		SELECT count(*), count(DISTINCT request_id),
		       count(*) FILTER (WHERE status = 'pending'), count(*) FILTER (WHERE status = 'streaming'),
		       count(*) FILTER (WHERE status = 'success'), count(*) FILTER (WHERE status = 'failed'),
		       count(*) FILTER (WHERE status = 'cancelled')
		FROM request_candidates`).
		Scan(&c.rows, &c.requests, &c.byStatus[pending], &c.byStatus[streaming], &c.byStatus[success], &c.byStatus[failed], &c.byStatus[cancelled])
	return c, err
}

func (pgSQL) offRequests(ctx context.Context, q sqldb.Querier, want expectation) (int64, error) {
	return testkit.QueryInt(ctx, q, `
		SELECT count(*)
		FROM (SELECT request_id, count(*) AS n FROM request_candidates GROUP BY request_id) AS got
		FULL JOIN unnest($1::text[], $2::int4[]) AS w(request_id, n) USING (request_id)
		WHERE got.n IS DISTINCT FROM w.n`, want.requests, want.slots)
}

// compareRows sends the rows of a chunk of requests in one statement, which counts those
// missing from the table or differing from it.
func (pgSQL) compareRows(ctx context.Context, q sqldb.Querier, g lifecycle, indexes []int64) (slotDiffs, error) {
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
		err = q.QueryRow(ctx, `
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

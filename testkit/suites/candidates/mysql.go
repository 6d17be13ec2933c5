package candidates

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/hotspotkit/hotspotkit/sqldb"
)

// mysqlSQL is the suite's SQL on MySQL 8 and MariaDB (mysql/request_candidates.sql). What
// differs from PostgreSQL's, and why:
//   - No arrays: a batch's records go in as one multi-row INSERT … ON DUPLICATE KEY UPDATE,
//     sixteen parameters a row, its text composed once per row count.
//   - The guard is PostgreSQL's, written with VALUES(column) for the incoming value (MySQL 8
//     deprecates it for an alias of the new row, which MariaDB does not have). MySQL assigns
//     the SET list left to right, each assignment seeing those before it: every assignment
//     here reads its own column only. LEAST is NULL when an argument is, where PostgreSQL's
//     ignores it: an incoming created_at that is absent keeps the stored one. extra_data
//     merges with JSON_MERGE_PATCH, which for objects of plain values (all the suite writes)
//     is PostgreSQL's ||: the incoming keys win.
//   - The verification reads the rows back and compares them here, a chunk of requests at a
//     time: MySQL has no FULL JOIN to compare the row counts per request_id with, and its
//     JSON equality is not MariaDB's (a JSON column there is text), so extra_data is compared
//     parsed.
type mysqlSQL struct{}

// mysqlGuard is the ON DUPLICATE KEY UPDATE of mysqlUpsert: upsertSQL's guard.
const mysqlGuard = `
ON DUPLICATE KEY UPDATE
	status = CASE
		WHEN VALUES(status) IN ('success', 'failed', 'cancelled') THEN VALUES(status)
		WHEN status IN ('success', 'failed', 'cancelled') THEN status
		WHEN status = 'streaming' AND VALUES(status) = 'pending' THEN status
		ELSE VALUES(status)
	END,
	provider_id     = COALESCE(VALUES(provider_id), provider_id),
	provider_key_id = COALESCE(VALUES(provider_key_id), provider_key_id),
	endpoint_id     = COALESCE(VALUES(endpoint_id), endpoint_id),
	status_code     = COALESCE(VALUES(status_code), status_code),
	error_type      = COALESCE(VALUES(error_type), error_type),
	error_message   = COALESCE(VALUES(error_message), error_message),
	latency_ms      = COALESCE(VALUES(latency_ms), latency_ms),
	first_byte_ms   = COALESCE(VALUES(first_byte_ms), first_byte_ms),
	extra_data      = JSON_MERGE_PATCH(extra_data, VALUES(extra_data)),
	created_at      = LEAST(created_at, COALESCE(VALUES(created_at), created_at)),
	started_at      = COALESCE(VALUES(started_at), started_at),
	finished_at     = COALESCE(VALUES(finished_at), finished_at)`

// mysqlUpserts are the upserts composed so far, by row count.
var mysqlUpserts sync.Map // int → string

// mysqlUpsert is the upsert of rows records.
func mysqlUpsert(rows int) string {
	if s, ok := mysqlUpserts.Load(rows); ok {
		return s.(string)
	}
	row := "(" + sqldb.Marks(16) + ")"
	var b strings.Builder
	b.WriteString("INSERT INTO request_candidates (" + recordColumns + ") VALUES\n\t")
	for i := range rows {
		if i > 0 {
			b.WriteString(",\n\t")
		}
		b.WriteString(row)
	}
	b.WriteString(mysqlGuard)
	s, _ := mysqlUpserts.LoadOrStore(rows, b.String())
	return s.(string)
}

func (mysqlSQL) upsert(ctx context.Context, tx sqldb.Tx, recs []record) error {
	args := make([]any, 0, 16*len(recs))
	for _, r := range recs {
		extra, err := extraJSON(r.Extra)
		if err != nil {
			return err
		}
		args = append(args, requestID(r.Request), r.Candidate, r.Retry, r.Status.String(), r.ProviderID, r.KeyID,
			r.EndpointID, r.StatusCode, r.ErrorType, r.ErrorMessage, r.LatencyMs, r.FirstByteMs, extra,
			r.CreatedAt, r.StartedAt, r.FinishedAt)
	}
	if _, err := tx.Exec(ctx, mysqlUpsert(len(recs)), args...); err != nil {
		return fmt.Errorf("upsert %d request_candidates: %w", len(recs), err)
	}
	return nil
}

func (mysqlSQL) tableCounts(ctx context.Context, q sqldb.Querier) (tableCounts, error) {
	var c tableCounts
	err := q.QueryRow(ctx, `
		SELECT COUNT(*), COUNT(DISTINCT request_id),
		       COUNT(CASE WHEN status = 'pending' THEN 1 END), COUNT(CASE WHEN status = 'streaming' THEN 1 END),
		       COUNT(CASE WHEN status = 'success' THEN 1 END), COUNT(CASE WHEN status = 'failed' THEN 1 END),
		       COUNT(CASE WHEN status = 'cancelled' THEN 1 END)
		FROM request_candidates`).
		Scan(&c.rows, &c.requests, &c.byStatus[pending], &c.byStatus[streaming], &c.byStatus[success], &c.byStatus[failed], &c.byStatus[cancelled])
	return c, err
}

func (mysqlSQL) offRequests(ctx context.Context, q sqldb.Querier, want expectation) (int64, error) {
	slots := make(map[string]int32, len(want.requests))
	for i, id := range want.requests {
		slots[id] = want.slots[i]
	}
	rows, err := q.Query(ctx, `SELECT request_id, COUNT(*) FROM request_candidates GROUP BY request_id`)
	if err != nil {
		return 0, err
	}
	var off int64
	var id string
	var n int32
	err = sqldb.ForEachRow(rows, []any{&id, &n}, func() error {
		if w, ok := slots[id]; !ok || w != n {
			off++
		}
		delete(slots, id)
		return nil
	})
	return off + int64(len(slots)), err
}

// mysqlRow is a row of request_candidates as it is read back.
type mysqlRow struct {
	record
	status string
	extra  []byte
}

// compareRows reads the rows of a chunk of requests in one statement and compares them here.
func (mysqlSQL) compareRows(ctx context.Context, q sqldb.Querier, g lifecycle, indexes []int64) (slotDiffs, error) {
	var d slotDiffs
	for start := 0; start < len(indexes); start += verifyChunk {
		chunk := indexes[start:min(start+verifyChunk, len(indexes))]
		got, err := mysqlRows(ctx, q, chunk)
		if err != nil {
			return d, fmt.Errorf("comparing slots: %w", err)
		}
		for _, i := range chunk {
			for _, want := range g.rows(i) {
				row, ok := got[want.slot]
				switch {
				case !ok:
					d.missing++
					continue
				case row.status != want.Status.String():
					d.statusOff++
				}
				same, err := sameColumns(row, want)
				if err != nil {
					return d, err
				}
				if !same {
					d.columnsOff++
				}
			}
		}
	}
	return d, nil
}

// mysqlRows reads the rows of the requests at indexes, by slot.
func mysqlRows(ctx context.Context, q sqldb.Querier, indexes []int64) (map[slot]mysqlRow, error) {
	ids := make([]any, len(indexes))
	for k, i := range indexes {
		ids[k] = requestID(i)
	}
	rows, err := q.Query(ctx, `SELECT `+recordColumns+` FROM request_candidates
		WHERE request_id IN (`+sqldb.Marks(len(ids))+`)`, ids...)
	if err != nil {
		return nil, err
	}
	out := make(map[slot]mysqlRow, len(indexes))
	var r mysqlRow
	var id string
	dest := []any{&id, &r.Candidate, &r.Retry, &r.status, &r.ProviderID, &r.KeyID, &r.EndpointID, &r.StatusCode,
		&r.ErrorType, &r.ErrorMessage, &r.LatencyMs, &r.FirstByteMs, &r.extra, &r.CreatedAt, &r.StartedAt, &r.FinishedAt}
	err = sqldb.ForEachRow(rows, dest, func() error {
		if _, err := fmt.Sscanf(id, "req-%d", &r.Request); err != nil {
			return fmt.Errorf("request_candidates row with unexpected request_id %q", id)
		}
		r.extra = append([]byte(nil), r.extra...)
		out[r.slot] = r
		return nil
	})
	return out, err
}

// sameColumns says whether row holds what want says of every column but the key and the
// status (PostgreSQL's IS DISTINCT FROM: two absent values are the same).
func sameColumns(row mysqlRow, want record) (bool, error) {
	a, w := row.record, want
	same := a.ProviderID == w.ProviderID && a.KeyID == w.KeyID && a.EndpointID == w.EndpointID &&
		a.StatusCode == w.StatusCode && a.ErrorType == w.ErrorType && a.ErrorMessage == w.ErrorMessage &&
		a.LatencyMs == w.LatencyMs && a.FirstByteMs == w.FirstByteMs &&
		sameTime(a.CreatedAt, w.CreatedAt) && sameTime(a.StartedAt, w.StartedAt) && sameTime(a.FinishedAt, w.FinishedAt)
	if !same {
		return false, nil
	}
	var got, exp any
	if err := json.Unmarshal(row.extra, &got); err != nil {
		return false, fmt.Errorf("request_candidates.extra_data of %s: %w", requestID(row.Request), err)
	}
	text, err := extraJSON(want.Extra)
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal([]byte(text), &exp); err != nil {
		return false, err
	}
	return reflect.DeepEqual(got, exp), nil
}

func sameTime(a, b sql.NullTime) bool {
	return a.Valid == b.Valid && (!a.Valid || a.Time.Equal(b.Time))
}

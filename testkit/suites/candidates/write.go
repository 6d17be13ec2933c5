package candidates

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/hotspotkit/hotspotkit/sqldb"
)

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

// batchWriter is the queue's TxWriter, compacted or not: it splits the batch into layers in
// which no slot repeats (a compacted batch is a single layer) and upserts each layer with one
// statement, in order.
type batchWriter struct{}

func (batchWriter) WriteBatch(ctx context.Context, tx sqldb.Tx, recs []record) (int, error) {
	ls := layers(recs)
	for _, l := range ls {
		if err := upsert(ctx, tx, l); err != nil {
			return 0, err
		}
	}
	return len(ls), nil
}

// layers splits recs so that no slot repeats within a layer while every slot's records keep
// their order: layer k holds each slot's (k+1)-th record, in batch order. The number of
// statements is the most writes any one slot has in the batch, not the number of repeats.
func layers(recs []record) [][]record {
	seen := make(map[slot]int, len(recs))
	var out [][]record
	for _, r := range recs {
		k := seen[r.slot]
		seen[r.slot] = k + 1
		if k == len(out) {
			out = append(out, nil)
		}
		out[k] = append(out[k], r)
	}
	return out
}

// upsert writes recs (distinct slots) with upsertSQL.
func upsert(ctx context.Context, tx sqldb.Tx, recs []record) error {
	args, err := recordArgs(recs)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, upsertSQL, args...); err != nil {
		return fmt.Errorf("upsert %d request_candidates: %w", len(recs), err)
	}
	return nil
}

// recordArgs returns recs as one array per column, in the order of recordColumns; an absent
// field is a NULL element.
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
		providers[i], keys[i], ends[i], errTypes[i], errMsgs[i] = r.ProviderID, r.KeyID, r.EndpointID, r.ErrorType, r.ErrorMessage
		codes[i], lat[i], firstByte[i] = r.StatusCode, r.LatencyMs, r.FirstByteMs
		created[i], started[i], ended[i] = r.CreatedAt, r.StartedAt, r.FinishedAt
	}
	return []any{ids, cands, retries, statuses, providers, keys, ends, codes,
		errTypes, errMsgs, lat, firstByte, extras, created, started, ended}, nil
}

func extraJSON(m map[string]any) (string, error) {
	if len(m) == 0 {
		return "{}", nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("extra_data: %w", err)
	}
	return string(b), nil
}

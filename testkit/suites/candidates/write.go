package candidates

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hotspotkit/hotspotkit/sqldb"
)

// dialect is the suite's SQL in one database's dialect (postgres.go, mysql.go), chosen once
// per run from Run.Dialect() (dialectOf): the guarded upsert and the reads that verify.
type dialect interface {
	// upsert writes recs (distinct slots) in one statement, guarded (see upsertSQL).
	upsert(ctx context.Context, tx sqldb.Tx, recs []record) error
	// tableCounts counts the table's rows, its distinct request_ids and its rows by status.
	tableCounts(ctx context.Context, q sqldb.Querier) (tableCounts, error)
	// offRequests counts the request_ids whose row count differs from what want says (a
	// request_id of the table that want lacks, and one of want's the table lacks, count too).
	offRequests(ctx context.Context, q sqldb.Querier, want expectation) (int64, error)
	// compareRows compares every slot the requests at indexes must leave with the table.
	compareRows(ctx context.Context, q sqldb.Querier, g lifecycle, indexes []int64) (slotDiffs, error)
}

// dialectOf is d's statements.
func dialectOf(d sqldb.Dialect) dialect {
	if d == sqldb.MySQL {
		return mysqlSQL{}
	}
	return pgSQL{}
}

// tableCounts are request_candidates' rows, distinct request_ids, and rows by status.
type tableCounts struct {
	rows, requests int64
	byStatus       [len(statusNames)]int64
}

// batchWriter is the queue's TxWriter, compacted or not: it splits the batch into layers in
// which no slot repeats (a compacted batch is a single layer) and upserts each layer with one
// statement, in order.
type batchWriter struct{ d dialect }

func (w batchWriter) WriteBatch(ctx context.Context, tx sqldb.Tx, recs []record) (int, error) {
	ls := layers(recs)
	for _, l := range ls {
		if err := w.d.upsert(ctx, tx, l); err != nil {
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

package settlement

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit/counters"
	"github.com/hotspotkit/hotspotkit/testkit/decimal"
)

// statements are the settlement's own SQL in one dialect, chosen by the run's (statementsOf):
// the pending usages' seed, the three steps of settling a batch (settle), and the usages'
// check. PostgreSQL's send the batch's rows in arrays; MySQL's in IN lists and multi-row
// INSERTs, and a JSON array read by JSON_TABLE (MariaDB 10.6, MySQL 8) where PostgreSQL's
// unnest an array WITH ORDINALITY. USAGE is a reserved word in MySQL: its statements quote
// the table's name.
type statements struct {
	// seedUsages inserts the pending usage of each request i, of hot set sets[i].
	seedUsages func(ctx context.Context, conn sqldb.Querier, sets []int32) error
	// lockUsages locks the usage rows of ids in request_id order and reads each one's
	// request_id, user_id, api_key_id, provider_id, cost as text and billing_status.
	lockUsages func(ctx context.Context, tx sqldb.Tx, ids []string) (sqldb.Rows, error)
	// insertSnapshots writes the snapshots of the locked usages, each unless it is there, and
	// returns the request_ids of those it wrote and the statements it sent.
	insertSnapshots func(ctx context.Context, tx sqldb.Tx, u lockedUsages) ([]string, int, error)
	// markSettled marks the usages of ids settled.
	markSettled func(ctx context.Context, tx sqldb.Tx, ids []string) error
	// checkUsages counts, over the seeded usages (request i applied[i], of hot set sets[i]):
	// the applied ones settled with their snapshot, the others still pending without one,
	// those of their request's hot set, all usage rows, and the settled ones.
	checkUsages func(ctx context.Context, conn sqldb.Querier, applied []bool, sets []int32) (usageCounts, error)
}

// lockedUsages are the usages a settlement locked, in lock (request_id) order.
type lockedUsages struct {
	ids, users, keys, providers []string
	costs                       []decimal.Decimal
}

// usageCounts are checkUsages' counts.
type usageCounts struct {
	settledOnce, stillPending, inSet, usages, settled int64
}

// statementsOf is the settlement's SQL in dialect d.
func statementsOf(d sqldb.Dialect) (statements, error) {
	switch d {
	case sqldb.Postgres:
		return postgresSQL, nil
	case sqldb.MySQL:
		return mysqlSQL, nil
	}
	return statements{}, fmt.Errorf("settlement: no statements for the %s dialect", d)
}

// usageCost is the SQL of the cost of the usage of request i, costOf(i), from the parameters
// $2..$5 (costBase, costMul, costMod, costStep): the same arithmetic in both dialects.
const usageCost = `($2 + (i * $3 % $4) * $5) * 0.00000001`

// costArgs are usageCost's parameters.
func costArgs() []any { return []any{int64(costBase), int64(costMul), int64(costMod), int64(costStep)} }

var postgresSQL = statements{
	seedUsages: func(ctx context.Context, conn sqldb.Querier, sets []int32) error {
		_, err := conn.Exec(ctx, `INSERT INTO usage (request_id, user_id, api_key_id, provider_api_key_id, provider_id, model_id,
			input_tokens, output_tokens, total_tokens, cost)
		  SELECT 'req-' || i, 'user-hot-' || h, 'key-hot-' || h, 'pkey-hot-' || h,
		         'provider-hot-' || h, 'model-hot-' || h, 10, 20, 30,
		         ($2::int8 + (i * $3::int8 % $4::int8) * $5::int8) * 0.00000001
		  FROM unnest($1::int4[]) WITH ORDINALITY AS s(h, n), LATERAL (SELECT n - 1 AS i) AS r`,
			append([]any{sets}, costArgs()...)...)
		return err
	},
	lockUsages: func(ctx context.Context, tx sqldb.Tx, ids []string) (sqldb.Rows, error) {
		return tx.Query(ctx, `
		SELECT request_id, user_id, api_key_id, provider_id, cost::text, billing_status
		FROM usage WHERE request_id = ANY($1)
		ORDER BY request_id
		FOR UPDATE`, ids)
	},
	insertSnapshots: func(ctx context.Context, tx sqldb.Tx, u lockedUsages) ([]string, int, error) {
		costs := make([]pgtype.Numeric, len(u.costs))
		for i, c := range u.costs {
			costs[i] = c.Numeric()
		}
		rows, err := tx.Query(ctx, `
		INSERT INTO usage_settlement_snapshots (request_id, user_id, api_key_id, provider_id, cost)
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::numeric[])
		ON CONFLICT (request_id) DO NOTHING
		RETURNING request_id`, u.ids, u.users, u.keys, u.providers, costs)
		if err != nil {
			return nil, 1, err
		}
		created, err := sqldb.CollectRows[string](rows)
		return created, 1, err
	},
	markSettled: func(ctx context.Context, tx sqldb.Tx, ids []string) error {
		_, err := tx.Exec(ctx, `UPDATE usage SET billing_status = 'settled', finalized_at = now() WHERE request_id = ANY($1)`, ids)
		return err
	},
	checkUsages: func(ctx context.Context, conn sqldb.Querier, applied []bool, sets []int32) (usageCounts, error) {
		var c usageCounts
		err := conn.QueryRow(ctx, `
		SELECT count(*) FILTER (WHERE a.applied AND u.billing_status = 'settled' AND u.finalized_at IS NOT NULL
		                          AND s.cost = u.cost AND s.user_id = u.user_id AND s.api_key_id = u.api_key_id
		                          AND s.provider_id = u.provider_id),
		       count(*) FILTER (WHERE NOT a.applied AND u.billing_status = 'pending' AND u.finalized_at IS NULL
		                          AND s.request_id IS NULL),
		       count(*) FILTER (WHERE u.user_id = 'user-hot-' || a.h AND u.api_key_id = 'key-hot-' || a.h
		                          AND u.provider_id = 'provider-hot-' || a.h),
		       (SELECT count(*) FROM usage), (SELECT count(*) FROM usage WHERE billing_status = 'settled')
		FROM unnest($1::bool[], $2::int4[]) WITH ORDINALITY AS a(applied, h, n)
		JOIN usage u ON u.request_id = 'req-' || (a.n - 1)
		LEFT JOIN usage_settlement_snapshots s ON s.request_id = u.request_id`, applied, sets).
			Scan(&c.settledOnce, &c.stillPending, &c.inSet, &c.usages, &c.settled)
		return c, err
	},
}

var mysqlSQL = statements{
	seedUsages: func(ctx context.Context, conn sqldb.Querier, sets []int32) error {
		_, err := conn.Exec(ctx, "INSERT INTO `usage` (request_id, user_id, api_key_id, provider_api_key_id, provider_id, model_id,\n"+
			"\t\t\tinput_tokens, output_tokens, total_tokens, cost)\n"+
			"\t\t  SELECT CONCAT('req-', i), CONCAT('user-hot-', h), CONCAT('key-hot-', h), CONCAT('pkey-hot-', h),\n"+
			"\t\t         CONCAT('provider-hot-', h), CONCAT('model-hot-', h), 10, 20, 30, "+usageCost+"\n"+
			"\t\t  FROM (SELECT n - 1 AS i, h FROM JSON_TABLE($1, '$[*]' COLUMNS (n FOR ORDINALITY, h INT PATH '$')) AS j) AS s",
			append([]any{jsonInts(len(sets), func(i int) int64 { return int64(sets[i]) })}, costArgs()...)...)
		return err
	},
	lockUsages: func(ctx context.Context, tx sqldb.Tx, ids []string) (sqldb.Rows, error) {
		return tx.Query(ctx, "SELECT request_id, user_id, api_key_id, provider_id, CAST(cost AS CHAR), billing_status\n"+
			"\t\tFROM `usage` WHERE request_id IN ("+sqldb.Marks(len(ids))+")\n"+
			"\t\tORDER BY request_id\n"+
			"\t\tFOR UPDATE", anys(ids)...)
	},
	insertSnapshots: func(ctx context.Context, tx sqldb.Tx, u lockedUsages) ([]string, int, error) {
		isNew, ops, err := counters.ClaimRowsMySQL(ctx, tx, len(u.ids), func(from, to int) (string, []any) {
			return counters.InsertMySQL("usage_settlement_snapshots", []string{"request_id", "user_id", "api_key_id", "provider_id", "cost"},
				from, to, func(i int, vals []any) []any {
					return append(vals, u.ids[i], u.users[i], u.keys[i], u.providers[i], counters.MySQLValue(counters.Amount(u.costs[i])))
				})
		})
		if err != nil {
			return nil, ops, err
		}
		var created []string
		for i, id := range u.ids {
			if isNew[i] {
				created = append(created, id)
			}
		}
		return created, ops, nil
	},
	markSettled: func(ctx context.Context, tx sqldb.Tx, ids []string) error {
		_, err := tx.Exec(ctx, "UPDATE `usage` SET billing_status = 'settled', finalized_at = UTC_TIMESTAMP(6) WHERE request_id IN ("+
			sqldb.Marks(len(ids))+")", anys(ids)...)
		return err
	},
	checkUsages: func(ctx context.Context, conn sqldb.Querier, applied []bool, sets []int32) (usageCounts, error) {
		var c usageCounts
		err := conn.QueryRow(ctx, "SELECT COUNT(CASE WHEN a.applied AND u.billing_status = 'settled' AND u.finalized_at IS NOT NULL\n"+
			"\t\t                          AND s.cost = u.cost AND s.user_id = u.user_id AND s.api_key_id = u.api_key_id\n"+
			"\t\t                          AND s.provider_id = u.provider_id THEN 1 END),\n"+
			"\t\t       COUNT(CASE WHEN NOT a.applied AND u.billing_status = 'pending' AND u.finalized_at IS NULL\n"+
			"\t\t                          AND s.request_id IS NULL THEN 1 END),\n"+
			"\t\t       COUNT(CASE WHEN u.user_id = CONCAT('user-hot-', a.h) AND u.api_key_id = CONCAT('key-hot-', a.h)\n"+
			"\t\t                          AND u.provider_id = CONCAT('provider-hot-', a.h) THEN 1 END),\n"+
			"\t\t       (SELECT COUNT(*) FROM `usage`), (SELECT COUNT(*) FROM `usage` WHERE billing_status = 'settled')\n"+
			"\t\tFROM JSON_TABLE($1, '$[*]' COLUMNS (n FOR ORDINALITY, applied INT PATH '$[0]', h INT PATH '$[1]')) AS a\n"+
			"\t\tSTRAIGHT_JOIN `usage` u ON u.request_id = CONCAT('req-', a.n - 1)\n"+
			"\t\tLEFT JOIN usage_settlement_snapshots s ON s.request_id = u.request_id",
			jsonPairs(applied, sets)).Scan(&c.settledOnce, &c.stillPending, &c.inSet, &c.usages, &c.settled)
		return c, err
	},
}

// anys are ss as arguments.
func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// jsonInts is the JSON array of the n integers v gives.
func jsonInts(n int, v func(i int) int64) string {
	b := make([]byte, 0, 2+4*n)
	b = append(b, '[')
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, v(i), 10)
	}
	return string(append(b, ']'))
}

// jsonPairs is the JSON array of [applied (1 or 0), hot set] of each seeded usage.
func jsonPairs(applied []bool, sets []int32) string {
	b := make([]byte, 0, 2+8*len(sets))
	b = append(b, '[')
	for i, h := range sets {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[', '0', ',')
		if applied[i] {
			b[len(b)-2] = '1'
		}
		b = strconv.AppendInt(b, int64(h), 10)
		b = append(b, ']')
	}
	return string(append(b, ']'))
}

// settle is the claim in the statements' dialect: it settles the usages of batch's requests
// (repeats allowed) and returns the sources this transaction settled, once each, in batch
// order, with the number of statements sent:
//  1. lock the usage rows (FOR UPDATE, in request_id order so concurrent batches cannot
//     deadlock);
//  2. insert their snapshots, each unless it is there: those written are the new
//     settlements, the others were settled before (a no-op, see the package doc);
//  3. mark the new ones settled.
//
// A usage whose status disagrees with its snapshot (pending with a snapshot, settled without
// one) is an error: the invariant that makes settling idempotent is broken.
func (st statements) settle(ctx context.Context, tx sqldb.Tx, batch []counters.Source) ([]counters.Source, int, error) {
	ids := make([]string, len(batch))
	for k, src := range batch {
		ids[k] = counters.RequestID(src.Request)
	}
	rows, err := st.lockUsages(ctx, tx, ids)
	if err != nil {
		return nil, 1, fmt.Errorf("locking usages: %w", err)
	}
	var locked lockedUsages
	pending := make(map[string]bool, len(ids))
	var id, user, key, provider, cost, status string
	err = sqldb.ForEachRow(rows, []any{&id, &user, &key, &provider, &cost, &status}, func() error {
		m, _, err := decimal.Parse(cost)
		if err != nil {
			return fmt.Errorf("usage %s: cost %q %w", id, cost, err)
		}
		locked.ids, locked.users, locked.keys, locked.providers = append(locked.ids, id), append(locked.users, user),
			append(locked.keys, key), append(locked.providers, provider)
		locked.costs = append(locked.costs, m)
		pending[id] = status == "pending"
		return nil
	})
	if err != nil {
		return nil, 1, fmt.Errorf("locking usages: %w", err)
	}
	for _, id := range ids {
		if _, ok := pending[id]; !ok {
			return nil, 1, fmt.Errorf("usage %s does not exist", id)
		}
	}
	created, ops, err := st.insertSnapshots(ctx, tx, locked)
	ops++
	if err != nil {
		return nil, ops, fmt.Errorf("inserting snapshots: %w", err)
	}
	isNew := make(map[string]bool, len(created))
	for _, id := range created {
		isNew[id] = true
	}
	for id, p := range pending {
		if p != isNew[id] {
			return nil, ops, fmt.Errorf("usage %s: billing status and settlement snapshot disagree (pending=%v, snapshot created now=%v)", id, p, isNew[id])
		}
	}
	if len(created) == 0 {
		return nil, ops, nil
	}
	if err := st.markSettled(ctx, tx, created); err != nil {
		return nil, ops + 1, fmt.Errorf("marking usages settled: %w", err)
	}
	fresh := make([]counters.Source, 0, len(created))
	for k, src := range batch {
		if isNew[ids[k]] {
			fresh = append(fresh, src)
			delete(isNew, ids[k]) // a repeated request is settled once
		}
	}
	return fresh, ops + 1, nil
}

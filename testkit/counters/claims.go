package counters

import (
	"context"
	"fmt"
	"strconv"

	"github.com/hotspotkit/hotspotkit/sqldb"
)

// PartClaim is a claim step (Declaration.Claim, ClaimAll) that records a row per source —
// (request index, part) — in a table whose unique key is those two columns, in the writing
// transaction, and applies only the sources whose row is new: for suites whose writes leave
// no row of their own to claim by. KitClaim is the package's own table.
type PartClaim struct {
	Table, RequestColumn, PartColumn string
	// PartLabels is what PartColumn holds for each part, as text (nil: an integer column
	// holding the part's index).
	PartLabels []string
}

// KitClaim is the claim on the package's table counter_claims (schema's 004_counters.sql).
func KitClaim() PartClaim {
	return PartClaim{Table: "counter_claims", RequestColumn: "request_index", PartColumn: "part"}
}

// Declare makes p d's claim step: Claim, ClaimAll, ClaimTable and ClaimIndex.
func (p PartClaim) Declare(d *Declaration) {
	d.Claim, d.ClaimAll, d.ClaimTable, d.ClaimIndex = p.Claim, p.ClaimAll, p.Table, p.RequestColumn
}

// insert is the INSERT of batch's rows, and its arguments.
func (p PartClaim) insert(batch []Source) (string, []any) {
	requests := make([]int64, len(batch))
	for k, src := range batch {
		requests[k] = src.Request
	}
	partType, parts := "int4", any(nil)
	if p.PartLabels != nil {
		labels := make([]string, len(batch))
		for k, src := range batch {
			labels[k] = p.PartLabels[src.Part]
		}
		partType, parts = "text", labels
	} else {
		indexes := make([]int32, len(batch))
		for k, src := range batch {
			indexes[k] = int32(src.Part)
		}
		parts = indexes
	}
	return `
		INSERT INTO ` + ident(p.Table) + ` (` + ident(p.RequestColumn) + `, ` + ident(p.PartColumn) + `)
		SELECT * FROM unnest($1::int8[], $2::` + partType + `[])`, []any{requests, parts}
}

// ClaimAll is Claim's pipelined form (Declaration.ClaimAll): one INSERT, which fails on a
// part recorded before.
func (p PartClaim) ClaimAll(batch []Source) []Statement {
	sql, args := p.insert(batch)
	return []Statement{{SQL: sql, Args: args, Rows: int64(len(batch))}}
}

// Claim inserts a row for every source of batch and returns those no transaction inserted
// before, each once, in batch order (Declaration.Claim): in one statement on PostgreSQL; on
// MySQL in one unless a source was claimed before (ClaimRowsMySQL).
func (p PartClaim) Claim(ctx context.Context, tx sqldb.Tx, batch []Source) ([]Source, int, error) {
	if tx.Dialect() == sqldb.MySQL {
		return p.claimMySQL(ctx, tx, batch)
	}
	sql, args := p.insert(batch)
	rows, err := tx.Query(ctx, sql+`
		ON CONFLICT DO NOTHING
		RETURNING `+ident(p.RequestColumn)+`, `+ident(p.PartColumn)+`::text`, args...)
	if err != nil {
		return nil, 1, fmt.Errorf("claiming the batch in %s: %w", p.Table, err)
	}
	type claimed struct {
		request int64
		part    string
	}
	isNew := make(map[claimed]bool, len(batch))
	var c claimed
	if err := sqldb.ForEachRow(rows, []any{&c.request, &c.part}, func() error {
		isNew[c] = true
		return nil
	}); err != nil {
		return nil, 1, fmt.Errorf("claiming the batch in %s: %w", p.Table, err)
	}
	if len(isNew) == len(batch) {
		return batch, 1, nil
	}
	fresh := make([]Source, 0, len(isNew))
	for _, src := range batch {
		label := strconv.Itoa(src.Part)
		if p.PartLabels != nil {
			label = p.PartLabels[src.Part]
		}
		if c := (claimed{src.Request, label}); isNew[c] {
			delete(isNew, c) // a source repeated in the batch is claimed once
			fresh = append(fresh, src)
		}
	}
	return fresh, 1, nil
}

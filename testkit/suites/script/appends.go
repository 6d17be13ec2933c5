package script

import (
	"context"
	"fmt"

	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit/counters"
	"github.com/hotspotkit/hotspotkit/testkit/suites/script/internal/sqlshape"
)

// The rows a script's INSERTs append are written with their request's claim (counters' claim
// table, one row per request): in the transaction that claims the request, only for requests
// that transaction claims first, so that a retried or redelivered batch appends them once. A
// batch's rows of one INSERT go in one statement (on MySQL, one per 500 rows), the values as
// text converted to the columns' types (PostgreSQL: text arrays cast; MySQL: a multi-row
// INSERT … VALUES), a server time (now()) taken as the batch lands.

// appendColumn is a column an INSERT fills: from a client value (param: its array's place)
// or a server time (the SQL of it).
type appendColumn struct {
	col    *sqlshape.Column
	param  int // 1-based; 0 for a server time
	server string
	pos    int  // its place in the VALUES row
	text   bool // the column keeps a value's text as it is (isText)
}

// prepareAppend composes w's INSERT of appended rows; it says why when a column is DEFAULT in
// some rows and not in others (the rows of one statement share their columns).
func (p *prepared) prepareAppend(w *write) string {
	ins := w.insert
	var cols []appendColumn
	for k, c := range ins.Columns {
		defaults := 0
		for _, row := range ins.Rows {
			if row[k].Default {
				defaults++
			}
		}
		switch {
		case defaults == len(ins.Rows):
			continue // the server fills it
		case defaults > 0:
			return fmt.Sprintf("column %s is DEFAULT in some VALUES rows and not in others", c.Name)
		}
		ac := appendColumn{col: c, pos: k, text: isText(c)}
		if f := ins.Rows[0][k].ServerFunc; f != "" {
			for _, row := range ins.Rows {
				if row[k].ServerFunc == "" {
					return fmt.Sprintf("column %s is a server time in some VALUES rows and not in others", c.Name)
				}
			}
			ac.server = f
		} else {
			ac.param = len(colsWithParams(cols)) + 1
		}
		cols = append(cols, ac)
	}
	p.sql.prepareAppend(w, cols)
	w.appendCols, w.paramCols = cols, colsWithParams(cols)
	return ""
}

func colsWithParams(cols []appendColumn) []appendColumn {
	var out []appendColumn
	for _, c := range cols {
		if c.param > 0 {
			out = append(out, c)
		}
	}
	return out
}

// appendArgs are the arguments of w's INSERT for the appended rows of requests: a column's
// values as one array literal ('{"7","x",NULL}'), which the server reads as text[] and the
// INSERT casts to the column's type. A batch's thousand rows are then a few strings built in
// one pass, not an array of strings per column for pgx to encode element by element.
func (p *prepared) appendArgs(w *write, requests []int64) ([]any, int64, error) {
	var rows int64
	if len(w.paramCols) == 0 {
		for _, i := range requests {
			if err := p.eachInsertRow(w, i, func([]sqlshape.InsertValue, []sqlshape.Value) error { rows++; return nil }); err != nil {
				return nil, 0, err
			}
		}
		return []any{rows}, rows, nil
	}
	cols := make([][]byte, len(w.paramCols))
	for n := range cols {
		cols[n] = append(make([]byte, 0, 16*len(requests)), '{')
	}
	for _, i := range requests {
		err := p.eachInsertRow(w, i, func(row []sqlshape.InsertValue, params []sqlshape.Value) error {
			for n := range cols {
				t, null, err := w.valueText(n, row, params)
				if err != nil {
					return err
				}
				if rows > 0 {
					cols[n] = append(cols[n], ',')
				}
				cols[n] = appendElement(cols[n], t, null)
			}
			rows++
			return nil
		})
		if err != nil {
			return nil, 0, err
		}
	}
	args := make([]any, len(cols))
	for n := range cols {
		args[n] = string(append(cols[n], '}'))
	}
	return args, rows, nil
}

// appendValues are the appended rows of w for requests, one []any a row: each client-valued
// column's value as text (nil: NULL), in paramCols' order.
func (p *prepared) appendValues(w *write, requests []int64) ([][]any, error) {
	var rows [][]any
	for _, i := range requests {
		err := p.eachInsertRow(w, i, func(row []sqlshape.InsertValue, params []sqlshape.Value) error {
			vals := make([]any, len(w.paramCols))
			for n := range w.paramCols {
				t, null, err := w.valueText(n, row, params)
				if err != nil {
					return err
				}
				if !null {
					vals[n] = t
				}
			}
			rows = append(rows, vals)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// appendElement appends an array literal's element: NULL, or t double-quoted with its quotes
// and backslashes escaped (array_in's rules), so that any text comes back as it was.
func appendElement(b []byte, t string, null bool) []byte {
	if null {
		return append(b, "NULL"...)
	}
	b = append(b, '"')
	for k := 0; k < len(t); k++ {
		if c := t[k]; c == '"' || c == '\\' {
			b = append(b, '\\')
		}
		b = append(b, t[k])
	}
	return append(b, '"')
}

// appendRequests are the requests of sources: every INSERT of the script appends their rows.
func appendRequests(sources []counters.Source) []int64 {
	out := make([]int64, len(sources))
	for k, src := range sources {
		out[k] = src.Request
	}
	return out
}

// claim is Declaration.Claim: the request's claim — its own INSERT's row (claimBy) or the
// kit's — then the appended rows of the fresh requests.
func (p *prepared) claim(ctx context.Context, tx sqldb.Tx, batch []counters.Source) ([]counters.Source, int, error) {
	var fresh []counters.Source
	var ops int
	var err error
	if p.claimBy == nil {
		fresh, ops, err = counters.KitClaim().Claim(ctx, tx, batch)
	} else {
		fresh, err = p.claimOwn(ctx, tx, batch)
		ops = 1
	}
	if err != nil {
		return nil, ops, err
	}
	requests := appendRequests(fresh)
	for k := range p.writes {
		w := &p.writes[k]
		if w.insert == nil || len(requests) == 0 || p.claimBy != nil && w == p.claimBy.write {
			continue
		}
		ops++
		if err := p.sql.appendRows(ctx, tx, w, requests); err != nil {
			return nil, ops, fmt.Errorf("appending line %d's rows: %w", w.line, err)
		}
	}
	return fresh, ops, nil
}

// claimOwn inserts the claim INSERT's rows of batch, skipping those there already, and returns
// the sources whose row it inserted, each once, in batch order.
func (p *prepared) claimOwn(ctx context.Context, tx sqldb.Tx, batch []counters.Source) ([]counters.Source, error) {
	isNew, err := p.sql.claimOwn(ctx, tx, batch)
	if err != nil {
		return nil, fmt.Errorf("claiming the batch with line %d's rows: %w", p.claimBy.line, err)
	}
	fresh := make([]counters.Source, 0, len(batch))
	for k, src := range batch {
		if isNew[k] {
			fresh = append(fresh, src)
		}
	}
	return fresh, nil
}

// claimAll is Declaration.ClaimAll: the claim of every request of the batch and the appended
// rows of all of them, sent in one round trip; a repeated request fails the claim (its key is
// there), and the writer then claims through claim.
func (p *prepared) claimAll(batch []counters.Source) []counters.Statement {
	var st []counters.Statement
	if p.claimBy == nil {
		st = counters.KitClaim().ClaimAll(batch)
	}
	requests := appendRequests(batch)
	for k := range p.writes {
		w := &p.writes[k]
		if w.insert == nil {
			continue
		}
		args, rows, err := p.appendArgs(w, requests)
		if err != nil {
			panic(err) // deterministic: these requests evaluated when they were queued
		}
		st = append(st, counters.Statement{SQL: w.sql, Args: args, Rows: rows})
	}
	return st
}

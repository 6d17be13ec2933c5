package script

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/hotspotkit/hotspotkit/testkit/counters"
	"github.com/hotspotkit/hotspotkit/testkit/internal/pgscript"
	"github.com/hotspotkit/hotspotkit/testkit/internal/sqlshape"
)

// The rows a script's INSERTs append are written with their part's claim (counters' claim
// table, one row per request and part): in the transaction that claims the part, only for
// parts that transaction claims first, so that a retried or redelivered batch appends them
// once. A batch's rows of one INSERT go in one statement, the values as text arrays cast to
// the columns' types, a server time (now()) taken as the batch lands.

// appendColumn is a column an INSERT fills: from a client value (param: its array's place)
// or a server time (the SQL of it).
type appendColumn struct {
	col    *sqlshape.Column
	param  int // 1-based; 0 for a server time
	server string
	pos    int // its place in the VALUES row
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
		ac := appendColumn{col: c, pos: k}
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
	names := make([]string, len(cols))
	sel := make([]string, len(cols))
	var arrays, aliases []string
	for k, c := range cols {
		names[k] = pgx.Identifier{c.col.Name}.Sanitize()
		if c.param == 0 {
			sel[k] = c.server
			continue
		}
		alias := "c" + strconv.Itoa(c.param)
		sel[k] = "u." + alias + "::" + c.col.TypeName
		arrays = append(arrays, "$"+strconv.Itoa(c.param)+"::text[]")
		aliases = append(aliases, alias)
	}
	w.sql = "INSERT INTO " + pgx.Identifier{ins.Table.Name}.Sanitize() + " (" + strings.Join(names, ", ") + ")\n\tSELECT " +
		strings.Join(sel, ", ")
	if len(arrays) > 0 {
		w.sql += "\n\tFROM unnest(" + strings.Join(arrays, ", ") + ") AS u(" + strings.Join(aliases, ", ") + ")"
	} else {
		w.sql += "\n\tFROM generate_series(1, $1::int)" // every column a server time or default: one row per source row
	}
	w.appendCols = cols
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

// appendArgs are the arguments of w's INSERT for the appended rows of requests.
func (p *prepared) appendArgs(w *write, requests []int64) ([]any, int64, error) {
	params := colsWithParams(w.appendCols)
	arrays := make([][]*string, len(params))
	var rows int64
	x := p.execs.Get().(*pgscript.Execution)
	defer p.execs.Put(x)
	for _, i := range requests {
		if err := p.eval(i, x); err != nil {
			return nil, 0, err
		}
		st := statement(x, w.cmd)
		if st == nil {
			return nil, 0, fmt.Errorf("%w: request %d skipped line %d", errEval, i, w.line)
		}
		values, err := w.insert.Values(paramsOf(st.Args))
		if err != nil {
			return nil, 0, fmt.Errorf("%w: request %d: line %d: %v", errEval, i, w.line, err)
		}
		for _, row := range values {
			rows++
			for k, c := range params {
				arrays[k] = append(arrays[k], text(row[c.pos]))
			}
		}
	}
	if len(params) == 0 {
		return []any{rows}, rows, nil
	}
	args := make([]any, len(arrays))
	for k := range arrays {
		args[k] = arrays[k]
	}
	return args, rows, nil
}

func paramsOf(args []pgscript.Value) []sqlshape.Value { return params(args) }

// text is v as PostgreSQL reads it back from text (nil: NULL).
func text(v sqlshape.Value) *string {
	var s string
	switch v.Kind {
	case sqlshape.NullValue:
		return nil
	case sqlshape.IntValue:
		s = strconv.FormatInt(v.Int, 10)
	case sqlshape.BoolValue:
		s = strconv.FormatBool(v.Bool)
	case sqlshape.StringValue:
		s = v.Str
	default:
		s = v.String()
	}
	return &s
}

// appendRequests are, per INSERT write, the requests of sources whose part it is.
func (p *prepared) appendRequests(sources []counters.Source) map[int][]int64 {
	var out map[int][]int64
	for _, src := range sources {
		if p.writes[src.Part].insert == nil {
			continue
		}
		if out == nil {
			out = map[int][]int64{}
		}
		out[src.Part] = append(out[src.Part], src.Request)
	}
	return out
}

// claim is Declaration.Claim: the kit's claim of every source, then the appended rows of the
// fresh ones.
func (p *prepared) claim(ctx context.Context, tx pgx.Tx, batch []counters.Source) ([]counters.Source, int, error) {
	fresh, ops, err := counters.KitClaim().Claim(ctx, tx, batch)
	if err != nil {
		return nil, ops, err
	}
	for part, requests := range p.appendRequests(fresh) {
		w := &p.writes[part]
		args, _, err := p.appendArgs(w, requests)
		if err != nil {
			return nil, ops, err
		}
		ops++
		if _, err := tx.Exec(ctx, w.sql, args...); err != nil {
			return nil, ops, fmt.Errorf("appending line %d's rows: %w", w.line, err)
		}
	}
	return fresh, ops, nil
}

// claimAll is Declaration.ClaimAll: the kit's claim of every source and the appended rows of
// all of them, sent in one round trip; a repeated source fails the claim, and the writer then
// claims through claim.
func (p *prepared) claimAll(batch []counters.Source) []counters.Statement {
	st := counters.KitClaim().ClaimAll(batch)
	for part, requests := range p.appendRequests(batch) {
		w := &p.writes[part]
		args, rows, err := p.appendArgs(w, requests)
		if err != nil {
			panic(err) // deterministic: these requests evaluated when they were queued
		}
		st = append(st, counters.Statement{SQL: w.sql, Args: args, Rows: rows})
	}
	return st
}

package counters

import (
	"context"
	"fmt"
	"slices"

	"github.com/hotspotkit/hotspotkit/sqldb"
)

// Describe reads table's declaration from the database's catalog (the table as the search
// path finds it): its primary key less a smallint slot column as Key, Slotted when the
// primary key has that slot (the kit's convention: slots.go), every other column with its
// type and no Op, and as SlotCopies those NOT NULL without a default. A table without a primary
// key has no rows deltas can find: it is refused. Writing then picks the hot columns.
func Describe(ctx context.Context, conn sqldb.Querier, table string) (TableSpec, error) {
	rows, err := dialectFor(conn).describe(ctx, conn, table)
	return describe(table, rows, err)
}

// describePostgres is the catalog's columns of table on PostgreSQL: pg_attribute and the
// primary key's pg_index.
func describePostgres(ctx context.Context, conn sqldb.Querier, table string) (sqldb.Rows, error) {
	return conn.Query(ctx, `
		SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull AND NOT a.atthasdef,
		       array_position(i.indkey::int2[], a.attnum)
		FROM pg_attribute a
		LEFT JOIN pg_index i ON i.indrelid = a.attrelid AND i.indisprimary
		WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped
		ORDER BY a.attnum`, ident(table))
}

// describe builds table's declaration from rows, its columns as the catalog lists them (a
// dialect's describe): each column's name, its type as the catalog spells it, whether it is
// NOT NULL without a default, and its place in the primary key (NULL: not in it).
func describe(table string, rows sqldb.Rows, err error) (TableSpec, error) {
	if err != nil {
		return TableSpec{}, fmt.Errorf("describing %s: %w", table, err)
	}
	spec := TableSpec{Name: table}
	type keyColumn struct {
		Column
		at int
	}
	var keys []keyColumn
	var name, typ string
	var required bool
	var keyAt *int32
	var columns int
	if err := sqldb.ForEachRow(rows, []any{&name, &typ, &required, &keyAt}, func() error {
		columns++
		switch {
		case keyAt != nil && name == "slot" && baseType(typ) == "smallint":
			spec.Slotted = true
		case keyAt != nil:
			keys = append(keys, keyColumn{Column{Name: name, Type: typ}, int(*keyAt)})
		default:
			spec.Columns = append(spec.Columns, Column{Name: name, Type: typ})
			if required {
				spec.SlotCopies = append(spec.SlotCopies, name)
			}
		}
		return nil
	}); err != nil {
		return TableSpec{}, fmt.Errorf("describing %s: %w", table, err)
	}
	if columns == 0 {
		return TableSpec{}, fmt.Errorf("describing %s: no such table", table)
	}
	if len(keys) == 0 {
		return TableSpec{}, fmt.Errorf("table %s has no primary key: deltas cannot find its rows", table)
	}
	slices.SortFunc(keys, func(a, b keyColumn) int { return a.at - b.at })
	for _, k := range keys {
		spec.Key = append(spec.Key, k.Column)
	}
	return spec, nil
}

// Writing is s with cols as its hot columns: each one of s's columns (named; its Type taken
// from s when left empty), with its Op. The other columns are left out, and a hot column is no
// longer a slot copy.
func (s TableSpec) Writing(cols ...Column) (TableSpec, error) {
	out := s
	out.Columns, out.SlotCopies = nil, nil
	hot := map[string]bool{}
	for _, c := range cols {
		have, ok := s.Column(c.Name)
		if !ok {
			return TableSpec{}, fmt.Errorf("table %s has no column %q (or it is a key column)", s.Name, c.Name)
		}
		if c.Type == "" {
			c.Type = have.Type
		}
		out.Columns = append(out.Columns, c)
		hot[c.Name] = true
	}
	for _, c := range s.SlotCopies {
		if !hot[c] {
			out.SlotCopies = append(out.SlotCopies, c)
		}
	}
	return out, nil
}

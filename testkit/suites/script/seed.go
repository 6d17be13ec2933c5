package script

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit"
)

// object is something the init file created in the run's schema: a table, view, sequence,
// function, procedure or type (name: as DROP takes it).
type object struct{ kind, name string }

// objectsSQL lists the schema's objects an init file may create.
const objectsSQL = `
	SELECT CASE c.relkind WHEN 'r' THEN 'table' WHEN 'p' THEN 'table' WHEN 'v' THEN 'view'
	                      WHEN 'm' THEN 'materialized view' ELSE 'sequence' END, c.relname
	FROM pg_class c WHERE c.relnamespace = $1::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'S')
	UNION ALL
	SELECT CASE p.prokind WHEN 'p' THEN 'procedure' ELSE 'function' END, p.oid::regprocedure::text
	FROM pg_proc p WHERE p.pronamespace = $1::regnamespace AND p.prokind IN ('f', 'p')
	UNION ALL
	SELECT 'type', format_type(t.oid, NULL)
	FROM pg_type t WHERE t.typnamespace = $1::regnamespace AND t.typtype IN ('d', 'e', 'r')`

func objects(ctx context.Context, conn sqldb.Querier, schema string) ([]object, error) {
	rows, err := conn.Query(ctx, objectsSQL, ident(schema))
	if err != nil {
		return nil, fmt.Errorf("listing the schema's objects: %w", err)
	}
	var out []object
	var o object
	err = sqldb.ForEachRow(rows, []any{&o.kind, &o.name}, func() error { out = append(out, o); return nil })
	return out, err
}

// runInit runs the init file's statements, each on its own (as psql -f does: VACUUM cannot run
// in a transaction), and returns what they created.
func (p *prepared) runInit(ctx context.Context, conn sqldb.Querier, file string) ([]object, error) {
	before, err := objects(ctx, conn, p.schema)
	if err != nil {
		return nil, err
	}
	for _, st := range p.init {
		if _, err := conn.Exec(ctx, st.SQL); err != nil {
			return nil, fmt.Errorf("%s: line %d: %w", file, st.Line, err)
		}
	}
	after, err := objects(ctx, conn, p.schema)
	if err != nil {
		return nil, err
	}
	var created []object
	for _, o := range after {
		if !slices.Contains(before, o) {
			created = append(created, o)
		}
	}
	return created, nil
}

// seedPrefix names the copies of the tables the script appends to, taken after the seed: the
// rows the run starts from (verify.go).
const seedPrefix = "script_seed_"

// seed recreates the init file's objects for run r: the engine emptied every table of the
// schema, and the init file's CREATE statements need them gone. It then records what the run
// starts from: the counters rows (Snapshot), the appended tables' rows, the other tables'
// checksums.
func (p *prepared) seed(ctx context.Context, r *testkit.Run) error {
	conn := r.Admin()
	drop := slices.Clone(p.created)
	for k := range p.inserted {
		drop = append(drop, object{"table", seedPrefix + strconv.Itoa(k)})
	}
	for _, o := range drop { // tables first: their views and sequences go with them
		name := o.name
		if o.kind == "table" || o.kind == "view" || o.kind == "materialized view" || o.kind == "sequence" {
			name = ident(o.name)
		}
		if _, err := conn.Exec(ctx, "DROP "+o.kind+" IF EXISTS "+name+" CASCADE"); err != nil {
			return fmt.Errorf("dropping %s %s before the init file runs again: %w", o.kind, o.name, err)
		}
	}
	if _, err := p.runInit(ctx, conn, "the init file"); err != nil {
		return err
	}
	if p.core != nil {
		if err := p.core.Seed(ctx, r); err != nil {
			return err
		}
	}
	for k, t := range p.inserted {
		if _, err := conn.Exec(ctx, "CREATE TABLE "+seedPrefix+strconv.Itoa(k)+" AS TABLE "+ident(t)); err != nil {
			return fmt.Errorf("recording %s's seed rows: %w", t, err)
		}
	}
	p.sums = map[string]string{}
	for _, t := range p.unchanged {
		sum, err := checksum(ctx, conn, t)
		if err != nil {
			return err
		}
		p.sums[t] = sum
	}
	return nil
}

// checksum is a digest of every row of table t, in a fixed order.
func checksum(ctx context.Context, conn sqldb.Querier, t string) (string, error) {
	var sum *string
	id := ident(t)
	err := conn.QueryRow(ctx, `SELECT md5(string_agg(r::text, E'\n' ORDER BY r::text)) FROM `+id+` r`).Scan(&sum)
	if err != nil {
		return "", fmt.Errorf("checksumming %s: %w", t, err)
	}
	if sum == nil {
		return "empty", nil
	}
	return *sum, nil
}

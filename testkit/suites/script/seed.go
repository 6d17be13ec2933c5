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

// runInit runs the init file's statements, each on its own (as psql -f does: VACUUM cannot run
// in a transaction), and returns what they created.
func (p *prepared) runInit(ctx context.Context, conn sqldb.Querier, file string) ([]object, error) {
	before, err := p.sql.objects(ctx, conn, p.schema)
	if err != nil {
		return nil, err
	}
	for _, st := range p.init {
		if _, err := conn.Exec(ctx, st.SQL); err != nil {
			return nil, fmt.Errorf("%s: line %d: %w", file, st.Line, err)
		}
	}
	after, err := p.sql.objects(ctx, conn, p.schema)
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
	if err := p.sql.drop(ctx, conn, drop); err != nil {
		return err
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
		if err := p.sql.copyTable(ctx, conn, seedPrefix+strconv.Itoa(k), t); err != nil {
			return fmt.Errorf("recording %s's seed rows: %w", t, err)
		}
	}
	p.sums = map[string]string{}
	for _, t := range p.unchanged {
		sum, err := p.sql.checksum(ctx, conn, t)
		if err != nil {
			return err
		}
		p.sums[t] = sum
	}
	return nil
}

package sqlshape

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Querier is what LoadCatalog reads the catalog through: a *pgx.Conn, a *pgxpool.Pool
// or a pgx.Tx.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// Catalog is what the analysis knows of the tables of one schema: the schema the
// script's unqualified names resolve to (the run's search_path holds it alone; on MySQL,
// the connection's database).
type Catalog struct {
	Schema string
	Tables map[string]*Table // by name as stored (PostgreSQL's parser folds unquoted names to lower case)
	// Grammar is the grammar of the database the catalog was read from, which Analyze
	// parses statements with: PostgreSQL's unless LoadMySQLCatalog read it.
	Grammar Grammar
	// foldTables: table names are compared without case (MySQL's lower_case_table_names).
	foldTables bool
	// mysql is the grammar of a MySQL catalog: the server's sql_mode, and whether it is
	// MariaDB.
	mysql mysqlGrammar
}

// Grammar is the SQL grammar of a database.
type Grammar uint8

const (
	// PostgreSQL is PostgreSQL's grammar (pg_query_go).
	PostgreSQL Grammar = iota
	// MySQL is MySQL's and MariaDB's grammar (TiDB's parser).
	MySQL
)

func (g Grammar) String() string {
	if g == MySQL {
		return "MySQL"
	}
	return "PostgreSQL"
}

// grammar is the front end of the catalog's grammar (a nil catalog's: PostgreSQL's).
func (c *Catalog) grammar() grammar {
	if c != nil && c.Grammar == MySQL {
		return c.mysql
	}
	return postgresGrammar{}
}

// Table returns the named table, or nil.
func (c *Catalog) Table(name string) *Table {
	if c == nil {
		return nil
	}
	if t := c.Tables[name]; t != nil || !c.foldTables {
		return t
	}
	return c.Tables[strings.ToLower(name)]
}

// RelKind is what a relation is (pg_class.relkind).
type RelKind byte

const (
	Ordinary         RelKind = 'r'
	Partitioned      RelKind = 'p'
	View             RelKind = 'v'
	MaterializedView RelKind = 'm'
	ForeignTable     RelKind = 'f'
	Sequence         RelKind = 'S'
)

func (k RelKind) String() string {
	switch k {
	case Ordinary:
		return "table"
	case Partitioned:
		return "partitioned table"
	case View:
		return "view"
	case MaterializedView:
		return "materialized view"
	case ForeignTable:
		return "foreign table"
	case Sequence:
		return "sequence"
	}
	return fmt.Sprintf("relation of kind %q", byte(k))
}

// Table is one relation of the catalog.
type Table struct {
	Name    string
	Kind    RelKind
	Columns []*Column // in column order, dropped columns left out
	// PrimaryKey names the primary key's columns in key order; empty without one. The
	// primary key, and nothing else, is what identifies a row for merging: a unique
	// constraint does not stand in for it (package doc, "Row identity").
	PrimaryKey []string
	// UniqueKeys: every unique index (the primary key's included) and exclusion
	// constraint.
	UniqueKeys   []*UniqueKey
	Checks       []*Check      // table CHECK constraints (NOT VALID ones too: new rows are checked)
	ForeignKeys  []*ForeignKey // constraints of this table referencing others
	ReferencedBy []*ForeignKey // constraints of other tables referencing this one
	Triggers     []string      // user triggers (not the internal ones of constraints), disabled ones too
	Rules        []string      // rewrite rules (a view's own _RETURN rule left out)
	HasChildren  bool          // inheritance children or partitions: a WHERE on the key can match several rows
	RowSecurity  bool          // row-level security enabled
	// Unsupported says why the kit defers no write to the table, beyond its Kind (a MySQL
	// table of an engine without transactions, a system-versioned table); "" for none.
	Unsupported string

	// foldColumns: column names are compared without case (MySQL's are).
	foldColumns bool
}

// Column is one column of a table.
type Column struct {
	Name     string
	Num      int16
	TypeOID  uint32 // pg_attribute.atttypid: a domain's own OID for a domain column
	TypeName string // format_type: "integer", "numeric(12,2)", "character varying(40)"
	// BaseTypeOID and BaseTypmod are the type under any domains: what decides
	// whether the kit's arithmetic on the column is exact.
	BaseTypeOID uint32
	BaseTypmod  int32
	NotNull     bool     // NOT NULL on the column or on one of its domains
	HasDefault  bool     // a DEFAULT (identity and serial columns included)
	Generated   bool     // GENERATED ALWAYS AS (…) STORED: never written
	Identity    bool     // GENERATED … AS IDENTITY
	DomainCheck []*Check // the CHECK constraints of its domain(s)
	// DeterministicCollation is false for a nondeterministic collation, under which
	// strings the kit tells apart can be equal to PostgreSQL (on MySQL: any collation but a
	// binary one that does not pad).
	DeterministicCollation bool
	// Collation is a MySQL column's collation ("" on PostgreSQL).
	Collation string
	// Unsigned: a MySQL column of an UNSIGNED type, whose range acts as CHECK (c >= 0).
	Unsigned bool

	// bounded: min and max are the integer column's range (a MySQL integer type's);
	// otherwise the range is the type OID's.
	bounded  bool
	min, max int64
}

// Check is one CHECK constraint.
type Check struct {
	Name       string
	Definition string   // pg_get_constraintdef: "CHECK ((qty >= 0))"
	Columns    []string // the table's columns it reads; for a domain's, the column of that domain
	Domain     string   // set for a domain's constraint: the domain's name
}

// UniqueKey is a unique index or an exclusion constraint.
type UniqueKey struct {
	Name       string   // the index
	Columns    []string // key columns; empty for an index on expressions only
	References []string // every column it reads: key, expression and predicate columns
	Primary    bool
	Partial    bool // WHERE predicate
	Expression bool // one of its keys is an expression
	Deferrable bool // checked at commit, not per row
	Exclusion  bool // an exclusion constraint, not a unique index
}

// ForeignKey is one foreign-key constraint.
type ForeignKey struct {
	Name       string
	Table      string // the referencing table
	Columns    []string
	RefTable   string // the referenced table, schema-qualified when outside the catalog's schema
	RefColumns []string
}

// Column returns the named column, or nil.
func (t *Table) Column(name string) *Column {
	for _, c := range t.Columns {
		if t.sameColumn(c.Name, name) {
			return c
		}
	}
	return nil
}

// sameColumn says whether a and b name the same column of t.
func (t *Table) sameColumn(a, b string) bool {
	if t.foldColumns {
		return strings.EqualFold(a, b)
	}
	return a == b
}

// IsKey says whether the column is one of the primary key's.
func (t *Table) IsKey(column string) bool { return slices.Contains(t.PrimaryKey, column) }

// MultiColumnCheck returns a table CHECK constraint that reads several columns, or nil:
// one that relates columns, whose truth a write to one of them can change.
func (t *Table) MultiColumnCheck() *Check {
	for _, c := range t.Checks {
		if len(c.Columns) > 1 {
			return c
		}
	}
	return nil
}

// Claimable returns the unique keys an inserted row can be found again by, primary
// key first: non-partial, on columns only, checked per row, not exclusion
// constraints.
func (t *Table) Claimable() []*UniqueKey {
	var keys []*UniqueKey
	for _, k := range t.UniqueKeys {
		if !k.Partial && !k.Expression && !k.Deferrable && !k.Exclusion && len(k.Columns) > 0 {
			keys = append(keys, k)
		}
	}
	sort.SliceStable(keys, func(i, j int) bool { return keys[i].Primary && !keys[j].Primary })
	return keys
}

// LoadCatalog reads the named tables of schema from PostgreSQL's catalog (every
// relation of the schema when tables is nil). A named table that is not there is an
// error. PostgreSQL 12 or later.
func LoadCatalog(ctx context.Context, q Querier, schema string, tables []string) (*Catalog, error) {
	cat := &Catalog{Schema: schema, Tables: map[string]*Table{}}
	byOID := map[uint32]*Table{}
	rows, err := q.Query(ctx, `
		SELECT c.oid, c.relname, c.relkind::text, c.relhassubclass, c.relrowsecurity
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
		  AND ($2::text[] IS NULL OR c.relname = ANY($2))`, schema, tables)
	if err != nil {
		return nil, fmt.Errorf("sqlshape: reading the tables of schema %s: %w", schema, err)
	}
	var oids []uint32
	for rows.Next() {
		var oid uint32
		var kind string
		t := &Table{}
		if err := rows.Scan(&oid, &t.Name, &kind, &t.HasChildren, &t.RowSecurity); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sqlshape: reading the tables of schema %s: %w", schema, err)
		}
		t.Kind = RelKind(kind[0])
		cat.Tables[t.Name] = t
		byOID[oid] = t
		oids = append(oids, oid)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlshape: reading the tables of schema %s: %w", schema, err)
	}
	var missing []string
	for _, name := range tables {
		if cat.Tables[name] == nil {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("sqlshape: schema %s has no table %s", schema, strings.Join(missing, ", "))
	}
	for _, load := range []func(context.Context, Querier, []uint32, map[uint32]*Table) error{
		loadColumns, loadDomains, loadConstraints, loadIndexes, loadTriggersAndRules,
	} {
		if err := load(ctx, q, oids, byOID); err != nil {
			return nil, fmt.Errorf("sqlshape: reading the catalog of schema %s: %w", schema, err)
		}
	}
	return cat, nil
}

func loadColumns(ctx context.Context, q Querier, oids []uint32, byOID map[uint32]*Table) error {
	rows, err := q.Query(ctx, `
		SELECT a.attrelid, a.attname, a.attnum, a.atttypid, format_type(a.atttypid, a.atttypmod),
		       a.atttypmod, a.attnotnull, a.atthasdef OR a.attidentity <> '', a.attgenerated <> '',
		       a.attidentity <> '', coalesce(co.collisdeterministic, true)
		FROM pg_attribute a LEFT JOIN pg_collation co ON co.oid = a.attcollation
		WHERE a.attrelid = ANY($1) AND a.attnum > 0 AND NOT a.attisdropped
		ORDER BY a.attrelid, a.attnum`, oids)
	if err != nil {
		return err
	}
	return forEach(rows, func(rows pgx.Rows) error {
		var rel uint32
		c := &Column{}
		if err := rows.Scan(&rel, &c.Name, &c.Num, &c.TypeOID, &c.TypeName, &c.BaseTypmod, &c.NotNull,
			&c.HasDefault, &c.Generated, &c.Identity, &c.DeterministicCollation); err != nil {
			return err
		}
		c.BaseTypeOID = c.TypeOID
		t := byOID[rel]
		t.Columns = append(t.Columns, c)
		return nil
	})
}

// loadDomains resolves domain columns to their base types, and collects their
// NOT NULL and CHECK constraints, through every level of domain over domain.
func loadDomains(ctx context.Context, q Querier, _ []uint32, byOID map[uint32]*Table) error {
	type domain struct {
		name    string
		base    uint32
		typmod  int32
		notNull bool
		checks  []*Check
	}
	domains := map[uint32]*domain{}
	pending := map[uint32]bool{}
	for _, t := range byOID {
		for _, c := range t.Columns {
			pending[c.TypeOID] = true
		}
	}
	for len(pending) > 0 {
		var ask []uint32
		for oid := range pending {
			if _, seen := domains[oid]; !seen {
				ask = append(ask, oid)
			}
		}
		pending = map[uint32]bool{}
		if len(ask) == 0 {
			break
		}
		rows, err := q.Query(ctx, `
			SELECT t.oid, format_type(t.oid, NULL), t.typbasetype, t.typtypmod, t.typnotnull,
			       coalesce(array_agg(c.conname ORDER BY c.conname) FILTER (WHERE c.oid IS NOT NULL), '{}'),
			       coalesce(array_agg(pg_get_constraintdef(c.oid) ORDER BY c.conname) FILTER (WHERE c.oid IS NOT NULL), '{}')
			FROM pg_type t LEFT JOIN pg_constraint c ON c.contypid = t.oid AND c.contype = 'c'
			WHERE t.oid = ANY($1) AND t.typtype = 'd'
			GROUP BY t.oid`, ask)
		if err != nil {
			return err
		}
		for _, oid := range ask {
			domains[oid] = nil // not a domain unless the query says so
		}
		err = forEach(rows, func(rows pgx.Rows) error {
			var oid uint32
			var names, defs []string
			d := &domain{}
			if err := rows.Scan(&oid, &d.name, &d.base, &d.typmod, &d.notNull, &names, &defs); err != nil {
				return err
			}
			for i := range names {
				d.checks = append(d.checks, &Check{Name: names[i], Definition: defs[i], Domain: d.name})
			}
			domains[oid] = d
			pending[d.base] = true
			return nil
		})
		if err != nil {
			return err
		}
	}
	for _, t := range byOID {
		for _, c := range t.Columns {
			for d := domains[c.TypeOID]; d != nil; d = domains[d.base] {
				c.BaseTypeOID = d.base
				if d.typmod != -1 || c.BaseTypmod == -1 {
					c.BaseTypmod = d.typmod
				}
				c.NotNull = c.NotNull || d.notNull
				for _, ch := range d.checks {
					c.DomainCheck = append(c.DomainCheck, &Check{Name: ch.Name, Definition: ch.Definition,
						Columns: []string{c.Name}, Domain: ch.Domain})
				}
			}
		}
	}
	return nil
}

func loadConstraints(ctx context.Context, q Querier, oids []uint32, byOID map[uint32]*Table) error {
	rows, err := q.Query(ctx, `
		SELECT c.conrelid, c.confrelid, c.conname, c.contype::text, pg_get_constraintdef(c.oid),
		       coalesce((SELECT array_agg(a.attname ORDER BY k.i) FROM unnest(c.conkey) WITH ORDINALITY k(n, i)
		                 JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n), '{}'),
		       coalesce((SELECT array_agg(a.attname ORDER BY k.i) FROM unnest(c.confkey) WITH ORDINALITY k(n, i)
		                 JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n), '{}'),
		       c.conrelid::regclass::text, c.confrelid::regclass::text
		FROM pg_constraint c
		WHERE (c.conrelid = ANY($1) AND c.contype IN ('p', 'c', 'f'))
		   OR (c.confrelid = ANY($1) AND c.contype = 'f')
		ORDER BY c.conname`, oids)
	if err != nil {
		return err
	}
	return forEach(rows, func(rows pgx.Rows) error {
		var rel, ref uint32
		var name, kind, def, relName, refName string
		var cols, refCols []string
		if err := rows.Scan(&rel, &ref, &name, &kind, &def, &cols, &refCols, &relName, &refName); err != nil {
			return err
		}
		switch kind {
		case "p":
			byOID[rel].PrimaryKey = cols
		case "c":
			byOID[rel].Checks = append(byOID[rel].Checks, &Check{Name: name, Definition: def, Columns: cols})
		case "f":
			fk := &ForeignKey{Name: name, Table: relName, Columns: cols, RefTable: refName, RefColumns: refCols}
			if t := byOID[rel]; t != nil {
				t.ForeignKeys = append(t.ForeignKeys, fk)
			}
			if t := byOID[ref]; t != nil {
				t.ReferencedBy = append(t.ReferencedBy, fk)
			}
		}
		return nil
	})
}

func loadIndexes(ctx context.Context, q Querier, oids []uint32, byOID map[uint32]*Table) error {
	// References: the key columns, and the columns the index's expressions and
	// predicate read, which PostgreSQL records as dependencies of the index.
	rows, err := q.Query(ctx, `
		SELECT i.indrelid, ic.relname, i.indisprimary, i.indisexclusion, NOT i.indimmediate,
		       i.indpred IS NOT NULL, 0 = ANY((i.indkey::int2[])[0:i.indnkeyatts - 1]),
		       coalesce((SELECT array_agg(a.attname ORDER BY k.i)
		                 FROM unnest((i.indkey::int2[])[0:i.indnkeyatts - 1]) WITH ORDINALITY k(n, i)
		                 JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.n), '{}'),
		       coalesce((SELECT array_agg(DISTINCT a.attname) FROM pg_attribute a
		                 WHERE a.attrelid = i.indrelid AND (a.attnum = ANY((i.indkey::int2[])[0:i.indnkeyatts - 1])
		                   OR a.attnum IN (SELECT d.refobjsubid FROM pg_depend d
		                                   WHERE d.classid = 'pg_class'::regclass AND d.objid = i.indexrelid
		                                     AND d.refclassid = 'pg_class'::regclass AND d.refobjid = i.indrelid))),
		                '{}')
		FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
		WHERE i.indrelid = ANY($1) AND (i.indisunique OR i.indisexclusion)
		ORDER BY ic.relname`, oids)
	if err != nil {
		return err
	}
	return forEach(rows, func(rows pgx.Rows) error {
		var rel uint32
		k := &UniqueKey{}
		if err := rows.Scan(&rel, &k.Name, &k.Primary, &k.Exclusion, &k.Deferrable, &k.Partial, &k.Expression,
			&k.Columns, &k.References); err != nil {
			return err
		}
		if k.Expression {
			k.Columns = nil
		}
		byOID[rel].UniqueKeys = append(byOID[rel].UniqueKeys, k)
		return nil
	})
}

func loadTriggersAndRules(ctx context.Context, q Querier, oids []uint32, byOID map[uint32]*Table) error {
	rows, err := q.Query(ctx, `
		SELECT tgrelid, 't', tgname FROM pg_trigger WHERE tgrelid = ANY($1) AND NOT tgisinternal
		UNION ALL
		SELECT ev_class, 'r', rulename FROM pg_rewrite WHERE ev_class = ANY($1) AND rulename <> '_RETURN'
		ORDER BY 3`, oids)
	if err != nil {
		return err
	}
	return forEach(rows, func(rows pgx.Rows) error {
		var rel uint32
		var kind, name string
		if err := rows.Scan(&rel, &kind, &name); err != nil {
			return err
		}
		if kind == "t" {
			byOID[rel].Triggers = append(byOID[rel].Triggers, name)
		} else {
			byOID[rel].Rules = append(byOID[rel].Rules, name)
		}
		return nil
	})
}

func forEach(rows pgx.Rows, row func(pgx.Rows) error) error {
	defer rows.Close()
	for rows.Next() {
		if err := row(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

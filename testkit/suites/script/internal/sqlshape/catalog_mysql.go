package sqlshape

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	pmysql "github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/hotspotkit/hotspotkit/sqldb"
)

// LoadMySQLCatalog reads the named tables of database schema (every table and view of it
// when tables is nil) from a MySQL or MariaDB server's information_schema, and the server's
// sql_mode, which the statements are parsed under. A named table that is not there is an
// error. The types are read into the classes the analysis knows by PostgreSQL's names (an
// integer of any size as int8 with its own range, DECIMAL(p, s) as numeric(p, s), FLOAT and
// DOUBLE as float4 and float8, CHAR, VARCHAR and the TEXTs as bpchar, varchar and text); the
// columns a CHECK constraint or a generated column reads are read from its expression with
// MySQL's grammar. MariaDB 10.6 or MySQL 8.0.16 and later (CHECK constraints); MySQL 8's
// reads are written to its documented information_schema.
func LoadMySQLCatalog(ctx context.Context, q sqldb.Querier, schema string, tables []string) (*Catalog, error) {
	cat := &Catalog{Schema: schema, Tables: map[string]*Table{}, Grammar: MySQL}
	var mode, version string
	var lowerCase int
	if err := q.QueryRow(ctx, `SELECT @@sql_mode, @@version, @@lower_case_table_names`).Scan(&mode, &version,
		&lowerCase); err != nil {
		return nil, fmt.Errorf("sqlshape: reading the server's sql_mode: %w", err)
	}
	sqlMode, err := pmysql.GetSQLMode(mode)
	if err != nil {
		return nil, fmt.Errorf("sqlshape: the server's sql_mode %q: %w", mode, err)
	}
	cat.mysql = mysqlGrammar{mode: sqlMode, mariaDB: strings.Contains(strings.ToLower(version), "mariadb")}
	cat.foldTables = lowerCase != 0
	l := &mysqlLoad{q: q, cat: cat}
	for _, load := range []func(context.Context) error{l.tables, l.columns, l.indexes, l.checks, l.foreignKeys, l.triggers} {
		if err := load(ctx); err != nil {
			return nil, fmt.Errorf("sqlshape: reading the catalog of database %s: %w", schema, err)
		}
	}
	if tables != nil {
		var missing []string
		for name := range cat.Tables {
			if !slices.Contains(tables, name) {
				delete(cat.Tables, name)
			}
		}
		for _, name := range tables {
			if cat.Table(name) == nil {
				missing = append(missing, name)
			}
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("sqlshape: database %s has no table %s", schema, strings.Join(missing, ", "))
		}
	}
	return cat, nil
}

// mysqlLoad is one LoadMySQLCatalog's reads.
type mysqlLoad struct {
	q   sqldb.Querier
	cat *Catalog
	// generated: what each generated column reads, by table and column.
	generated map[string]map[string][]string
}

// each runs query with the catalog's database as its argument(s) and calls row for every
// row, scanned into dest.
func (l *mysqlLoad) each(ctx context.Context, query string, args int, dest []any, row func() error) error {
	as := make([]any, args)
	for i := range as {
		as[i] = l.cat.Schema
	}
	rows, err := l.q.Query(ctx, query, as...)
	if err != nil {
		return err
	}
	return sqldb.ForEachRow(rows, dest, row)
}

func (l *mysqlLoad) tables(ctx context.Context) error {
	var name, typ, engine string
	return l.each(ctx, `
		SELECT TABLE_NAME, TABLE_TYPE, COALESCE(ENGINE, '') FROM information_schema.TABLES
		WHERE TABLE_SCHEMA = $1 ORDER BY TABLE_NAME`, 1, []any{&name, &typ, &engine}, func() error {
		t := &Table{Name: name, Kind: Ordinary, foldColumns: true}
		switch typ {
		case "VIEW", "SYSTEM VIEW":
			t.Kind = View
		case "SEQUENCE":
			t.Kind = Sequence
		case "SYSTEM VERSIONED":
			t.Unsupported = "is system-versioned: its UPDATEs keep the rows they replace"
		}
		if t.Unsupported == "" && t.Kind == Ordinary && !strings.EqualFold(engine, "InnoDB") {
			t.Unsupported = "is a " + engine + " table, without transactions: its writes cannot commit with their claim"
		}
		l.cat.Tables[name] = t
		return nil
	})
}

func (l *mysqlLoad) columns(ctx context.Context) error {
	l.generated = map[string]map[string][]string{}
	var table, name, dataType, columnType, nullable, extra, generation, collation string
	var hasDefault bool
	var precision, scale *int64
	return l.each(ctx, `
		SELECT TABLE_NAME, COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, IS_NULLABLE,
		       COLUMN_DEFAULT IS NOT NULL AND COLUMN_DEFAULT <> 'NULL', EXTRA, COALESCE(GENERATION_EXPRESSION, ''),
		       COALESCE(COLLATION_NAME, ''), NUMERIC_PRECISION, NUMERIC_SCALE
		FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = $1 ORDER BY TABLE_NAME, ORDINAL_POSITION`, 1,
		[]any{&table, &name, &dataType, &columnType, &nullable, &hasDefault, &extra, &generation, &collation,
			&precision, &scale}, func() error {
			t := l.cat.Tables[table]
			if t == nil {
				return nil
			}
			c := &Column{Name: name, Num: int16(len(t.Columns) + 1), TypeName: columnType, BaseTypmod: -1,
				NotNull: nullable == "NO", HasDefault: hasDefault, Generated: generation != "",
				Identity: strings.Contains(strings.ToLower(extra), "auto_increment"), Collation: collation,
				DeterministicCollation: deterministicCollation(collation)}
			c.HasDefault = c.HasDefault || c.Identity
			mysqlType(c, strings.ToLower(dataType), strings.Contains(strings.ToLower(columnType), "unsigned"), precision, scale)
			c.TypeOID = c.BaseTypeOID
			if c.Generated {
				reads, err := l.cat.mysql.exprColumns(generation)
				if err != nil {
					return fmt.Errorf("generated column %s.%s (%s): %w", table, name, generation, err)
				}
				if l.generated[table] == nil {
					l.generated[table] = map[string][]string{}
				}
				l.generated[table][name] = reads
			}
			t.Columns = append(t.Columns, c)
			return nil
		})
}

// mysqlType sets c's type class from information_schema's DATA_TYPE.
func mysqlType(c *Column, dataType string, unsigned bool, precision, scale *int64) {
	ranges := map[string]int{"tinyint": 8, "smallint": 16, "mediumint": 24, "int": 32, "integer": 32, "bigint": 64}
	switch dataType {
	case "tinyint", "smallint", "mediumint", "int", "integer", "bigint":
		bits := ranges[dataType]
		c.BaseTypeOID, c.Unsigned, c.bounded = oidInt8, unsigned, true
		switch {
		case unsigned && bits == 64:
			c.min, c.max = 0, math.MaxInt64 // the kit's integers are 64-bit signed
		case unsigned:
			c.min, c.max = 0, 1<<bits-1
		default:
			c.min, c.max = -1<<(bits-1), 1<<(bits-1)-1
		}
	case "decimal", "numeric":
		c.BaseTypeOID = oidNumeric
		if precision != nil && scale != nil {
			c.BaseTypmod = int32(*precision<<16|*scale) + 4
		}
		c.Unsigned = unsigned
	case "float":
		c.BaseTypeOID = oidFloat4
	case "double", "real", "double precision":
		c.BaseTypeOID = oidFloat8
	case "char":
		c.BaseTypeOID = oidBpchar
	case "varchar":
		c.BaseTypeOID = oidVarchar
	case "tinytext", "text", "mediumtext", "longtext":
		c.BaseTypeOID = oidText
	}
}

// deterministicCollation says whether strings the kit tells apart are apart under collation
// (none: not a string): a binary collation that does not pad (MariaDB's *_nopad_bin, MySQL's
// utf8mb4_0900_bin, binary). Under any other, 'a' and 'A' or 'a ' and 'a' can be equal.
func deterministicCollation(collation string) bool {
	return collation == "" || collation == "binary" || strings.HasSuffix(collation, "_nopad_bin") ||
		collation == "utf8mb4_0900_bin"
}

func (l *mysqlLoad) indexes(ctx context.Context) error {
	var table, index, column string
	var seq int
	var prefix bool
	keys := map[string]*UniqueKey{}
	err := l.each(ctx, `
		SELECT TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX, COALESCE(COLUMN_NAME, ''), SUB_PART IS NOT NULL
		FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = $1 AND NON_UNIQUE = 0
		ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX`, 1, []any{&table, &index, &seq, &column, &prefix}, func() error {
		t := l.cat.Tables[table]
		if t == nil {
			return nil
		}
		k := keys[table+"\x00"+index]
		if k == nil {
			k = &UniqueKey{Name: index, Primary: index == "PRIMARY"}
			keys[table+"\x00"+index] = k
			t.UniqueKeys = append(t.UniqueKeys, k)
		}
		switch {
		case column == "": // a functional key part (MySQL 8): its expression is not read here
			k.Expression = true
			for _, c := range t.Columns {
				k.References = appendNew(k.References, c.Name)
			}
		case prefix: // a prefix of the column: not its value
			k.Expression = true
			k.References = appendNew(k.References, column)
		default:
			k.Columns = append(k.Columns, column)
			k.References = appendNew(k.References, column)
			for _, read := range l.generated[table][column] {
				k.References = appendNew(k.References, read)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, t := range l.cat.Tables {
		sort.SliceStable(t.UniqueKeys, func(i, j int) bool { return t.UniqueKeys[i].Name < t.UniqueKeys[j].Name })
		for _, k := range t.UniqueKeys {
			if k.Expression {
				k.Columns = nil
			}
			if k.Primary {
				t.PrimaryKey = k.Columns
			}
		}
	}
	return nil
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// checks reads the CHECK constraints: MariaDB's information_schema.CHECK_CONSTRAINTS names
// each one's table (its names are the table's own); MySQL 8's does not (its names are the
// database's), and TABLE_CONSTRAINTS says which table and whether it is enforced.
func (l *mysqlLoad) checks(ctx context.Context) error {
	query := `
		SELECT tc.TABLE_NAME, cc.CONSTRAINT_NAME, cc.CHECK_CLAUSE
		FROM information_schema.TABLE_CONSTRAINTS tc JOIN information_schema.CHECK_CONSTRAINTS cc
		  ON cc.CONSTRAINT_SCHEMA = tc.CONSTRAINT_SCHEMA AND cc.CONSTRAINT_NAME = tc.CONSTRAINT_NAME
		WHERE tc.CONSTRAINT_SCHEMA = $1 AND tc.CONSTRAINT_TYPE = 'CHECK' AND tc.ENFORCED = 'YES'
		ORDER BY cc.CONSTRAINT_NAME`
	if l.cat.mysql.mariaDB {
		query = `
		SELECT TABLE_NAME, CONSTRAINT_NAME, CHECK_CLAUSE FROM information_schema.CHECK_CONSTRAINTS
		WHERE CONSTRAINT_SCHEMA = $1 ORDER BY CONSTRAINT_NAME`
	}
	var table, name, clause string
	return l.each(ctx, query, 1, []any{&table, &name, &clause}, func() error {
		t := l.cat.Tables[table]
		if t == nil {
			return nil
		}
		reads, err := l.cat.mysql.exprColumns(clause)
		if err != nil {
			return fmt.Errorf("CHECK constraint %s of %s (%s): %w", name, table, clause, err)
		}
		var cols []string
		for _, c := range t.Columns {
			if slices.ContainsFunc(reads, func(r string) bool { return strings.EqualFold(r, c.Name) }) {
				cols = append(cols, c.Name)
				for _, g := range l.generated[table][c.Name] {
					cols = appendNew(cols, g)
				}
			}
		}
		t.Checks = append(t.Checks, &Check{Name: name, Definition: "CHECK (" + clause + ")", Columns: cols})
		return nil
	})
}

func (l *mysqlLoad) foreignKeys(ctx context.Context) error {
	var schema, table, name, column, refSchema, refTable, refColumn string
	fks := map[string]*ForeignKey{}
	var order []string
	err := l.each(ctx, `
		SELECT TABLE_SCHEMA, TABLE_NAME, CONSTRAINT_NAME, COLUMN_NAME, REFERENCED_TABLE_SCHEMA,
		       REFERENCED_TABLE_NAME, REFERENCED_COLUMN_NAME
		FROM information_schema.KEY_COLUMN_USAGE
		WHERE REFERENCED_TABLE_NAME IS NOT NULL AND (TABLE_SCHEMA = $1 OR REFERENCED_TABLE_SCHEMA = $2)
		ORDER BY CONSTRAINT_NAME, TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION`, 2,
		[]any{&schema, &table, &name, &column, &refSchema, &refTable, &refColumn}, func() error {
			id := schema + "\x00" + table + "\x00" + name
			fk := fks[id]
			if fk == nil {
				fk = &ForeignKey{Name: name, Table: l.qualified(schema, table), RefTable: l.qualified(refSchema, refTable)}
				fks[id] = fk
				order = append(order, id)
				if t := l.cat.Tables[table]; t != nil && schema == l.cat.Schema {
					t.ForeignKeys = append(t.ForeignKeys, fk)
				}
				if t := l.cat.Tables[refTable]; t != nil && refSchema == l.cat.Schema {
					t.ReferencedBy = append(t.ReferencedBy, fk)
				}
			}
			fk.Columns = append(fk.Columns, column)
			fk.RefColumns = append(fk.RefColumns, refColumn)
			return nil
		})
	return err
}

// qualified names a table, with its database when it is not the catalog's.
func (l *mysqlLoad) qualified(schema, table string) string {
	if schema == l.cat.Schema {
		return table
	}
	return schema + "." + table
}

func (l *mysqlLoad) triggers(ctx context.Context) error {
	var table, name string
	return l.each(ctx, `
		SELECT EVENT_OBJECT_TABLE, TRIGGER_NAME FROM information_schema.TRIGGERS
		WHERE EVENT_OBJECT_SCHEMA = $1 ORDER BY TRIGGER_NAME`, 1, []any{&table, &name}, func() error {
		if t := l.cat.Tables[table]; t != nil {
			t.Triggers = append(t.Triggers, name)
		}
		return nil
	})
}

// exprColumns are the columns an expression of the server's (a CHECK clause, a generated
// column's) reads, as it names them.
func (g mysqlGrammar) exprColumns(expr string) ([]string, error) {
	p := parser.New()
	p.SetSQLMode(g.mode)
	p.SetMariaDB(g.mariaDB)
	stmts, _, err := p.ParseSQL("SELECT " + expr)
	if err != nil {
		return nil, err
	}
	var cols []string
	for _, st := range stmts {
		st.Accept(&visitor{enter: func(n ast.Node) bool {
			if c, ok := n.(*ast.ColumnNameExpr); ok {
				cols = appendNew(cols, c.Name.Name.O)
			}
			return true
		}})
	}
	return cols, nil
}

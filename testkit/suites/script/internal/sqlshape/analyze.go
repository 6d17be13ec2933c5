package sqlshape

import (
	"errors"
	"fmt"
	"strings"
)

// Input is one SQL command of a script, as the script parser hands it over.
type Input struct {
	SQL  string // one command, its variables replaced by $1, $2, …
	Line int    // the line the command starts on, for messages
	// Params names the parameters as the script wrote them, without the colon:
	// Params[0] is $1's. Optional: messages then say :name instead of $n.
	Params []string
}

// Class is what a statement is to the kit.
type Class uint8

const (
	// Other: anything the kit does not defer (DELETE, DDL, MERGE, COPY, an UPDATE that
	// is not by primary key, …): it runs only in sync.
	Other Class = iota
	// Update: UPDATE t SET … WHERE <every primary-key column> = <client value>, every SET
	// item a mergeable write (Statement.Update).
	Update
	// Insert: INSERT INTO t [(cols)] VALUES (…)[, (…)], every value a client value, a
	// server time or DEFAULT (Statement.Insert).
	Insert
	// Select: a SELECT without a locking clause; it runs at request time in every mode.
	Select
	// LockingRead: SELECT … FOR UPDATE / SHARE (and their KEY variants).
	LockingRead
	// TxControl: BEGIN, START TRANSACTION, COMMIT, END, ROLLBACK, ABORT (Statement.Tx).
	TxControl
)

func (c Class) String() string {
	switch c {
	case Update:
		return "update"
	case Insert:
		return "insert"
	case Select:
		return "select"
	case LockingRead:
		return "locking read"
	case TxControl:
		return "transaction control"
	}
	return "other"
}

// TxKind is the transaction-control statement of a TxControl statement.
type TxKind uint8

const (
	TxNone TxKind = iota
	TxBegin
	TxCommit
	TxRollback
)

// Statement is one analysed command.
type Statement struct {
	Line int
	SQL  string // as given
	// Text is the statement on one line as PostgreSQL's deparser writes it, the
	// parameters by name when Input.Params names them.
	Text  string
	Class Class
	Tag   string // the command: "UPDATE", "INSERT", "SELECT", "BEGIN", "DELETE", "CREATE TABLE", …
	// Target is the table an UPDATE, INSERT, DELETE or MERGE writes, as named (without
	// a schema); "" for other statements.
	Target string
	Update *KeyedUpdate // Class Update
	Insert *RowInsert   // Class Insert
	Tx     TxKind       // Class TxControl
	// Reads lists the tables a SELECT or locking read names (common table expressions
	// left out), sorted, without duplicates.
	Reads []string
	// Refusals say why the statement cannot be deferred in the queue modes; none
	// when it can. Sync runs every statement as written, refused or not.
	Refusals []Refusal

	short string // the head of its refusals' messages
}

// Deferrable says whether the queue modes can run the statement.
func (s *Statement) Deferrable() bool { return len(s.Refusals) == 0 }

// RefusalKind names why a statement cannot be deferred.
type RefusalKind uint8

const (
	NotFullKey         RefusalKind = iota + 1 // the WHERE does not name one row by its whole primary key
	FurtherCondition                          // a condition beyond the key decides which writes apply
	NoPrimaryKey                              // an UPDATE of a table without a primary key
	KeyType                                   // a key column whose equality the kit cannot reproduce
	KeyWritten                                // an UPDATE writes a primary-key column
	Inexact                                   // an expression the kit cannot evaluate exactly
	CheckedColumn                             // a written column under a CHECK (the table's or its domain's)
	UniqueColumn                              // a written column under a unique index or exclusion constraint
	ForeignKeyColumn                          // a written column of a foreign key
	Trigger                                   // the table has a trigger
	UnsupportedTable                          // partitioned, a view, inheritance parent, rules, row security, another schema
	UnknownName                               // no such table or column in the catalog
	Returning                                 // RETURNING
	UnsupportedForm                           // FROM, WITH, ON CONFLICT, INSERT … SELECT, SET (a, b) = …, DEFAULT, …
	Locking                                   // SELECT … FOR UPDATE / SHARE
	Transaction                               // ROLLBACK, SAVEPOINT, BEGIN ISOLATION LEVEL …
	Delete                                    // DELETE, TRUNCATE
	DDL                                       // a schema change
	OtherStatement                            // MERGE, COPY, SET, CALL, DO, …
	Compound                                  // several statements in one command
	MixedWrites                               // script: one column written by two kinds of write
	InsertedAndUpdated                        // script: one table both inserted into and updated
)

var refusalKindNames = map[RefusalKind]string{
	NotFullKey: "not the full primary key", FurtherCondition: "further condition",
	NoPrimaryKey: "no primary key", KeyType: "key type", KeyWritten: "primary key written",
	Inexact: "inexact expression", CheckedColumn: "CHECK constraint", UniqueColumn: "unique constraint",
	ForeignKeyColumn: "foreign key", Trigger: "trigger", UnsupportedTable: "unsupported table",
	UnknownName: "unknown name", Returning: "RETURNING", UnsupportedForm: "unsupported form",
	Locking: "locking read", Transaction: "transaction control", Delete: "delete", DDL: "DDL",
	OtherStatement: "other statement", Compound: "several statements", MixedWrites: "mixed writes",
	InsertedAndUpdated: "inserted and updated",
}

func (k RefusalKind) String() string {
	if s, ok := refusalKindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("RefusalKind(%d)", k)
}

// Refusal is why one statement (or two, for a script's mixed writes) cannot be
// deferred in the queue modes. Its Error is one line:
// "line 7: UPDATE inventory … WHERE sku = :sku AND qty >= :n: a further condition …".
type Refusal struct {
	Line      int
	Kind      RefusalKind
	Statement string // the statement, shortened
	Reason    string
}

func (r Refusal) Error() string {
	return fmt.Sprintf("line %d: %s: %s", r.Line, r.Statement, r.Reason)
}

// Analyze parses one command with the grammar of the catalog's database (PostgreSQL's
// unless the catalog says otherwise) and classifies it against the catalog. A command the
// grammar rejects is an error for every mode: one line, with the command's line number.
// Everything else is a Statement, whose Refusals say whether the queue modes can defer it.
func Analyze(in Input, cat *Catalog) (*Statement, error) {
	p, err := cat.grammar().parse(in)
	if err != nil {
		return nil, fmt.Errorf("line %d: %v", rejectedLine(in, err), err)
	}
	if p.count == 0 {
		return nil, fmt.Errorf("line %d: no SQL statement in %q", in.Line, strings.TrimSpace(in.SQL))
	}
	a := &analysis{in: in, cat: cat, named: p.named}
	a.st = &Statement{Line: in.Line, SQL: in.SQL, Text: p.text}
	a.st.short = short(a.st.Text, "", "")
	if p.count > 1 {
		a.st.Tag = "several statements"
		a.refuse(Compound, "one command holds %d statements (pgbench's \\;): the kit defers one statement per command",
			p.count)
		return a.st, nil
	}
	st := p.stmt
	switch st.kind {
	case stUpdate:
		a.update(st.update)
	case stInsert:
		a.insert(st.insert)
	case stSelect:
		a.selectStmt(st.sel)
	case stTx:
		a.transaction(st.tx)
	case stDelete:
		a.st.Tag, a.st.Target = "DELETE", st.target
		a.refuse(Delete, "the kit defers UPDATEs by primary key and INSERTs; a deferred delete would land "+
			"out of order with them")
	case stTruncate:
		a.st.Tag = "TRUNCATE"
		a.refuse(Delete, "the kit defers UPDATEs by primary key and INSERTs; a deferred truncate would land "+
			"out of order with them")
	case stMerge:
		a.st.Tag, a.st.Target = "MERGE", st.target
		a.refuse(OtherStatement, "whether a MERGE updates or inserts depends on the rows at the time it runs")
	default:
		a.st.Tag = st.tag
		if st.ddl {
			a.refuse(DDL, "DDL (%s) changes the schema the deferred writes are written against", a.st.Tag)
		} else {
			a.refuse(OtherStatement, "%s is not a write the kit defers (it defers UPDATEs by primary key "+
				"and INSERTs, and runs SELECTs at request time)", a.st.Tag)
		}
	}
	return a.st, nil
}

// rejectedLine is the script's line of a grammar's rejection err of command in.
func rejectedLine(in Input, err error) int {
	var se *syntaxError
	if errors.As(err, &se) {
		return in.Line + se.line
	}
	return in.Line
}

// analysis is the state of one Analyze call.
type analysis struct {
	in    Input
	cat   *Catalog
	named func(string) string // parsed.named
	st    *Statement
}

func (a *analysis) refuse(kind RefusalKind, format string, args ...any) {
	a.st.Refusals = append(a.st.Refusals, Refusal{Line: a.in.Line, Kind: kind, Statement: a.st.short,
		Reason: fmt.Sprintf(format, args...)})
}

// table resolves the relation a write names, refusing what the kit cannot defer
// writes to (keyed: an UPDATE, which names its row by the table's key); nil when the
// catalog does not have it.
func (a *analysis) table(rv relation, keyed bool) *Table {
	if rv.catalog != "" {
		a.refuse(UnsupportedTable, "it names database %s: the kit writes to its own", rv.catalog)
		return nil
	}
	schema := "the catalog"
	if a.cat != nil {
		schema = "schema " + a.cat.Schema
	}
	if rv.schema != "" && (a.cat == nil || rv.schema != a.cat.Schema) {
		a.refuse(UnsupportedTable, "it names schema %s: the script's tables are those of %s", rv.schema, schema)
		return nil
	}
	t := a.cat.Table(rv.name)
	if t == nil {
		a.refuse(UnknownName, "%s has no table %s", schema, rv.name)
		return nil
	}
	if t.Kind != Ordinary {
		a.refuse(UnsupportedTable, "%s is a %s: the kit defers writes to plain tables only", t.Name, t.Kind)
	}
	if t.Unsupported != "" {
		a.refuse(UnsupportedTable, "%s %s: the kit defers writes to plain tables only", t.Name, t.Unsupported)
	}
	if t.HasChildren && keyed {
		a.refuse(UnsupportedTable, "%s has inheritance children: its key does not name one row of them all", t.Name)
	}
	for _, rule := range t.Rules {
		a.refuse(UnsupportedTable, "%s has rule %s, which rewrites the writes to it", t.Name, rule)
	}
	if t.RowSecurity {
		a.refuse(UnsupportedTable, "%s has row-level security, which decides which rows a write sees", t.Name)
	}
	for _, trig := range t.Triggers {
		a.refuse(Trigger, "%s has trigger %s: merged or reordered writes would fire it differently, "+
			"and could change which writes fail", t.Name, trig)
	}
	return t
}

func (a *analysis) selectStmt(s *selectSyntax) {
	a.st.Tag = "SELECT"
	a.st.Class = Select
	a.st.Reads = s.reads
	switch {
	case s.intoTable:
		a.st.Class, a.st.Tag = Other, "SELECT INTO"
		a.st.Reads = nil
		a.refuse(DDL, "DDL (SELECT INTO) creates a table")
	case s.intoOther != "":
		a.st.Class, a.st.Tag = Other, "SELECT INTO"
		a.st.Reads = nil
		a.refuse(OtherStatement, "SELECT … %s writes outside the database's tables, which the kit does not defer", s.intoOther)
	case s.writes:
		a.st.Class = Other
		a.refuse(UnsupportedForm, "a write inside WITH: the kit defers UPDATEs and INSERTs written as statements of their own")
	case s.locking:
		a.st.Class = LockingRead
		a.refuse(Locking, "a locking read: the writes it locks rows for are deferred and no longer happen under its lock")
	}
}

func (a *analysis) transaction(t *txSyntax) {
	a.st.Tag = t.tag
	switch t.kind {
	case txBeginKind:
		a.st.Class, a.st.Tx = TxControl, TxBegin
		if !t.plainOptions {
			a.refuse(Transaction, "the writes deferred out of the request's transaction are no longer "+
				"under its options")
		}
	case txCommitKind:
		a.st.Class, a.st.Tx = TxControl, TxCommit
		if t.chain {
			a.st.Class, a.st.Tx = Other, TxNone
			a.refuse(Transaction, "the kit runs each request as one transaction")
		}
	case txRollbackKind:
		a.st.Class, a.st.Tx = TxControl, TxRollback
		a.refuse(Transaction, "the writes deferred before it cannot be taken back")
	default:
		a.refuse(Transaction, "the kit runs each request as one transaction, without savepoints or two-phase commit")
	}
}

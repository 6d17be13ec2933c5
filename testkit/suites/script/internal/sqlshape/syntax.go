package sqlshape

// The analysis reads a statement as the parts below, which a grammar's front end builds
// from its own parse tree: PostgreSQL's (pg.go, pg_query_go) or MySQL's (mysql.go, TiDB's
// parser). What a statement writes, which row, and how each value merges is decided once,
// on these parts, for both grammars; a front end only says what the statement is made of
// (and, for casts and literals, what its database makes of them).

// grammar is a database's SQL grammar: it parses one command of a script.
type grammar interface {
	// parse reads in.SQL. An error is the grammar's rejection, one line without the
	// command's line number (Analyze adds it).
	parse(in Input) (*parsed, error)
}

// parsed is one command as a front end read it.
type parsed struct {
	// text is the command on one line as the grammar's deparser writes it, the
	// parameters by name.
	text string
	// count is the number of statements in the command; stmt is the first's.
	count int
	stmt  *syntax
	// named writes a client value's SQL (Expr.String, with $n) with the script's names
	// for the parameters.
	named func(sql string) string
}

// stmtKind is what a statement is, as far as the analysis tells statements apart.
type stmtKind uint8

const (
	stOther stmtKind = iota
	stUpdate
	stInsert
	stSelect
	stTx
	stDelete // DELETE
	stTruncate
	stMerge
)

// syntax is one statement.
type syntax struct {
	kind   stmtKind
	tag    string // stOther's command: "CREATE TABLE", "SET", "CALL"
	ddl    bool   // stOther: it changes the schema
	target string // stDelete's and stMerge's table
	update *updateSyntax
	insert *insertSyntax
	sel    *selectSyntax
	tx     *txSyntax
}

// relation is a table a statement writes, as named.
type relation struct {
	catalog, schema, name, alias string
}

// formKind is a part of an UPDATE or INSERT beyond the shapes the kit defers.
type formKind uint8

const (
	formWith       formKind = iota + 1 // WITH …
	formJoin                           // UPDATE … FROM (PostgreSQL), UPDATE a JOIN b (MySQL)
	formReturning                      // RETURNING
	formOnConflict                     // ON CONFLICT (PostgreSQL), ON DUPLICATE KEY UPDATE (MySQL)
	formOverriding                     // OVERRIDING … VALUE
	formOrderLimit                     // ORDER BY / LIMIT of an UPDATE (MySQL)
	formIgnore                         // UPDATE IGNORE, INSERT IGNORE (MySQL)
	formReplace                        // REPLACE (MySQL)
	formPartition                      // t PARTITION (p) (MySQL)
)

// form is one such part: its kind and the clause as the grammar spells it ("ON
// DUPLICATE KEY UPDATE").
type form struct {
	kind   formKind
	clause string
}

// updateSyntax is an UPDATE of one table.
type updateSyntax struct {
	table relation
	forms []form
	where *node // nil without WHERE
	set   []assignment
}

// assignment is one SET item.
type assignment struct {
	column      string
	indirection bool // SET c[1] = …, SET c.f = …
	multi       bool // SET (a, b) = (…)
	value       *node
}

// insertSyntax is an INSERT into one table.
type insertSyntax struct {
	table   relation
	forms   []form
	columns []insertColumn
	// rows are the VALUES rows; defaultValues says DEFAULT VALUES (no rows); fromSelect
	// says the rows come from a query (INSERT … SELECT, or VALUES with WITH, ORDER BY or
	// LIMIT).
	rows          [][]*node
	defaultValues bool
	fromSelect    bool
}

type insertColumn struct {
	name        string
	indirection bool
}

// selectSyntax is a query.
type selectSyntax struct {
	// reads are the tables it names, schema-qualified where the query qualifies them,
	// common table expressions left out, sorted, each once.
	reads   []string
	locking bool // FOR UPDATE / SHARE, LOCK IN SHARE MODE, anywhere in it
	writes  bool // a write inside WITH
	// intoTable: SELECT INTO a new table (PostgreSQL); intoOther: INTO variables or a
	// file (MySQL), the clause as written.
	intoTable bool
	intoOther string
}

// txKind is what a transaction-control statement does.
type txKind uint8

const (
	txOtherKind txKind = iota // SAVEPOINT, RELEASE, PREPARE TRANSACTION, XA, …
	txBeginKind
	txCommitKind
	txRollbackKind
)

// txSyntax is a transaction-control statement.
type txSyntax struct {
	kind txKind
	tag  string // "BEGIN", "START TRANSACTION", "COMMIT", "ROLLBACK", "SAVEPOINT", …
	// options: BEGIN's options leave the transaction as the kit's own is (READ COMMITTED,
	// READ WRITE); chain: COMMIT AND CHAIN (or RELEASE).
	plainOptions bool
	chain        bool
}

// nodeOp is what an expression node is to the analysis.
type nodeOp uint8

const (
	opOther      nodeOp = iota // anything else
	opParam                    // $n: param
	opInt                      // an integer literal: lit
	opDecimal                  // an exact decimal literal: lit
	opFloat                    // a floating-point literal (MySQL's 1e3): lit
	opString                   // a string literal: lit
	opBool                     // a boolean literal: flag
	opNull                     // NULL
	opBits                     // a bit string or hex literal
	opColumn                   // a column reference: parts, the last a column or "*"
	opCast                     // a cast of args[0]: cast (its X unset), castWhy
	opBinary                   // args[0] oper args[1]
	opUnary                    // oper args[0]
	opAnd                      // args AND'ed
	opFunc                     // a function call: name, args
	opServerTime               // the server's clock: now(), CURRENT_TIMESTAMP, …
	opGreatest                 // greatest(args)
	opLeast                    // least(args)
	opDefault                  // DEFAULT
	opSubquery                 // a sub-select
	opCurrentOf                // WHERE CURRENT OF (PostgreSQL)
)

// node is one expression.
type node struct {
	op nodeOp
	// oper is an operator's name: "+", "-", "*", "=", ">=", …; "" for an operator the
	// grammar writes otherwise (IN, LIKE, BETWEEN, IS DISTINCT FROM).
	oper  string
	lit   string
	flag  bool
	param int
	parts []string
	name  string // opFunc: the function, lower case
	// cast is an opCast's evaluation (how the kit computes it), castWhy why the kit
	// cannot ("": it can).
	cast    Cast
	castWhy string
	args    []*node
	// render writes the node back as SQL, the parameters by name.
	render func() string
}

// text is n as SQL, for messages.
func (n *node) text() string {
	if n == nil || n.render == nil {
		return "(an expression)"
	}
	return n.render()
}

// walkNodes calls visit on n and every node under it.
func walkNodes(n *node, visit func(*node)) {
	if n == nil {
		return
	}
	visit(n)
	for _, a := range n.args {
		walkNodes(a, visit)
	}
}

// columnRef is the column a node names when it names one of the statement's table
// (unqualified, or qualified by the table's alias, or by its name when it has none); ""
// otherwise.
func columnRef(n *node, table, alias string) string {
	if n == nil || n.op != opColumn || len(n.parts) == 0 || n.parts[len(n.parts)-1] == "*" {
		return ""
	}
	qualifier := table
	if alias != "" {
		qualifier = alias
	}
	switch {
	case len(n.parts) == 1:
		return n.parts[0]
	case len(n.parts) == 2 && n.parts[0] == qualifier:
		return n.parts[1]
	}
	return ""
}

// conjuncts flattens a tree of ANDs into its conditions.
func conjuncts(n *node) []*node {
	if n.op == opAnd {
		var out []*node
		for _, arg := range n.args {
			out = append(out, conjuncts(arg)...)
		}
		return out
	}
	return []*node{n}
}

// isServerTime says whether n is the server's clock, possibly cast (now()::date).
func isServerTime(n *node) bool {
	switch n.op {
	case opServerTime:
		return true
	case opCast:
		return isServerTime(n.args[0])
	}
	return false
}

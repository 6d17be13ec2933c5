package sqlshape

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	pmysql "github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver" // the parser's own standalone literals (it needs one such driver)
	"github.com/pingcap/tidb/pkg/parser/types"

	"github.com/hotspotkit/hotspotkit/sqldb"
)

// mysqlGrammar is MySQL's grammar as TiDB's parser reads it (github.com/pingcap/tidb/pkg/parser,
// a yacc grammar of MySQL 8's, with MariaDB's syntax where it knows it), under the server's
// sql_mode (ANSI_QUOTES, NO_BACKSLASH_ESCAPES, PIPES_AS_CONCAT change what a statement says).
// Parameters: the kit writes a script's variables as $n; MySQL's grammar takes ?s, so the
// statement is read as the MySQL adapters send it (sqldb.Placeholders) and each ? mapped back
// to its $n by its place.
type mysqlGrammar struct {
	mode    pmysql.SQLMode
	mariaDB bool
}

// mysqlRestore is how statements are written back for messages: keywords upper case, names
// bare, strings in single quotes without their character set.
const mysqlRestore = format.RestoreStringSingleQuotes | format.RestoreKeyWordUppercase |
	format.RestoreSpacesAroundBinaryOperation | format.RestoreStringWithoutCharset

func (g mysqlGrammar) parse(in Input) (*parsed, error) {
	sql, order, err := sqldb.Placeholders(in.SQL)
	if err != nil {
		return nil, &syntaxError{msg: err.Error()}
	}
	p := parser.New()
	p.SetSQLMode(g.mode)
	p.SetMariaDB(g.mariaDB)
	stmts, _, err := p.ParseSQL(sql)
	if err != nil {
		return nil, mysqlSyntaxError(err)
	}
	r := &mysqlRenderer{params: in.Params, paramAt: map[int]int{}}
	var offsets []int
	for _, st := range stmts {
		st.Accept(&visitor{enter: func(n ast.Node) bool {
			if m, ok := n.(*test_driver.ParamMarkerExpr); ok {
				offsets = append(offsets, m.Offset)
			}
			return true
		}})
	}
	sort.Ints(offsets)
	if len(offsets) != len(order) {
		return nil, &syntaxError{msg: "a ? is not a variable of the script: write variables as :name"}
	}
	for k, off := range offsets {
		r.paramAt[off] = order[k] + 1
	}
	out := &parsed{count: len(stmts), named: r.named}
	var texts []string
	for _, st := range stmts {
		texts = append(texts, r.restore(st))
	}
	out.text = strings.Join(texts, "; ")
	if len(stmts) == 1 {
		out.stmt = r.stmt(stmts[0], sql)
	}
	return out, nil
}

// syntaxError is a grammar's rejection of a command: why, and the line of the command it
// is on (0: its first).
type syntaxError struct {
	line int
	msg  string
}

func (e *syntaxError) Error() string { return e.msg }

// tidbSyntax is how TiDB's parser reports a syntax error.
var tidbSyntax = regexp.MustCompile(`^line (\d+) column \d+ near "((?s:.*))"\s*$`)

func mysqlSyntaxError(err error) *syntaxError {
	msg := strings.Join(strings.Fields(err.Error()), " ")
	m := tidbSyntax.FindStringSubmatch(strings.TrimSpace(err.Error()))
	if m == nil {
		return &syntaxError{msg: "MySQL's grammar rejects it: " + msg}
	}
	line, _ := strconv.Atoi(m[1])
	near := strings.Join(strings.Fields(m[2]), " ")
	if near == "" {
		return &syntaxError{line: max(line-1, 0), msg: "MySQL's grammar rejects it at its end"}
	}
	return &syntaxError{line: max(line-1, 0), msg: fmt.Sprintf("MySQL's grammar rejects it near %q", cut(near, 40))}
}

// visitor calls enter on every node (its children too when it returns true).
type visitor struct {
	enter func(ast.Node) bool
}

func (v *visitor) Enter(n ast.Node) (ast.Node, bool) { return n, !v.enter(n) }
func (v *visitor) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// mysqlRenderer writes statements and their parts back as SQL for messages, with the
// script's names for the parameters.
type mysqlRenderer struct {
	params  []string
	paramAt map[int]int // a ?'s offset in the statement → its $n
}

// param names $n as the script wrote it, :name, when the name is known.
func (r *mysqlRenderer) param(n int) string {
	if n >= 1 && n <= len(r.params) && r.params[n-1] != "" {
		return ":" + r.params[n-1]
	}
	return "$" + strconv.Itoa(n)
}

// restore writes n back, each ? as its parameter's name.
func (r *mysqlRenderer) restore(n ast.Node) string {
	var b strings.Builder
	if err := n.Restore(format.NewRestoreCtx(mysqlRestore, &b)); err != nil {
		return "(an expression)"
	}
	var marks []int
	n.Accept(&visitor{enter: func(c ast.Node) bool {
		if m, ok := c.(*test_driver.ParamMarkerExpr); ok {
			marks = append(marks, r.paramAt[m.Offset])
		}
		return true
	}})
	k := 0
	return replaceTokens(b.String(), func(tok string) string {
		if tok != "?" || k >= len(marks) {
			return tok
		}
		k++
		return r.param(marks[k-1])
	})
}

// named writes a client value's SQL with the script's names for its $n's.
func (r *mysqlRenderer) named(sql string) string {
	return replaceTokens(sql, func(tok string) string {
		if n, err := strconv.Atoi(strings.TrimPrefix(tok, "$")); err == nil && tok[0] == '$' {
			return r.param(n)
		}
		return tok
	})
}

// replaceTokens replaces the ?s and $n's of sql outside quotes by what replace makes of
// them.
func replaceTokens(sql string, replace func(tok string) string) string {
	var b strings.Builder
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			j := i + 1
			for j < len(sql) {
				if sql[j] == '\\' && c != '`' {
					j += 2
					continue
				}
				if sql[j] == c {
					if j+1 < len(sql) && sql[j+1] == c {
						j += 2
						continue
					}
					break
				}
				j++
			}
			j = min(j+1, len(sql))
			b.WriteString(sql[i:j])
			i = j
		case c == '?':
			b.WriteString(replace("?"))
			i++
		case c == '$' && i+1 < len(sql) && sql[i+1] >= '0' && sql[i+1] <= '9' &&
			(i == 0 || !(isWordByte(sql[i-1]))):
			j := i + 1
			for j < len(sql) && sql[j] >= '0' && sql[j] <= '9' {
				j++
			}
			b.WriteString(replace(sql[i:j]))
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || (c >= '0' && c <= '9') || (c|0x20 >= 'a' && c|0x20 <= 'z') || c >= 0x80
}

// stmt reads one statement; sql is the text parsed (for what the tree does not keep: BEGIN
// or START TRANSACTION).
func (r *mysqlRenderer) stmt(n ast.StmtNode, sql string) *syntax {
	switch v := n.(type) {
	case *ast.UpdateStmt:
		return &syntax{kind: stUpdate, update: r.update(v)}
	case *ast.InsertStmt:
		return &syntax{kind: stInsert, insert: r.insert(v)}
	case *ast.SelectStmt, *ast.SetOprStmt:
		return &syntax{kind: stSelect, sel: mysqlSelect(n)}
	case *ast.BeginStmt:
		tx := &txSyntax{kind: txBeginKind, tag: "BEGIN",
			plainOptions: v.Mode == "" && !v.ReadOnly && v.AsOf == nil && !v.CausalConsistencyOnly}
		if first, _ := nextWordOf(sql); strings.EqualFold(first, "start") {
			tx.tag = "START TRANSACTION"
		}
		return &syntax{kind: stTx, tx: tx}
	case *ast.CommitStmt:
		return &syntax{kind: stTx, tx: &txSyntax{kind: txCommitKind, tag: "COMMIT",
			chain: v.CompletionType != ast.CompletionTypeDefault}}
	case *ast.RollbackStmt:
		if v.SavepointName != "" {
			return &syntax{kind: stTx, tx: &txSyntax{kind: txOtherKind, tag: "ROLLBACK TO SAVEPOINT"}}
		}
		return &syntax{kind: stTx, tx: &txSyntax{kind: txRollbackKind, tag: "ROLLBACK"}}
	case *ast.SavepointStmt, *ast.ReleaseSavepointStmt:
		return &syntax{kind: stTx, tx: &txSyntax{kind: txOtherKind, tag: stmtTag(n)}}
	case *ast.DeleteStmt:
		s := &syntax{kind: stDelete}
		if rel, ok := firstTable(v.TableRefs); ok {
			s.target = rel.name
		}
		return s
	case *ast.TruncateTableStmt:
		return &syntax{kind: stTruncate}
	}
	_, ddl := n.(ast.DDLNode)
	return &syntax{kind: stOther, tag: stmtTag(n), ddl: ddl}
}

// nextWordOf is the first word of sql and the rest.
func nextWordOf(sql string) (string, string) {
	fields := strings.Fields(sql)
	if len(fields) == 0 {
		return "", ""
	}
	return fields[0], strings.Join(fields[1:], " ")
}

// stmtTag names a statement's command by its parse-tree type: *ast.LoadDataStmt is "LOAD
// DATA".
func stmtTag(n ast.Node) string {
	typ := strings.TrimSuffix(reflect.TypeOf(n).Elem().Name(), "Stmt")
	var b strings.Builder
	for i, c := range typ {
		if i > 0 && c >= 'A' && c <= 'Z' {
			b.WriteByte(' ')
		}
		b.WriteRune(c)
	}
	return strings.ToUpper(b.String())
}

// firstTable is the first table a statement's table references name, and whether they name
// exactly one table and nothing else (no join, no derived table).
func firstTable(refs *ast.TableRefsClause) (relation, bool) {
	if refs == nil || refs.TableRefs == nil {
		return relation{}, false
	}
	j := refs.TableRefs
	var rel relation
	found := false
	j.Accept(&visitor{enter: func(n ast.Node) bool {
		if src, ok := n.(*ast.TableSource); ok && !found {
			if tn, ok := src.Source.(*ast.TableName); ok {
				rel, found = relation{schema: tn.Schema.O, name: tn.Name.O, alias: src.AsName.O}, true
			}
		}
		return !found
	}})
	single := false
	if src, ok := j.Left.(*ast.TableSource); ok && j.Right == nil {
		_, single = src.Source.(*ast.TableName)
	}
	return rel, found && single
}

// partitioned says whether refs name partitions of their table.
func partitioned(refs *ast.TableRefsClause) bool {
	named := false
	if refs != nil && refs.TableRefs != nil {
		refs.TableRefs.Accept(&visitor{enter: func(n ast.Node) bool {
			if tn, ok := n.(*ast.TableName); ok && len(tn.PartitionNames) > 0 {
				named = true
			}
			return !named
		}})
	}
	return named
}

func (r *mysqlRenderer) update(u *ast.UpdateStmt) *updateSyntax {
	table, single := firstTable(u.TableRefs)
	s := &updateSyntax{table: table, where: r.node(u.Where)}
	if u.With != nil {
		s.forms = append(s.forms, form{formWith, "WITH"})
	}
	if !single || u.MultipleTable {
		s.forms = append(s.forms, form{formJoin, "UPDATE of several tables (a join)"})
	}
	if partitioned(u.TableRefs) {
		s.forms = append(s.forms, form{formPartition, "PARTITION (…)"})
	}
	switch {
	case u.Order != nil && u.Limit != nil:
		s.forms = append(s.forms, form{formOrderLimit, "ORDER BY … LIMIT"})
	case u.Order != nil:
		s.forms = append(s.forms, form{formOrderLimit, "ORDER BY"})
	case u.Limit != nil:
		s.forms = append(s.forms, form{formOrderLimit, "LIMIT"})
	}
	if u.IgnoreErr {
		s.forms = append(s.forms, form{formIgnore, "UPDATE IGNORE"})
	}
	for _, a := range u.List {
		s.set = append(s.set, assignment{column: a.Column.Name.O, value: r.node(a.Expr)})
	}
	return s
}

func (r *mysqlRenderer) insert(ins *ast.InsertStmt) *insertSyntax {
	table, _ := firstTable(ins.Table)
	s := &insertSyntax{table: table}
	if ins.IsReplace {
		s.forms = append(s.forms, form{formReplace, "REPLACE"})
	}
	if ins.IgnoreErr {
		s.forms = append(s.forms, form{formIgnore, "INSERT IGNORE"})
	}
	if len(ins.OnDuplicate) > 0 {
		s.forms = append(s.forms, form{formOnConflict, "ON DUPLICATE KEY UPDATE"})
	}
	if len(ins.PartitionNames) > 0 {
		s.forms = append(s.forms, form{formPartition, "PARTITION (…)"})
	}
	for _, c := range ins.Columns {
		s.columns = append(s.columns, insertColumn{name: c.Name.O})
	}
	if ins.Select != nil {
		s.fromSelect = true
		return s
	}
	for _, list := range ins.Lists {
		row := []*node{}
		for _, e := range list {
			row = append(row, r.node(e))
		}
		s.rows = append(s.rows, row)
	}
	return s
}

func mysqlSelect(n ast.Node) *selectSyntax {
	out := &selectSyntax{}
	ctes := map[string]bool{}
	reads := map[string]bool{}
	n.Accept(&visitor{enter: func(c ast.Node) bool {
		switch v := c.(type) {
		case *ast.SelectStmt:
			if v.LockInfo != nil && v.LockInfo.LockType != ast.SelectLockNone {
				out.locking = true
			}
			if v.SelectIntoOpt != nil && out.intoOther == "" {
				out.intoOther = "INTO"
				switch v.SelectIntoOpt.Tp {
				case ast.SelectIntoOutfile:
					out.intoOther = "INTO OUTFILE"
				case ast.SelectIntoDumpfile:
					out.intoOther = "INTO DUMPFILE"
				case ast.SelectIntoVars:
					out.intoOther = "INTO variables"
				}
			}
		case *ast.CommonTableExpression:
			ctes[v.Name.O] = true
		case *ast.TableName:
			name := v.Name.O
			if v.Schema.O != "" {
				name = v.Schema.O + "." + name
			}
			reads[name] = true
		}
		return true
	}})
	for name := range reads {
		if !ctes[name] {
			out.reads = append(out.reads, name)
		}
	}
	slices.Sort(out.reads)
	return out
}

// mysqlServerTimes are MySQL's and MariaDB's clock functions (with no argument, or the
// precision of their fraction of a second).
var mysqlServerTimes = map[string]bool{
	"now": true, "current_timestamp": true, "localtime": true, "localtimestamp": true, "sysdate": true,
	"utc_timestamp": true, "curdate": true, "current_date": true, "curtime": true, "current_time": true,
	"utc_date": true, "utc_time": true, "unix_timestamp": true,
}

// node reads an expression; nil for nil.
func (r *mysqlRenderer) node(e ast.ExprNode) *node {
	if e == nil {
		return nil
	}
	if p, ok := e.(*ast.ParenthesesExpr); ok {
		return r.node(p.Expr)
	}
	out := &node{render: func() string { return r.restore(e) }}
	switch v := e.(type) {
	case *test_driver.ParamMarkerExpr:
		out.op, out.param = opParam, r.paramAt[v.Offset]
	case *test_driver.ValueExpr:
		out.op, out.lit = mysqlLiteral(v)
	case *ast.FuncCastExpr:
		out.op, out.args = opCast, []*node{r.node(v.Expr)}
		out.cast, out.castWhy = mysqlCast(v.Tp)
	case *ast.BinaryOperationExpr:
		switch v.Op {
		case opcode.LogicAnd:
			out.op, out.args = opAnd, []*node{r.node(v.L), r.node(v.R)}
		case opcode.LogicOr, opcode.LogicXor:
			out.op, out.args = opOther, []*node{r.node(v.L), r.node(v.R)}
		default:
			out.op, out.oper, out.args = opBinary, operator(v.Op), []*node{r.node(v.L), r.node(v.R)}
		}
	case *ast.UnaryOperationExpr:
		out.op, out.oper, out.args = opUnary, operator(v.Op), []*node{r.node(v.V)}
	case *ast.ColumnNameExpr:
		out.op = opColumn
		for _, part := range []string{v.Name.Schema.O, v.Name.Table.O, v.Name.Name.O} {
			if part != "" {
				out.parts = append(out.parts, part)
			}
		}
	case *ast.FuncCallExpr:
		out.name, out.args = v.FnName.L, r.children(e)
		switch {
		case out.name == "greatest":
			out.op = opGreatest
		case out.name == "least":
			out.op = opLeast
		case mysqlServerTimes[out.name] && fractionOnly(v.Args):
			out.op = opServerTime
		default:
			out.op = opFunc
		}
	case *ast.DefaultExpr:
		out.op = opDefault
		if v.Name != nil {
			out.op = opFunc
		}
	case *ast.SubqueryExpr, *ast.ExistsSubqueryExpr, *ast.CompareSubqueryExpr:
		out.op, out.args = opSubquery, r.children(e)
	default:
		out.op, out.args = opOther, r.children(e)
	}
	return out
}

// children reads the expressions nearest under e.
func (r *mysqlRenderer) children(e ast.ExprNode) []*node {
	var out []*node
	e.Accept(&visitor{enter: func(n ast.Node) bool {
		if n == ast.Node(e) {
			return true
		}
		if x, ok := n.(ast.ExprNode); ok {
			out = append(out, r.node(x))
			return false
		}
		return true
	}})
	return out
}

// fractionOnly says whether a clock function's arguments are at most its precision.
func fractionOnly(args []ast.ExprNode) bool {
	if len(args) == 0 {
		return true
	}
	v, ok := args[0].(*test_driver.ValueExpr)
	return len(args) == 1 && ok && v.Kind() == test_driver.KindInt64
}

// operator is an operator as MySQL writes it: "+", ">=", "DIV".
func operator(op opcode.Op) string {
	var b strings.Builder
	op.Format(&b)
	return strings.TrimSpace(b.String())
}

// mysqlLiteral reads a literal: an integer (beyond 64 bits too: refused as such), an exact
// DECIMAL (1.50), a floating-point one (1e3, a DOUBLE in MySQL), a string, NULL, or a bit
// or hex string. TRUE and FALSE are the integers 1 and 0 in MySQL.
func mysqlLiteral(v *test_driver.ValueExpr) (nodeOp, string) {
	switch v.Kind() {
	case test_driver.KindNull:
		return opNull, ""
	case test_driver.KindInt64:
		return opInt, strconv.FormatInt(v.GetInt64(), 10)
	case test_driver.KindUint64:
		return opInt, strconv.FormatUint(v.GetUint64(), 10)
	case test_driver.KindMysqlDecimal:
		return opDecimal, v.GetMysqlDecimal().String()
	case test_driver.KindFloat32:
		return opFloat, strconv.FormatFloat(float64(v.GetFloat32()), 'g', -1, 32)
	case test_driver.KindFloat64:
		return opFloat, strconv.FormatFloat(v.GetFloat64(), 'g', -1, 64)
	case test_driver.KindString, test_driver.KindBytes:
		return opString, v.GetString()
	}
	return opBits, ""
}

// mysqlCast says how the kit evaluates a CAST or CONVERT to a MySQL type (the Cast without
// its X): SIGNED and UNSIGNED as 64-bit integers, DECIMAL(p, s) exactly (DECIMAL alone is
// DECIMAL(10, 0) in MySQL, which rounds to integers), CHAR without a length as text; a
// float, or CHAR(n), which cuts, is refused (why); other types pass their value through for
// the server to convert.
func mysqlCast(tp *types.FieldType) (c Cast, why string) {
	c.Call = true
	switch tp.GetType() {
	case pmysql.TypeLonglong, pmysql.TypeLong, pmysql.TypeInt24, pmysql.TypeShort, pmysql.TypeTiny:
		c.To, c.Type = CastInt8, "SIGNED"
		if pmysql.HasUnsignedFlag(tp.GetFlag()) {
			c.To, c.Type = CastUnsigned, "UNSIGNED"
		}
	case pmysql.TypeNewDecimal:
		c.To = CastNumeric
		c.Precision, c.Scale = tp.GetFlen(), tp.GetDecimal()
		c.Type = fmt.Sprintf("DECIMAL(%d,%d)", c.Precision, c.Scale)
		return c, numericScaleWhy(c)
	case pmysql.TypeDouble, pmysql.TypeFloat:
		c.Type = "DOUBLE"
		return c, "is a float: sums of floats taken in another order may differ"
	case pmysql.TypeString, pmysql.TypeVarString, pmysql.TypeVarchar:
		c.Type = "CHAR"
		if tp.GetCharset() == "binary" {
			c.Type = "BINARY"
		}
		if tp.GetFlen() >= 0 {
			c.Type += "(" + strconv.Itoa(tp.GetFlen()) + ")"
			return c, "is a cast to " + c.Type + ", which cuts the string"
		}
		if c.Type == "CHAR" {
			c.To = CastText
		}
	default:
		c.Type = strings.ToUpper(types.TypeToStr(tp.GetType(), tp.GetCharset()))
	}
	return c, ""
}

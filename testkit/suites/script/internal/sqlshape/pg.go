package sqlshape

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/hotspotkit/hotspotkit/testkit/decimal"
)

// postgresGrammar is PostgreSQL's grammar: pganalyze's pg_query_go, which embeds the
// server's parser, and its deparser for messages.
type postgresGrammar struct{}

func (postgresGrammar) parse(in Input) (*parsed, error) {
	tree, err := pg.Parse(in.SQL)
	if err != nil {
		return nil, errors.New(strings.Join(strings.Fields(err.Error()), " "))
	}
	r := renderer{params: in.Params, version: tree.Version}
	p := &parsed{count: len(tree.Stmts), named: r.named}
	if p.count == 0 {
		return p, nil
	}
	p.text = r.statement(tree, in.SQL)
	if p.count == 1 {
		p.stmt = r.stmt(tree.Stmts[0].Stmt)
	}
	return p, nil
}

// stmt reads one statement of the parse tree.
func (r renderer) stmt(n *pg.Node) *syntax {
	switch v := n.Node.(type) {
	case *pg.Node_UpdateStmt:
		return &syntax{kind: stUpdate, update: r.update(v.UpdateStmt)}
	case *pg.Node_InsertStmt:
		return &syntax{kind: stInsert, insert: r.insert(v.InsertStmt)}
	case *pg.Node_SelectStmt:
		return &syntax{kind: stSelect, sel: pgSelect(v.SelectStmt)}
	case *pg.Node_TransactionStmt:
		return &syntax{kind: stTx, tx: pgTransaction(v.TransactionStmt)}
	case *pg.Node_DeleteStmt:
		return &syntax{kind: stDelete, target: v.DeleteStmt.GetRelation().GetRelname()}
	case *pg.Node_TruncateStmt:
		return &syntax{kind: stTruncate}
	case *pg.Node_MergeStmt:
		return &syntax{kind: stMerge, target: v.MergeStmt.GetRelation().GetRelname()}
	}
	return &syntax{kind: stOther, tag: commandTag(n), ddl: isDDL(n)}
}

func pgRelation(rv *pg.RangeVar) relation {
	return relation{catalog: rv.Catalogname, schema: rv.Schemaname, name: rv.Relname, alias: rv.GetAlias().GetAliasname()}
}

func (r renderer) update(u *pg.UpdateStmt) *updateSyntax {
	s := &updateSyntax{table: pgRelation(u.Relation), where: r.node(u.WhereClause)}
	if u.WithClause != nil {
		s.forms = append(s.forms, form{formWith, "WITH"})
	}
	if len(u.FromClause) > 0 {
		s.forms = append(s.forms, form{formJoin, "UPDATE … FROM"})
	}
	if len(u.ReturningList) > 0 {
		s.forms = append(s.forms, form{formReturning, "RETURNING"})
	}
	for _, n := range u.TargetList {
		rt := n.GetResTarget()
		if rt == nil {
			s.set = append(s.set, assignment{})
			continue
		}
		_, multi := rt.Val.GetNode().(*pg.Node_MultiAssignRef)
		s.set = append(s.set, assignment{column: rt.Name, indirection: len(rt.Indirection) > 0, multi: multi,
			value: r.node(rt.Val)})
	}
	return s
}

func (r renderer) insert(ins *pg.InsertStmt) *insertSyntax {
	s := &insertSyntax{table: pgRelation(ins.Relation)}
	if ins.WithClause != nil {
		s.forms = append(s.forms, form{formWith, "WITH"})
	}
	if ins.OnConflictClause != nil {
		s.forms = append(s.forms, form{formOnConflict, "ON CONFLICT"})
	}
	if len(ins.ReturningList) > 0 {
		s.forms = append(s.forms, form{formReturning, "RETURNING"})
	}
	if ins.Override != pg.OverridingKind_OVERRIDING_NOT_SET {
		s.forms = append(s.forms, form{formOverriding, "OVERRIDING … VALUE"})
	}
	for _, n := range ins.Cols {
		rt := n.GetResTarget()
		s.columns = append(s.columns, insertColumn{name: rt.GetName(), indirection: len(rt.GetIndirection()) > 0})
	}
	if ins.SelectStmt == nil {
		s.defaultValues = true
		return s
	}
	sel := ins.SelectStmt.GetSelectStmt()
	if sel == nil || len(sel.ValuesLists) == 0 || sel.WithClause != nil || len(sel.SortClause) > 0 ||
		sel.LimitCount != nil || sel.LimitOffset != nil {
		s.fromSelect = true
		return s
	}
	for _, list := range sel.ValuesLists {
		var row []*node
		for _, item := range list.GetList().GetItems() {
			row = append(row, r.node(item))
		}
		s.rows = append(s.rows, row)
	}
	return s
}

func pgSelect(s *pg.SelectStmt) *selectSyntax {
	out := &selectSyntax{}
	ctes := map[string]bool{}
	reads := map[string]bool{}
	walk(s.ProtoReflect(), func(m protoreflect.Message) {
		switch v := m.Interface().(type) {
		case *pg.LockingClause:
			out.locking = true
		case *pg.InsertStmt, *pg.UpdateStmt, *pg.DeleteStmt, *pg.MergeStmt:
			out.writes = true
		case *pg.IntoClause:
			out.intoTable = true
		case *pg.CommonTableExpr:
			ctes[v.Ctename] = true
		case *pg.RangeVar:
			name := v.Relname
			if v.Schemaname != "" {
				name = v.Schemaname + "." + name
			}
			reads[name] = true
		}
	})
	for name := range reads {
		if !ctes[name] {
			out.reads = append(out.reads, name)
		}
	}
	slices.Sort(out.reads)
	return out
}

func pgTransaction(t *pg.TransactionStmt) *txSyntax {
	switch t.Kind {
	case pg.TransactionStmtKind_TRANS_STMT_BEGIN, pg.TransactionStmtKind_TRANS_STMT_START:
		tx := &txSyntax{kind: txBeginKind, tag: "BEGIN", plainOptions: true}
		if t.Kind == pg.TransactionStmtKind_TRANS_STMT_START {
			tx.tag = "START TRANSACTION"
		}
		for _, opt := range t.Options {
			tx.plainOptions = tx.plainOptions && readCommitted(opt)
		}
		return tx
	case pg.TransactionStmtKind_TRANS_STMT_COMMIT:
		return &txSyntax{kind: txCommitKind, tag: "COMMIT", chain: t.Chain}
	case pg.TransactionStmtKind_TRANS_STMT_ROLLBACK:
		return &txSyntax{kind: txRollbackKind, tag: "ROLLBACK"}
	}
	return &txSyntax{kind: txOtherKind, tag: commandTag(&pg.Node{Node: &pg.Node_TransactionStmt{TransactionStmt: t}})}
}

// readCommitted says whether a BEGIN option leaves the transaction as the kit's own
// is: READ COMMITTED, READ WRITE.
func readCommitted(opt *pg.Node) bool {
	d, ok := opt.Node.(*pg.Node_DefElem)
	if !ok {
		return false
	}
	switch d.DefElem.Defname {
	case "transaction_isolation":
		c, ok := d.DefElem.Arg.GetNode().(*pg.Node_AConst)
		return ok && c.AConst.GetSval().GetSval() == "read committed"
	case "transaction_read_only":
		c, ok := d.DefElem.Arg.GetNode().(*pg.Node_AConst)
		return ok && c.AConst.GetIval().GetIval() == 0
	}
	return false
}

// node reads an expression of the parse tree; nil for nil.
func (r renderer) node(n *pg.Node) *node {
	if n == nil || n.Node == nil {
		return nil
	}
	out := &node{render: func() string { return r.expr(n) }}
	switch v := n.Node.(type) {
	case *pg.Node_ParamRef:
		out.op, out.param = opParam, int(v.ParamRef.Number)
	case *pg.Node_AConst:
		out.op, out.lit, out.flag = pgConstant(v.AConst)
	case *pg.Node_TypeCast:
		out.op, out.args = opCast, []*node{r.node(v.TypeCast.Arg)}
		out.cast, out.castWhy = castOf(v.TypeCast.TypeName)
	case *pg.Node_AExpr:
		e := v.AExpr
		if e.Kind == pg.A_Expr_Kind_AEXPR_OP {
			out.oper = operatorName(e)
		}
		if e.Lexpr == nil {
			out.op, out.args = opUnary, []*node{r.node(e.Rexpr)}
		} else {
			out.op, out.args = opBinary, []*node{r.node(e.Lexpr), r.node(e.Rexpr)}
		}
		if out.args[len(out.args)-1] == nil { // a unary operator on the right (postfix): none in PostgreSQL 14+
			out.op, out.args = opOther, r.children(n)
		}
	case *pg.Node_BoolExpr:
		if v.BoolExpr.Boolop == pg.BoolExprType_AND_EXPR {
			out.op = opAnd
			for _, arg := range v.BoolExpr.Args {
				out.args = append(out.args, r.node(arg))
			}
		} else {
			out.op, out.args = opOther, r.children(n)
		}
	case *pg.Node_ColumnRef:
		out.op = opColumn
		for _, f := range v.ColumnRef.Fields {
			if s, ok := f.Node.(*pg.Node_String_); ok {
				out.parts = append(out.parts, s.String_.Sval)
			} else {
				out.parts = append(out.parts, "*")
			}
		}
	case *pg.Node_MinMaxExpr:
		out.op = opGreatest
		if v.MinMaxExpr.Op == pg.MinMaxOp_IS_LEAST {
			out.op = opLeast
		}
		for _, arg := range v.MinMaxExpr.Args {
			out.args = append(out.args, r.node(arg))
		}
	case *pg.Node_FuncCall, *pg.Node_SqlvalueFunction:
		out.op, out.args = opFunc, r.children(n)
		if pgServerTime(n) {
			out.op = opServerTime
		}
	case *pg.Node_SetToDefault:
		out.op = opDefault
	case *pg.Node_SubLink:
		out.op, out.args = opSubquery, r.children(n)
	case *pg.Node_CurrentOfExpr:
		out.op = opCurrentOf
	default:
		out.op, out.args = opOther, r.children(n)
	}
	return out
}

// children reads the expressions nearest under n, whatever fields hold them: what the
// analysis walks to find a column read inside an expression it does not evaluate.
func (r renderer) children(n *pg.Node) []*node {
	var out []*node
	var visit func(m protoreflect.Message)
	visit = func(m protoreflect.Message) {
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			if fd.Kind() != protoreflect.MessageKind || fd.IsMap() {
				return true
			}
			each := func(child protoreflect.Message) {
				if c, ok := child.Interface().(*pg.Node); ok {
					if cn := r.node(c); cn != nil {
						out = append(out, cn)
					}
					return
				}
				visit(child)
			}
			if fd.IsList() {
				list := v.List()
				for i := 0; i < list.Len(); i++ {
					each(list.Get(i).Message())
				}
				return true
			}
			each(v.Message())
			return true
		})
	}
	inner := n.ProtoReflect()
	if fd := inner.WhichOneof(inner.Descriptor().Oneofs().Get(0)); fd != nil {
		visit(inner.Get(fd).Message())
	}
	return out
}

// pgConstant reads a literal. PostgreSQL's scanner hands integers beyond 32 bits over as
// "float" strings: they are integers here, and numbers with a point or an exponent are
// numeric constants, exact decimals.
func pgConstant(c *pg.A_Const) (nodeOp, string, bool) {
	if c.Isnull {
		return opNull, "", false
	}
	switch val := c.Val.(type) {
	case *pg.A_Const_Ival:
		return opInt, strconv.Itoa(int(val.Ival.Ival)), false
	case *pg.A_Const_Fval:
		if strings.ContainsAny(val.Fval.Fval, ".eE") {
			return opDecimal, val.Fval.Fval, false
		}
		return opInt, val.Fval.Fval, false
	case *pg.A_Const_Sval:
		return opString, val.Sval.Sval, false
	case *pg.A_Const_Boolval:
		return opBool, "", val.Boolval.Boolval
	}
	return opBits, "", false
}

// pgServerTime says whether n is the server's clock: now(), CURRENT_TIMESTAMP and their
// kin.
func pgServerTime(n *pg.Node) bool {
	switch v := n.Node.(type) {
	case *pg.Node_SqlvalueFunction:
		switch v.SqlvalueFunction.Op {
		case pg.SQLValueFunctionOp_SVFOP_CURRENT_DATE,
			pg.SQLValueFunctionOp_SVFOP_CURRENT_TIME, pg.SQLValueFunctionOp_SVFOP_CURRENT_TIME_N,
			pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP, pg.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP_N,
			pg.SQLValueFunctionOp_SVFOP_LOCALTIME, pg.SQLValueFunctionOp_SVFOP_LOCALTIME_N,
			pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP, pg.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:
			return true
		}
	case *pg.Node_FuncCall:
		f := v.FuncCall
		if len(f.Args) > 0 || f.AggStar || f.Over != nil || f.AggFilter != nil {
			return false
		}
		var parts []string
		for _, p := range f.Funcname {
			if s, ok := p.Node.(*pg.Node_String_); ok {
				parts = append(parts, s.String_.Sval)
			}
		}
		if len(parts) == 2 && parts[0] == "pg_catalog" {
			parts = parts[1:]
		}
		if len(parts) == 1 {
			switch parts[0] {
			case "now", "clock_timestamp", "transaction_timestamp", "statement_timestamp":
				return true
			}
		}
	}
	return false
}

// castOf says how the kit evaluates a cast to the named type (the Cast without its X):
// the integer types, numeric (with a typmod of at most decimal.MaxPlaces places) and the text
// types exactly, others passed through for PostgreSQL to convert; floats, length-limited
// text and numerics of more places or a negative scale are refused (why says so).
func castOf(t *pg.TypeName) (c Cast, why string) {
	name := typeName(t)
	c.Type = name
	if len(t.Typmods) > 0 {
		c.Type = name + "(…)"
	}
	if len(t.ArrayBounds) > 0 || t.Setof || t.PctType {
		return c, "is a cast to " + c.Type + "[], which the kit does not evaluate"
	}
	switch name {
	case "int2":
		c.To, c.Type = CastInt2, name
	case "int4":
		c.To, c.Type = CastInt4, name
	case "int8":
		c.To, c.Type = CastInt8, name
	case "numeric":
		c.To = CastNumeric
		return c, numericTypmod(&c, t.Typmods)
	case "float4", "float8":
		return c, "is a float: sums of floats taken in another order may differ"
	case "text", "varchar", "bpchar":
		if len(t.Typmods) > 0 || name == "bpchar" {
			return c, "is a cast to " + c.Type + ", which pads or cuts the string"
		}
		c.To = CastText
	case "bool":
		c.To, c.Type = CastBool, name
	}
	return c, ""
}

// numericTypmod reads numeric(p) or numeric(p, s) into c; why says what the kit cannot
// keep exactly.
func numericTypmod(c *Cast, typmods []*pg.Node) (why string) {
	if len(typmods) == 0 {
		return ""
	}
	var mods []int
	for _, m := range typmods {
		k, ok := m.Node.(*pg.Node_AConst)
		if !ok || k.AConst.GetIval() == nil {
			return "is a cast to " + c.Type + ", whose typmod the kit does not read"
		}
		mods = append(mods, int(k.AConst.GetIval().Ival))
	}
	if len(mods) > 2 || mods[0] < 1 {
		return "is a cast to " + c.Type + ", whose typmod the kit does not read"
	}
	c.Precision = mods[0]
	c.Type = fmt.Sprintf("numeric(%d)", c.Precision)
	if len(mods) == 2 {
		c.Scale = mods[1]
		c.Type = fmt.Sprintf("numeric(%d,%d)", c.Precision, c.Scale)
	}
	return numericScaleWhy(*c)
}

// numericScaleWhy says why the kit cannot keep a numeric cast's values exactly: a scale of
// more places than it keeps, or below zero.
func numericScaleWhy(c Cast) string {
	switch {
	case c.Scale > decimal.MaxPlaces:
		return fmt.Sprintf("is a cast to %s, which keeps more than %d decimal places: the kit adds numerics "+
			"exactly to 10⁻⁸", c.Type, decimal.MaxPlaces)
	case c.Scale < 0:
		return "is a cast to " + c.Type + ", which rounds to tens or more"
	}
	return ""
}

// typeName is a cast's type as one name, pg_catalog's qualification dropped: the
// grammar already spells the SQL standard's names as PostgreSQL's (int4, float8,
// varchar).
func typeName(t *pg.TypeName) string {
	var parts []string
	for _, n := range t.Names {
		if s, ok := n.Node.(*pg.Node_String_); ok {
			parts = append(parts, s.String_.Sval)
		}
	}
	if len(parts) == 2 && parts[0] == "pg_catalog" {
		parts = parts[1:]
	}
	return strings.Join(parts, ".")
}

func operatorName(e *pg.A_Expr) string {
	if len(e.Name) != 1 {
		return ""
	}
	if s, ok := e.Name[0].Node.(*pg.Node_String_); ok {
		return s.String_.Sval
	}
	return ""
}

package sqlshape

import (
	"fmt"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/hotspotkit/hotspotkit/testkit/decimal"
)

// notClient says why an expression is not a client value: the innermost part that is
// not (a function, a column, a decimal of too many places, …) and why.
type notClient struct {
	node      *pg.Node
	why       string
	column    bool // it reads a column
	evaluated bool // why is the error of evaluating it, which names it
}

// clientValue converts an expression of the statement into an Expr, or says which
// part of it the kit cannot evaluate exactly.
func clientValue(n *pg.Node) (Expr, *notClient) {
	switch v := n.Node.(type) {
	case *pg.Node_ParamRef:
		return Param{Index: int(v.ParamRef.Number)}, nil
	case *pg.Node_AConst:
		return constant(n, v.AConst)
	case *pg.Node_TypeCast:
		x, bad := clientValue(v.TypeCast.Arg)
		if bad != nil {
			return nil, bad
		}
		c, why := castOf(v.TypeCast.TypeName)
		if why != "" {
			return nil, &notClient{node: n, why: why}
		}
		c.X = x
		return folded(n, c)
	case *pg.Node_AExpr:
		e := v.AExpr
		op := operatorName(e)
		if e.Kind != pg.A_Expr_Kind_AEXPR_OP || (op != "+" && op != "-" && op != "*") {
			return nil, &notClient{node: n, why: "uses an operator the kit does not evaluate (it evaluates + - * of integers and decimals)"}
		}
		r, bad := clientValue(e.Rexpr)
		if bad != nil {
			return nil, bad
		}
		if e.Lexpr == nil {
			if op == "*" {
				return nil, &notClient{node: n, why: "is not an expression the kit evaluates"}
			}
			if op == "+" {
				return r, nil
			}
			return folded(n, Neg{X: r})
		}
		l, bad := clientValue(e.Lexpr)
		if bad != nil {
			return nil, bad
		}
		return folded(n, Arith{Op: op[0], L: l, R: r})
	case *pg.Node_ColumnRef:
		name := ""
		for _, f := range v.ColumnRef.Fields {
			if s, ok := f.Node.(*pg.Node_String_); ok {
				name = s.String_.Sval
			}
		}
		return nil, &notClient{node: n, column: true,
			why: "reads column " + name + ", which only the server knows when the write lands"}
	case *pg.Node_FuncCall, *pg.Node_SqlvalueFunction:
		return nil, &notClient{node: n, why: "is a function the kit cannot evaluate"}
	case *pg.Node_SubLink:
		return nil, &notClient{node: n, why: "is a sub-select, which reads the database when the write lands"}
	}
	return nil, &notClient{node: n, why: "is not a value the kit can evaluate"}
}

// folded refuses an expression without parameters whose evaluation fails (an overflow, a
// product of too many decimal places, a cast that would round): it would fail for every
// request.
func folded(n *pg.Node, e Expr) (Expr, *notClient) {
	if hasParam(e) {
		return e, nil
	}
	if _, err := e.Eval(nil); err != nil {
		return nil, &notClient{node: n, why: err.Error(), evaluated: true}
	}
	return e, nil
}

func hasParam(e Expr) bool {
	switch v := e.(type) {
	case Param:
		return true
	case Neg:
		return hasParam(v.X)
	case Arith:
		return hasParam(v.L) || hasParam(v.R)
	case Cast:
		return hasParam(v.X)
	}
	return false
}

func constant(n *pg.Node, c *pg.A_Const) (Expr, *notClient) {
	if c.Isnull {
		return Const{Value: Null}, nil
	}
	switch val := c.Val.(type) {
	case *pg.A_Const_Ival:
		return Const{Value: Int(int64(val.Ival.Ival))}, nil
	case *pg.A_Const_Fval:
		// PostgreSQL's scanner hands integers beyond 32 bits over as "float" strings.
		text := val.Fval.Fval
		if i, err := strconv.ParseInt(text, 10, 64); err == nil {
			return Const{Value: Int(i)}, nil
		}
		if strings.ContainsAny(text, ".eE") {
			d, err := parseDecimal(text)
			if err != nil {
				return nil, &notClient{node: n, why: err.Error()}
			}
			return Const{Value: d}, nil
		}
		return nil, &notClient{node: n, why: "is beyond 64-bit integers"}
	case *pg.A_Const_Sval:
		return Const{Value: String(val.Sval.Sval)}, nil
	case *pg.A_Const_Boolval:
		return Const{Value: Bool(val.Boolval.Boolval)}, nil
	}
	return nil, &notClient{node: n, why: "is a bit string"}
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

// numberOnly returns the part of a client value that keeps it from being a number
// (an integer or a decimal), or nil: increments and greatest/least bounds are added and
// compared as numbers, so a NULL, a boolean or a cast to another type would change what
// they mean.
func numberOnly(e Expr) Expr {
	switch v := e.(type) {
	case Const:
		if v.Value.Kind == NullValue || v.Value.Kind == BoolValue {
			return v
		}
	case Neg:
		return numberOnly(v.X)
	case Arith:
		if bad := numberOnly(v.L); bad != nil {
			return bad
		}
		return numberOnly(v.R)
	case Cast:
		if v.To != CastInt2 && v.To != CastInt4 && v.To != CastInt8 && v.To != CastNumeric {
			return v
		}
		return numberOnly(v.X)
	}
	return nil
}

// serverTime says whether n is the server's clock: now(), CURRENT_TIMESTAMP and their
// kin, possibly cast (now()::date).
func serverTime(n *pg.Node) bool {
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
	case *pg.Node_TypeCast:
		return serverTime(v.TypeCast.Arg)
	}
	return false
}

package script

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/hotspotkit/hotspotkit/testkit/counters"
	"github.com/hotspotkit/hotspotkit/testkit/suites/script/internal/pgscript"
	"github.com/hotspotkit/hotspotkit/testkit/suites/script/internal/sqlshape"
)

// appendParams appends a statement's arguments to out as sqlshape evaluates them: a pgbench
// double in its shortest exact decimal form.
func appendParams(out []sqlshape.Value, args []pgscript.Value) []sqlshape.Value {
	for _, a := range args {
		switch a.Kind() {
		case pgscript.Int:
			out = append(out, sqlshape.Int(a.Int64()))
		case pgscript.Double:
			out = append(out, sqlshape.String(strconv.FormatFloat(a.Float64(), 'g', -1, 64)))
		case pgscript.Bool:
			out = append(out, sqlshape.Bool(a.Bool()))
		case pgscript.String:
			out = append(out, sqlshape.String(a.Text()))
		default:
			out = append(out, sqlshape.Null)
		}
	}
	return out
}

// constant says whether e takes no parameter: its value is the same for every request.
func constant(e sqlshape.Expr) bool {
	switch x := e.(type) {
	case sqlshape.Param:
		return false
	case sqlshape.Const:
		return true
	case sqlshape.Neg:
		return constant(x.X)
	case sqlshape.Cast:
		return constant(x.X)
	case sqlshape.Arith:
		return constant(x.L) && constant(x.R)
	}
	return false
}

// checkValue fails where insertValue would, without the text a text column keeps as it is.
func checkValue(col *sqlshape.Column, e sqlshape.Expr, params []sqlshape.Value) error {
	if !isText(col) {
		_, err := insertValue(col, e, params)
		return err
	}
	x, err := e.Eval(params)
	if err != nil {
		return fmt.Errorf("%s: %w", col.Name, err)
	}
	if x.IsNull() && col.NotNull {
		return fmt.Errorf("NULL into NOT NULL column %s", col.Name)
	}
	return nil
}

// isText says whether col keeps a value's text as it is (text, varchar without a length).
func isText(col *sqlshape.Column) bool {
	return col.TypeName == "text" || col.TypeName == "character varying"
}

// insertValue is e's value for column col, as RowInsert.Values gives it.
func insertValue(col *sqlshape.Column, e sqlshape.Expr, params []sqlshape.Value) (sqlshape.Value, error) {
	x, err := e.Eval(params)
	if err != nil {
		return sqlshape.Null, fmt.Errorf("%s: %w", col.Name, err)
	}
	if x.IsNull() && col.NotNull {
		return sqlshape.Null, fmt.Errorf("NULL into NOT NULL column %s", col.Name)
	}
	return col.Compare(x)
}

// coreValue is v as counters holds a value of class typ.
func coreValue(typ counters.Type, v sqlshape.Value) (counters.Value, error) {
	if v.IsNull() {
		return counters.Value{}, errors.New("a NULL the kit cannot merge")
	}
	switch typ {
	case counters.TypeInteger:
		n, err := intOf(v)
		return counters.Int(n), err
	case counters.TypeNumeric:
		d, err := v.Decimal()
		return counters.Amount(d), err
	case counters.TypeText:
		if v.Kind == sqlshape.StringValue {
			return counters.Text(v.Str), nil
		}
		return counters.Text(v.String()), nil
	}
	return counters.Value{}, fmt.Errorf("a client value of a %s column", typ)
}

func intOf(v sqlshape.Value) (int64, error) {
	switch v.Kind {
	case sqlshape.IntValue:
		return v.Int, nil
	case sqlshape.StringValue:
		return strconv.ParseInt(v.Str, 10, 64)
	}
	return 0, fmt.Errorf("%s is not an integer", v)
}

// text is v as PostgreSQL reads it back from text (nil: NULL).
func text(v sqlshape.Value) *string {
	if v.Kind == sqlshape.NullValue {
		return nil
	}
	s := plain(v)
	return &s
}

// plain is a value that is not NULL as text.
func plain(v sqlshape.Value) string {
	switch v.Kind {
	case sqlshape.IntValue:
		return strconv.FormatInt(v.Int, 10)
	case sqlshape.BoolValue:
		return strconv.FormatBool(v.Bool)
	case sqlshape.StringValue:
		return v.Str
	}
	return v.String()
}

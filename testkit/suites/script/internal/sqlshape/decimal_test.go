package sqlshape

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/testkit/decimal"
)

// TestParseDecimal: a Value of PostgreSQL's numeric input (testkit/decimal reads it; its
// tests hold every case), its display scale, and an error that names the text as SQL does.
func TestParseDecimal(t *testing.T) {
	cases := []struct {
		in    string
		units decimal.Decimal
		scale uint8
		err   string
	}{
		{in: "0.001", units: 100_000, scale: 3},
		{in: " -2.50\n", units: -250_000_000, scale: 2},
		{in: "5.", units: 500_000_000},
		{in: "-0.00", scale: 2},
		{in: "92233720368.54775808", err: "'92233720368.54775808' is out of the kit's decimal range"},
		{in: "0.000000001", err: "'0.000000001' has more than 8 decimal places: the kit adds numerics exactly to 10⁻⁸"},
		{in: "NaN", err: "'NaN' is not a finite number"},
		{in: "1/3", err: "'1/3' is not a number"},
	}
	for _, tc := range cases {
		v, err := ParseDecimal(tc.in)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ParseDecimal(%q): %v, %v; want an error with %q", tc.in, v, err, tc.err)
		case tc.err == "" && (err != nil || v != Dec(tc.units, tc.scale) || v.Scale != tc.scale):
			t.Errorf("ParseDecimal(%q): %+v, %v; want %d units at scale %d", tc.in, v, err, tc.units, tc.scale)
		}
	}
}

func TestDecimalText(t *testing.T) {
	cases := []struct {
		v    Value
		want string
	}{
		{Dec(100_000, 0), "0.001"}, // a scale below the value's own places is raised to them
		{Dec(250_000_000, 2), "2.50"},
		{Dec(-5, 8), "-0.00000005"},
		{Dec(-250_000_000, 0), "-2.5"},
		{Dec(0, 3), "0.000"},
		{Dec(math.MaxInt64, 8), "92233720368.54775807"},
	}
	for _, tc := range cases {
		if got := tc.v.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.v, got, tc.want)
		}
	}
	if d, err := Int(-3).Decimal(); err != nil || d != -300_000_000 {
		t.Errorf("Int(-3).Decimal(): %v, %v", d, err)
	}
	if _, err := Int(92233720369).Decimal(); err == nil {
		t.Errorf("Int(92233720369).Decimal(): no error")
	}
	if _, err := String("1").Decimal(); err == nil {
		t.Errorf("String.Decimal(): no error")
	}
}

// TestDecimalsAgreeWithPostgreSQL evaluates each expression in the kit and in PostgreSQL
// (SELECT (expr)::text, the parameters sent as text, PostgreSQL typing them): both give
// the same text (the same number, with the same display scale), or both fail; except
// where the kit refuses what PostgreSQL computes (more than 8 places, beyond Decimal).
func TestDecimalsAgreeWithPostgreSQL(t *testing.T) {
	target := testdb.New(t)
	cat := idTextCatalog()
	cases := []struct {
		expr    string
		params  []string
		refused bool // the kit refuses it, PostgreSQL computes it
	}{
		{expr: "0.001 + 0.002000"},
		{expr: "1.0 * 2"},
		{expr: "0.5 * 0.25"},
		{expr: "1e-3 * 1000"},
		{expr: "-2.50 - 1"},
		{expr: "1.50e1 + 0"},
		{expr: "0.1 * 3 - 0.3"},
		{expr: "-(-0.5)"},
		{expr: "$1 + 0.001", params: []string{"4.5"}},
		{expr: "$1 * 0.001", params: []string{"0.5"}},
		{expr: "$1 - 0.001", params: []string{"-1e-5"}},
		{expr: "$1 + 1", params: []string{"4.5"}},
		{expr: "$1 * 2", params: []string{"0.5"}},
		{expr: "$1 + $2 * 0.1", params: []string{"7", "0.25"}},
		{expr: "$1::numeric", params: []string{" -2.50 "}},
		{expr: "$1::numeric", params: []string{".5"}},
		{expr: "$1::numeric", params: []string{"5."}},
		{expr: "$1::numeric", params: []string{"+.5e+1"}},
		{expr: "$1::numeric", params: []string{"1E-3"}},
		{expr: "$1::numeric", params: []string{"0e5"}},
		{expr: "$1::numeric", params: []string{"1e"}},
		{expr: "$1::numeric", params: []string{"1_000"}},
		{expr: "$1::numeric", params: []string{"0x10"}},
		{expr: "$1::numeric", params: []string{"1.2.3"}},
		{expr: "$1::numeric * 2", params: []string{"0.125"}},
		{expr: "$1::numeric(10,2)", params: []string{"5"}},
		{expr: "$1::numeric(10,2)", params: []string{"123456789.5"}},
		{expr: "$1::numeric(4)", params: []string{"2.0"}},
		{expr: "$1::numeric(4, 1)", params: []string{"-2"}},
		{expr: "2.5::int4"},
		{expr: "(-2.5)::int4"},
		{expr: "(-0.5)::int4"},
		{expr: "0.49999999::int8"},
		{expr: "$1::int8", params: []string{"2.5"}},
		{expr: "$1::numeric::int2", params: []string{"32767.5"}},
		{expr: "2.50::text"},
		{expr: "$1::numeric", params: []string{"0.000000001"}, refused: true},
		{expr: "$1::numeric", params: []string{"1.000000000"}, refused: true},
		{expr: "$1::numeric", params: []string{"NaN"}, refused: true},
		{expr: "$1 * 0.0001", params: []string{"0.00001"}, refused: true},
		{expr: "$1 + 0.5", params: []string{"92233720368.1"}, refused: true},
		{expr: "$1::numeric(10,2)", params: []string{"0.001"}, refused: true},
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, tc := range cases {
		name := fmt.Sprintf("%s with %q", tc.expr, tc.params)
		var args []any
		var params []Value
		for _, p := range tc.params {
			args = append(args, p)
			params = append(params, String(p))
		}
		var pg string
		pgErr := target.Admin().QueryRow(ctx, "SELECT ("+tc.expr+")::text", args...).Scan(&pg)

		kit, kitErr := kitText(cat, tc.expr, params)
		switch {
		case tc.refused && (kitErr == nil || pgErr != nil):
			t.Errorf("%s: kit %q (%v), PostgreSQL %q (%v): want the kit's refusal of what PostgreSQL computes",
				name, kit, kitErr, pg, pgErr)
		case tc.refused:
		case (kitErr == nil) != (pgErr == nil) || kit != pg:
			t.Errorf("%s: kit %q (%v), PostgreSQL %q (%v)", name, kit, kitErr, pg, pgErr)
		}
	}
}

// kitText is the kit's value of expr as text, as an assignment to a text column: the
// evaluation, or the refusal of a statement whose expression fails for every request.
func kitText(cat *Catalog, expr string, params []Value) (string, error) {
	st, err := Analyze(Input{SQL: "UPDATE t SET v = " + expr + " WHERE id = 1", Line: 1}, cat)
	if err != nil {
		return "", err
	}
	if !st.Deferrable() {
		return "", st.Refusals[0]
	}
	v, err := st.Update.Set[0].Eval(params)
	return v.Str, err
}

// TestDecimalIncrementsAgreeWithPostgreSQL runs each increment of a numeric(20,8) column
// from 0 in PostgreSQL (rolled back) and evaluates its delta in the kit: the same amount,
// or both fail. The delta's terms are typed as the column, as PostgreSQL adds each to it.
func TestDecimalIncrementsAgreeWithPostgreSQL(t *testing.T) {
	target := testdb.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := target.Admin().Exec(ctx, `CREATE TABLE amounts (id int PRIMARY KEY, c numeric(20,8) NOT NULL,
		n bigint NOT NULL); INSERT INTO amounts VALUES (1, 0, 0)`); err != nil {
		t.Fatal(err)
	}
	cat, err := LoadCatalog(ctx, target.Admin(), target.Schema(), nil)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		set    string
		params []string
		// refused: the kit refuses what PostgreSQL computes (it would round each write on
		// its own); accepted: the kit reads as decimals the terms of a sum PostgreSQL
		// cannot type, as their order puts two untyped ones first.
		refused, accepted bool
	}{
		{set: "c = c + $2", params: []string{"0.001"}},
		{set: "c = c + $2 + 1", params: []string{"0.5"}},
		{set: "c = c - $2", params: []string{"0.25"}},
		{set: "c = c + $2 + $3", params: []string{"0.5", "1e-8"}},
		{set: "c = $2 - $3 + c", params: []string{"0.5", "2"}, accepted: true},
		{set: "c = $2 + c - $3", params: []string{"0.5", "2"}},
		{set: "c = c + $2 * 2", params: []string{"0.5"}},
		{set: "c = c + $2 * 0.5", params: []string{"0.5"}},
		{set: "c = c + $2::numeric(10,4)", params: []string{"1.25"}},
		{set: "c = c + 0.001 + $2", params: []string{"3"}},
		{set: "c = greatest(c, $2)", params: []string{"0.125"}},
		{set: "c = least($2, c)", params: []string{"-0.125"}},
		{set: "c = $2", params: []string{"12.5"}},
		{set: "n = n + $2", params: []string{"0.5"}},
		{set: "n = n + $2", params: []string{"7"}},
		{set: "n = n + $2::numeric", params: []string{"2.0"}},
		{set: "n = n + $2::numeric", params: []string{"2.5"}, refused: true},
		{set: "n = greatest(n, $2::numeric)", params: []string{"3.00"}},
	}
	for _, tc := range cases {
		name := fmt.Sprintf("%s with %q", tc.set, tc.params)
		column := strings.Fields(tc.set)[0]
		args := []any{1}
		params := []Value{Int(1)}
		for _, p := range tc.params {
			args = append(args, p)
			params = append(params, String(p))
		}
		sql := "UPDATE amounts SET " + tc.set + " WHERE id = $1"
		var pg string
		tx, err := target.Admin().Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pgErr := tx.QueryRow(ctx, sql+" RETURNING "+column+"::text", args...).Scan(&pg)
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}

		st, err := Analyze(Input{SQL: sql, Line: 1}, cat)
		if err != nil || st.Class != Update || !st.Deferrable() {
			t.Fatalf("%s: %v %v %v", name, err, st.Class, st.Refusals)
		}
		v, kitErr := st.Update.Set[0].Eval(params)
		switch {
		case tc.refused && (kitErr == nil || pgErr != nil):
			t.Errorf("%s: kit %v (%v), PostgreSQL %q (%v): want the kit's refusal of what PostgreSQL computes",
				name, v, kitErr, pg, pgErr)
			continue
		case tc.accepted && (kitErr != nil || pgErr == nil):
			t.Errorf("%s: kit %v (%v), PostgreSQL %q (%v): want PostgreSQL's error only", name, v, kitErr, pg, pgErr)
			continue
		case tc.refused || tc.accepted:
			continue
		case (kitErr == nil) != (pgErr == nil):
			t.Errorf("%s: kit %v (%v), PostgreSQL %q (%v)", name, v, kitErr, pg, pgErr)
			continue
		}
		if kitErr != nil {
			continue
		}
		kit, err := v.Decimal()
		want, parseErr := ParseDecimal(pg)
		if err != nil || parseErr != nil || kit != want.Dec {
			t.Errorf("%s: kit %v (%v), PostgreSQL %q (%v)", name, v, err, pg, parseErr)
		}
	}
}

// BenchmarkEvalDecimalIncrement: the per-request evaluation of an increment of a
// numeric(20,8) column by a decimal parameter given as text (a pgbench double), and by a
// decimal literal added to an integer parameter.
func BenchmarkEvalDecimalIncrement(b *testing.B) {
	cost := &Column{Name: "c", TypeName: "numeric(20,8)", BaseTypeOID: oidNumeric, BaseTypmod: 20<<16 | 8 + 4}
	b.Run("text parameter", func(b *testing.B) {
		item := SetItem{Column: cost, Op: Increment, Value: Param{1}, Text: "c = c + $1"}
		params := []Value{String("0.001")}
		for b.Loop() {
			if _, err := item.Eval(params); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("literal", func(b *testing.B) {
		item := SetItem{Column: cost, Op: Increment, Text: "c = c + $1 * 0.001",
			Value: Arith{Op: '*', L: Param{1}, R: Const{Dec(100_000, 3)}}}
		params := []Value{Int(3)}
		for b.Loop() {
			if _, err := item.Eval(params); err != nil {
				b.Fatal(err)
			}
		}
	})
}

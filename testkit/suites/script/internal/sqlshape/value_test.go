package sqlshape

import (
	"math"
	"strings"
	"testing"
)

// idTextCatalog is a catalog of one table t (id bigint PRIMARY KEY, v text), for parsing
// expressions as the SET values of an UPDATE of it.
func idTextCatalog() *Catalog {
	return &Catalog{Schema: "s", Tables: map[string]*Table{"t": {
		Name: "t", Kind: Ordinary, PrimaryKey: []string{"id"},
		Columns: []*Column{
			{Name: "id", TypeOID: oidInt8, BaseTypeOID: oidInt8, BaseTypmod: -1, DeterministicCollation: true},
			{Name: "v", TypeOID: oidText, BaseTypeOID: oidText, BaseTypmod: -1, DeterministicCollation: true},
		},
	}}}
}

// TestClientValues parses each expression with PostgreSQL's grammar, as the SET value
// of an UPDATE, and evaluates it: the tree the caller evaluates, and its errors.
func TestClientValues(t *testing.T) {
	cat := idTextCatalog()
	cases := []struct {
		expr   string
		params []Value
		want   Value
		err    string
		text   string // Expr.String, when it differs from expr
	}{
		{expr: "$1", params: []Value{Int(4)}, want: Int(4)},
		{expr: "$2", params: []Value{Int(4)}, err: "$2 has no value (1 given)"},
		{expr: "'abc'", want: String("abc")},
		{expr: "NULL", want: Null},
		{expr: "true", want: Bool(true)},
		{expr: "-5", want: Int(-5)},
		{expr: "9223372036854775807", want: Int(math.MaxInt64)},
		{expr: "$1 + 1", params: []Value{Int(math.MaxInt64)}, err: "integer out of range"},
		{expr: "$1 - 1", params: []Value{Int(math.MinInt64)}, err: "integer out of range"},
		{expr: "$1 * $2", params: []Value{Int(math.MinInt64), Int(-1)}, err: "integer out of range"},
		{expr: "$1 * $2", params: []Value{Int(1 << 32), Int(1 << 31)}, err: "integer out of range"},
		{expr: "-$1", params: []Value{Int(math.MinInt64)}, err: "integer out of range"},
		{expr: "$1 + $2 * 3 - -$3", params: []Value{Int(1), Int(2), Int(4)}, want: Int(11)},
		{expr: "($1 - $2) * 3", params: []Value{Int(1), Int(2)}, want: Int(-3)},
		{expr: "$1 - ($2 - $3)", params: []Value{Int(1), Int(2), Int(3)}, want: Int(2)},
		{expr: "$1 + NULL", params: []Value{Int(1)}, want: Null},
		{expr: "$1 + 1", params: []Value{String(" 41 ")}, want: Int(42)},
		{expr: "$1 + 1", params: []Value{String("4.5")}, err: "'4.5' is not an integer"},
		{expr: "$1 + 1", params: []Value{Bool(true)}, err: "true is not an integer"},
		{expr: "$1::int2", params: []Value{Int(40000)}, err: "integer out of range", text: "$1::int2"},
		{expr: "$1::int4", params: []Value{String("-2147483648")}, want: Int(math.MinInt32)},
		{expr: "$1::integer", params: []Value{Int(math.MaxInt32 + 1)}, err: "integer out of range", text: "$1::int4"},
		{expr: "$1::bigint", params: []Value{String("12")}, want: Int(12), text: "$1::int8"},
		{expr: "$1::numeric", params: []Value{String("1.5")}, want: Dec(150_000_000, 1)},
		{expr: "$1::numeric", params: []Value{String("0.000000001")}, err: "'0.000000001' has more than 8 decimal places"},
		{expr: "$1::numeric", params: []Value{String("NaN")}, err: "'NaN' is not a finite number"},
		{expr: "$1::numeric", params: []Value{Bool(true)}, err: "true is not a number"},
		{expr: "$1::numeric(10,2)", params: []Value{Int(5)}, want: Dec(500_000_000, 2), text: "$1::numeric(10,2)"},
		{expr: "$1::numeric(10,2)", params: []Value{String("0.001")}, err: "0.001 has more decimal places than numeric(10,2) keeps"},
		{expr: "$1::numeric(10,2)", params: []Value{String("123456789.5")}, err: "does not fit numeric(10,2)"},
		{expr: "$1::numeric(4)", params: []Value{String("2.0")}, want: Int(2), text: "$1::numeric(4)"},
		{expr: "0.001", want: Dec(100_000, 3)},
		{expr: "-2.50", want: Dec(-250_000_000, 2)},
		{expr: "1e-3", want: Dec(100_000, 3), text: "0.001"},
		{expr: "1.50e1", want: Dec(1_500_000_000, 1), text: "15.0"},
		{expr: "$1 + 0.001", params: []Value{Int(1)}, want: Dec(100_100_000, 3)},
		{expr: "$1 + 0.001", params: []Value{String("0.5")}, want: Dec(50_100_000, 3)},
		{expr: "$1 - 0.5", params: []Value{Dec(25_000_000, 2)}, want: Dec(-25_000_000, 2)},
		{expr: "$1 * 0.001", params: []Value{Int(3)}, want: Dec(300_000, 3)},
		{expr: "0.5 * 0.25", want: Dec(12_500_000, 3)},
		{expr: "$1 * 0.0001", params: []Value{String("0.00001")}, err: "the result has more than 8 decimal places"},
		{expr: "$1 * 0.5", params: []Value{Int(math.MaxInt64)}, err: "the result is out of the kit's decimal range"},
		{expr: "$1 + 0.5", params: []Value{Int(92233720368)}, want: Dec(9_223_372_036_850_000_000, 1)},
		{expr: "$1 + 0.5", params: []Value{Int(92233720369)}, err: "out of the kit's decimal range"},
		{expr: "-$1", params: []Value{Dec(-5, 8)}, want: Dec(5, 8)},
		{expr: "$1::int4", params: []Value{Dec(-250_000_000, 1)}, want: Int(-3)},
		{expr: "$1::int2", params: []Value{Dec(49_999_999, 8)}, want: Int(0)},
		{expr: "$1::text", params: []Value{Dec(250_000_000, 2)}, want: String("2.50")},
		{expr: "'2.50'::numeric::text", want: String("2.50")},
		{expr: "$1::text", params: []Value{Int(7)}, want: String("7")},
		{expr: "$1::boolean", params: []Value{String("TRUE")}, want: Bool(true), text: "$1::bool"},
		{expr: "$1::uuid", params: []Value{String("x")}, want: String("x")},
		{expr: "'5'::int + 1", want: Int(6), text: "'5'::int4 + 1"},
	}
	for _, tc := range cases {
		st, err := Analyze(Input{SQL: "UPDATE t SET v = " + tc.expr + " WHERE id = 1", Line: 1}, cat)
		if err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		if st.Class != Update || st.Update.Set[0].Op != Assign {
			t.Fatalf("%s: %v %v", tc.expr, st.Class, st.Refusals)
		}
		e := st.Update.Set[0].Value
		text := tc.text
		if text == "" {
			text = tc.expr
		}
		if e.String() != text {
			t.Errorf("%s: rendered %s, want %s", tc.expr, e, text)
		}
		got, err := e.Eval(tc.params)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s with %v: %v, %v; want an error with %q", tc.expr, tc.params, got, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("%s with %v: %v, %v; want %v", tc.expr, tc.params, got, err, tc.want)
		}
	}
}

func TestColumnCompare(t *testing.T) {
	col := func(oid uint32, typmod int32) *Column {
		return &Column{Name: "c", TypeName: "t", TypeOID: oid, BaseTypeOID: oid, BaseTypmod: typmod}
	}
	numeric52 := int32(5<<16|2) + 4
	numeric208 := int32(20<<16|8) + 4
	cases := []struct {
		col  *Column
		in   Value
		want Value
		err  string
	}{
		{col(oidInt4, -1), String("7"), Int(7), ""},
		{col(oidInt2, -1), Int(32768), Null, "out of range"},
		{col(oidNumeric, numeric52), Int(999), Int(999), ""},
		{col(oidNumeric, numeric52), Int(-1000), Null, "out of range"},
		{col(oidText, -1), Int(-3), String("-3"), ""},
		{col(oidUUID, -1), String("A0EEBC999C0B4EF8BB6D6BB9BD380A11"), String("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), ""},
		{col(oidUUID, -1), String("a0eebc99-9c0b4ef8-bb6d6bb9-bd380a11"), String("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), ""},
		{col(oidUUID, -1), String("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1"), Null, "not a uuid"},
		{col(oidUUID, -1), String("a0ee-bc99-9c0b-4ef8-bb6d-6bb9bd380a11-"), Null, "not a uuid"},
		{col(oidBool, -1), String("f"), Bool(false), ""},
		{col(oidNumeric, numeric208), String("0.001"), Dec(100_000, 3), ""},
		{col(oidNumeric, numeric208), Dec(250_000_000, 2), Dec(250_000_000, 1), ""},
		{col(oidNumeric, numeric208), String(" 2.00 "), Int(2), ""},
		{col(oidNumeric, numeric208), String("0.000000001"), Null, "more than 8 decimal places"},
		{col(oidNumeric, numeric208), String("1/3"), Null, "is not a number"},
		{col(oidNumeric, numeric52), String("0.001"), Null, "0.001 has more decimal places than t keeps: it would round"},
		{col(oidNumeric, numeric52), Dec(99_999_000_000, 2), Dec(99_999_000_000, 2), ""},
		{col(oidNumeric, numeric52), Dec(-100_050_000_000, 1), Null, "out of range"},
		{col(oidNumeric, -1), String("-1e-3"), Dec(-100_000, 3), ""},
		{col(oidInt4, -1), Dec(50_000_000, 1), Null, "0.5 is a decimal, which t would round"},
		{col(oidInt4, -1), Dec(200_000_000, 1), Int(2), ""},
		{col(oidInt4, -1), String("0.5"), Null, "'0.5' is not an integer"},
		{col(oidText, -1), Dec(250_000_000, 2), String("2.50"), ""},
		{col(oidInt8, -1), Null, Null, ""},
	}
	for _, tc := range cases {
		got, err := tc.col.Compare(tc.in)
		if (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) || got != tc.want {
			t.Errorf("Compare(%v) on oid %d: %v, %v; want %v, %q", tc.in, tc.col.BaseTypeOID, got, err, tc.want, tc.err)
		}
	}
}

func TestKeyable(t *testing.T) {
	cases := []struct {
		col  Column
		want string
	}{
		{Column{BaseTypeOID: oidInt4}, ""},
		{Column{BaseTypeOID: oidUUID}, ""},
		{Column{BaseTypeOID: oidText, DeterministicCollation: true}, ""},
		{Column{BaseTypeOID: oidVarchar, DeterministicCollation: false}, "has a nondeterministic collation"},
		{Column{BaseTypeOID: oidBpchar, TypeName: "character(8)", DeterministicCollation: true}, "is character(8)"},
		{Column{BaseTypeOID: oidFloat8, TypeName: "double precision"}, "is double precision"},
	}
	for _, tc := range cases {
		got := tc.col.keyable()
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("keyable(%d): %q, want %q", tc.col.BaseTypeOID, got, tc.want)
		}
	}
}

func TestSetItemEval(t *testing.T) {
	int4 := &Column{Name: "n", TypeName: "integer", BaseTypeOID: oidInt4, BaseTypmod: -1, NotNull: true}
	cost := &Column{Name: "c", TypeName: "numeric(20,8)", BaseTypeOID: oidNumeric, BaseTypmod: 20<<16 | 8 + 4}
	// The deltas of c = c + $1 + 1 and c = c + $1 * 2 (one term: the product's operands
	// are typed on their own).
	sum := Arith{Op: '+', L: Param{1}, R: Const{Int(1)}}
	product := Arith{Op: '*', L: Param{1}, R: Const{Int(2)}}
	cases := []struct {
		item   SetItem
		params []Value
		want   Value
		err    string
	}{
		{SetItem{Column: int4, Op: Increment, Value: Param{1}, Text: "n = n + $1"}, []Value{Int(1 << 31)}, Null, "out of range for integer"},
		{SetItem{Column: int4, Op: Increment, Value: Param{1}, Text: "n = n + $1"}, []Value{Null}, Null, "the increment is NULL"},
		{SetItem{Column: int4, Op: Greatest, Value: Param{1}, Text: "n = greatest(n, $1)"}, []Value{Null}, Null, ""},
		{SetItem{Column: int4, Op: Assign, Value: Param{1}, Text: "n = $1"}, []Value{Null}, Null, "NULL into NOT NULL column n"},
		{SetItem{Column: int4, Op: Assign, Value: Param{1}, Text: "n = $1"}, []Value{String("12")}, Int(12), ""},
		{SetItem{Column: int4, Op: ServerTime, ServerFunc: "now()", Text: "n = now()"}, nil, Null, "the server computes"},
		{SetItem{Column: int4, Op: Increment, Value: Param{1}, Text: "n = n + $1"}, []Value{String("0.5")}, Null, "'0.5' is not an integer"},
		{SetItem{Column: int4, Op: Increment, Value: Param{1}, Text: "n = n + $1"}, []Value{Dec(50_000_000, 1)}, Null, "0.5 is a decimal, which integer would round"},
		{SetItem{Column: int4, Op: Increment, Value: sum, Text: "n = n + $1 + 1"}, []Value{String("0.5")}, Null, "'0.5' is not an integer"},
		{SetItem{Column: cost, Op: Increment, Value: Param{1}, Text: "c = c + $1"}, []Value{String("0.001")}, Dec(100_000, 3), ""},
		{SetItem{Column: cost, Op: Increment, Value: Param{1}, Text: "c = c + $1"}, []Value{String("1e-05")}, Dec(1_000, 5), ""},
		{SetItem{Column: cost, Op: Increment, Value: Param{1}, Text: "c = c + $1"}, []Value{String("1e-09")}, Null, "more than 8 decimal places"},
		{SetItem{Column: cost, Op: Increment, Value: Param{1}, Text: "c = c + $1"}, []Value{Int(3)}, Int(3), ""},
		{SetItem{Column: cost, Op: Increment, Value: sum, Text: "c = c + $1 + 1"}, []Value{String("0.5")}, Dec(150_000_000, 1), ""},
		{SetItem{Column: cost, Op: Increment, Value: Neg{Param{1}}, Text: "c = c - $1"}, []Value{String("0.25")}, Dec(-25_000_000, 2), ""},
		{SetItem{Column: cost, Op: Increment, Value: product, Text: "c = c + $1 * 2"}, []Value{String("0.5")}, Null, "'0.5' is not an integer"},
		{SetItem{Column: cost, Op: Greatest, Value: sum, Text: "c = greatest(c, $1 + 1)"}, []Value{String("0.5")}, Null, "'0.5' is not an integer"},
		{SetItem{Column: cost, Op: Greatest, Value: Param{1}, Text: "c = greatest(c, $1)"}, []Value{String("0.5")}, Dec(50_000_000, 1), ""},
		{SetItem{Column: cost, Op: Assign, Value: Param{1}, Text: "c = $1"}, []Value{String("0.5")}, Dec(50_000_000, 1), ""},
	}
	for _, tc := range cases {
		got, err := tc.item.Eval(tc.params)
		if (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) || got != tc.want {
			t.Errorf("%s with %v: %v, %v; want %v, %q", tc.item.Text, tc.params, got, err, tc.want, tc.err)
		}
	}
}

func BenchmarkAnalyzeUpdate(b *testing.B) {
	cat := &Catalog{Schema: "s", Tables: map[string]*Table{"pgbench_branches": {
		Name: "pgbench_branches", Kind: Ordinary, PrimaryKey: []string{"bid"},
		Columns: []*Column{
			{Name: "bid", TypeOID: oidInt4, BaseTypeOID: oidInt4, BaseTypmod: -1},
			{Name: "bbalance", TypeOID: oidInt4, BaseTypeOID: oidInt4, BaseTypmod: -1},
		},
	}}}
	in := Input{SQL: "UPDATE pgbench_branches SET bbalance = bbalance + $1 WHERE bid = $2", Line: 1,
		Params: []string{"delta", "bid"}}
	for b.Loop() {
		if _, err := Analyze(in, cat); err != nil {
			b.Fatal(err)
		}
	}
}

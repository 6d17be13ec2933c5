package sqldb

import (
	"reflect"
	"strings"
	"testing"
)

func TestRebind(t *testing.T) {
	for _, tc := range []struct {
		name     string
		sql      string
		args     []any
		want     string
		wantArgs []any
		err      string
	}{
		{name: "in order", sql: "UPDATE t SET n = n + $1 WHERE id = $2", args: []any{1, 2},
			want: "UPDATE t SET n = n + ? WHERE id = ?", wantArgs: []any{1, 2}},
		{name: "repeated", sql: "SELECT $1, $2, $1", args: []any{"a", "b"},
			want: "SELECT ?, ?, ?", wantArgs: []any{"a", "b", "a"}},
		{name: "reordered", sql: "SELECT $2, $1", args: []any{"a", "b"},
			want: "SELECT ?, ?", wantArgs: []any{"b", "a"}},
		{name: "$10 is not $1", sql: "SELECT $1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$1", args: []any{1, 2, 3, 4, 5, 6, 7, 8, 9, 10},
			want: "SELECT ?,?,?,?,?,?,?,?,?,?,?", wantArgs: []any{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1}},
		{name: "single quotes", sql: "SELECT '$1', $1, 'it''s $2', 'a\\'$2'", args: []any{7},
			want: "SELECT '$1', ?, 'it''s $2', 'a\\'$2'", wantArgs: []any{7}},
		{name: "double quotes", sql: `SELECT "$1 \" $2", $1`, args: []any{7},
			want: `SELECT "$1 \" $2", ?`, wantArgs: []any{7}},
		{name: "backquoted names", sql: "SELECT `a$1`, `x``$2`, $1", args: []any{7},
			want: "SELECT `a$1`, `x``$2`, ?", wantArgs: []any{7}},
		{name: "line comments", sql: "SELECT $1 -- $2\n, $2 # $3\n", args: []any{1, 2},
			want: "SELECT ? -- $2\n, ? # $3\n", wantArgs: []any{1, 2}},
		{name: "two minuses without a space are not a comment", sql: "SELECT $1--$2", args: []any{1, 2},
			want: "SELECT ?--?", wantArgs: []any{1, 2}},
		{name: "block comment", sql: "SELECT /* $2 ? */ $1", args: []any{1},
			want: "SELECT /* $2 ? */ ?", wantArgs: []any{1}},
		{name: "a $ inside a name", sql: "SELECT a$1, $1", args: []any{1},
			want: "SELECT a$1, ?", wantArgs: []any{1}},
		{name: "written for MySQL", sql: "SELECT ?, '$1'", args: []any{1},
			want: "SELECT ?, '$1'", wantArgs: []any{1}},
		{name: "no placeholders", sql: "SELECT 1", want: "SELECT 1"},
		{name: "a ? in a string beside $n", sql: "SELECT 'why?', $1", args: []any{1},
			want: "SELECT 'why?', ?", wantArgs: []any{1}},
		{name: "too few arguments", sql: "SELECT $1, $2", args: []any{1}, err: "takes 2 arguments"},
		{name: "too many arguments", sql: "SELECT $1", args: []any{1, 2}, err: "takes 1 arguments"},
		{name: "a gap", sql: "SELECT $1, $3", args: []any{1, 2, 3}, err: "takes $3 but not $2"},
		{name: "mixed", sql: "SELECT $1, ?", args: []any{1, 2}, err: "mixes $n and ?"},
		{name: "$0", sql: "SELECT $0", err: "out of range"},
		{name: "open comment", sql: "SELECT $1 /* no end", args: []any{1}, err: "not closed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for range 2 { // the second time from the cache
				got, args, err := rebind(tc.sql, tc.args)
				if tc.err != "" {
					if err == nil || !strings.Contains(err.Error(), tc.err) {
						t.Fatalf("rebind(%q) = %q, %v; want an error with %q", tc.sql, got, err, tc.err)
					}
					continue
				}
				if err != nil || got != tc.want || !reflect.DeepEqual(args, tc.wantArgs) {
					t.Fatalf("rebind(%q) = %q %v, %v; want %q %v", tc.sql, got, args, err, tc.want, tc.wantArgs)
				}
			}
		})
	}
}

// TestRebindInOrderKeepsTheArguments: a statement whose $n's come once each, in order, sends
// the caller's arguments as they are (no copy per statement).
func TestRebindInOrderKeepsTheArguments(t *testing.T) {
	args := []any{1, 2}
	sql := "UPDATE t SET a = $1 WHERE id = $2"
	if allocs := testing.AllocsPerRun(100, func() {
		_, got, _ := rebind(sql, args)
		if &got[0] != &args[0] {
			t.Fatal("the arguments were copied")
		}
	}); allocs != 0 {
		t.Errorf("%v allocations per statement in order", allocs)
	}
}

func TestQuoteIdent(t *testing.T) {
	for _, tc := range []struct {
		d     Dialect
		parts []string
		want  string
	}{
		{Postgres, []string{"t"}, `"t"`},
		{Postgres, []string{"s", `a"b`}, `"s"."a""b"`},
		{Postgres, []string{"a\x00b"}, `"ab"`},
		{MySQL, []string{"s", "a`b"}, "`s`.`a``b`"},
	} {
		if got := tc.d.QuoteIdent(tc.parts...); got != tc.want {
			t.Errorf("%s.QuoteIdent(%q) = %s, want %s", tc.d, tc.parts, got, tc.want)
		}
	}
}

// TestPlaceholders: what a caller parsing a statement as MySQL reads it gets: the ?s, and
// for each the argument it takes.
func TestPlaceholders(t *testing.T) {
	for _, tc := range []struct {
		sql, want string
		order     []int
		err       string
	}{
		{sql: "UPDATE t SET a = a + $1 WHERE id = $2", want: "UPDATE t SET a = a + ? WHERE id = ?", order: []int{0, 1}},
		{sql: "SELECT $2, `$1`, '$1', $1, $2", want: "SELECT ?, `$1`, '$1', ?, ?", order: []int{1, 0, 1}},
		{sql: "SELECT ?", want: "SELECT ?"},
		{sql: "SELECT $1, ?", err: "mixes"},
	} {
		got, order, err := Placeholders(tc.sql)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Placeholders(%q): %v, want an error with %q", tc.sql, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want || !reflect.DeepEqual(order, tc.order) {
			t.Errorf("Placeholders(%q) = %q %v, %v; want %q %v", tc.sql, got, order, err, tc.want, tc.order)
		}
	}
}

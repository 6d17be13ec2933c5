package pgscript

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(text)
}

// The scripts pgbench --show-script prints parse unchanged: each SQL line one command, its
// line number kept, its variables turned into placeholders in order.
func TestBuiltinScriptsParseUnchanged(t *testing.T) {
	type want struct {
		line   int
		sql    string
		params []string
	}
	tpcb := []want{
		{6, "BEGIN", nil},
		{7, "UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2", []string{"delta", "aid"}},
		{8, "SELECT abalance FROM pgbench_accounts WHERE aid = $1", []string{"aid"}},
		{9, "UPDATE pgbench_tellers SET tbalance = tbalance + $1 WHERE tid = $2", []string{"delta", "tid"}},
		{10, "UPDATE pgbench_branches SET bbalance = bbalance + $1 WHERE bid = $2", []string{"delta", "bid"}},
		{11, "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP)", []string{"tid", "bid", "aid", "delta"}},
		{12, "END", nil},
	}
	for name, commands := range map[string][]want{
		"tpcb-like.sql":     tpcb,
		"simple-update.sql": {tpcb[0], tpcb[1], tpcb[2], {9, tpcb[5].sql, tpcb[5].params}, {10, "END", nil}},
		"select-only.sql":   {{3, "SELECT abalance FROM pgbench_accounts WHERE aid = $1", []string{"aid"}}},
	} {
		text := readTestdata(t, name)
		s, err := Parse(text)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		lines := strings.Split(text, "\n")
		got := s.Commands()
		if len(got) != len(commands) {
			t.Fatalf("%s: %d commands, want %d", name, len(got), len(commands))
		}
		for i, w := range commands {
			c := got[i]
			if c.Index != i || c.Line != w.line || c.SQL != w.sql || !reflect.DeepEqual(c.Params, w.params) || c.Conditional {
				t.Errorf("%s command %d: line %d %q %v, want line %d %q %v", name, i, c.Line, c.SQL, c.Params, w.line, w.sql, w.params)
			}
			if c.Text+";" != lines[c.Line-1] {
				t.Errorf("%s command %d: text %q is not line %d %q without its semicolon", name, i, c.Text, c.Line, lines[c.Line-1])
			}
		}
		if !s.Uses(VarScale) {
			t.Errorf("%s: Uses(scale) is false", name)
		}
	}
}

func TestSQLCommandsSplitAsPgbench(t *testing.T) {
	for _, c := range []struct {
		name, script string
		want         []Command
	}{
		{"two on a line", "SELECT 1; SELECT 2;", []Command{{Line: 1, Text: "SELECT 1", SQL: "SELECT 1"}, {Line: 1, Text: "SELECT 2", SQL: "SELECT 2"}}},
		{"over lines", "\n\nUPDATE t\n  SET c = c + :d\n  WHERE k = :k;\n", []Command{{Line: 3, Text: "UPDATE t\n  SET c = c + :d\n  WHERE k = :k", SQL: "UPDATE t\n  SET c = c + $1\n  WHERE k = $2", Params: []string{"d", "k"}}}},
		{"leading comments skipped", "-- one\n  /* two */ SELECT 1;", []Command{{Line: 2, Text: "SELECT 1", SQL: "SELECT 1"}}},
		{"comment-only lines", "-- nothing\n\n-- here;\n", nil},
		{"empty statements", ";;\n ; SELECT 1;;", []Command{{Line: 2, Text: "SELECT 1", SQL: "SELECT 1"}}},
		{"no final semicolon", "SELECT :x", []Command{{Line: 1, Text: "SELECT :x", SQL: "SELECT $1", Params: []string{"x"}}}},
		{"casts are not variables", "SELECT :x::int, 1::bigint, a::text", []Command{{Line: 1, Text: "SELECT :x::int, 1::bigint, a::text", SQL: "SELECT $1::int, 1::bigint, a::text", Params: []string{"x"}}}},
		{"a variable twice gets two placeholders", "SELECT :a + :a", []Command{{Line: 1, Text: "SELECT :a + :a", SQL: "SELECT $1 + $2", Params: []string{"a", "a"}}}},
		{"semicolon and variable in quotes", "SELECT ';:no', \"a;:no\", $$;:no$$, $t$;$$:no$t$, E'\\';:no';", []Command{{Line: 1, Text: "SELECT ';:no', \"a;:no\", $$;:no$$, $t$;$$:no$t$, E'\\';:no'", SQL: "SELECT ';:no', \"a;:no\", $$;:no$$, $t$;$$:no$t$, E'\\';:no'"}}},
		{"standard string: backslash is not an escape", "SELECT 'a\\'; SELECT 2;", []Command{{Line: 1, Text: "SELECT 'a\\'", SQL: "SELECT 'a\\'"}, {Line: 1, Text: "SELECT 2", SQL: "SELECT 2"}}},
		{"semicolon and variable in comments", "SELECT 1 -- ;:no\n + /* ; /* :no */ ; */ :y;", []Command{{Line: 1, Text: "SELECT 1 -- ;:no\n + /* ; /* :no */ ; */ :y", SQL: "SELECT 1 -- ;:no\n + /* ; /* :no */ ; */ $1", Params: []string{"y"}}}},
		{"semicolon in parentheses", "SELECT (1;\n2); SELECT 3", []Command{{Line: 1, Text: "SELECT (1;\n2)", SQL: "SELECT (1;\n2)"}, {Line: 2, Text: "SELECT 3", SQL: "SELECT 3"}}},
		{"dollar in identifiers and parameters", "SELECT a$b$ + $1 FROM t$", []Command{{Line: 1, Text: "SELECT a$b$ + $1 FROM t$", SQL: "SELECT a$b$ + $1 FROM t$"}}},
		{"array slice and names with digits", "SELECT a[1:2], a[:lo : :hi], :v2", []Command{{Line: 1, Text: "SELECT a[1:2], a[:lo : :hi], :v2", SQL: "SELECT a[1:2], a[$1 : $2], $3", Params: []string{"lo", "hi", "v2"}}}},
		{"a meta command ends a command", "SELECT 1\n\\set x 1\nSELECT :x", []Command{{Line: 1, Text: "SELECT 1", SQL: "SELECT 1"}, {Line: 3, Text: "SELECT :x", SQL: "SELECT $1", Params: []string{"x"}}}},
	} {
		s, err := Parse(c.script + "\n\\set unused 1")
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		var got []Command
		for _, cmd := range s.Commands() {
			got = append(got, Command{Line: cmd.Line, Text: cmd.Text, SQL: cmd.SQL, Params: cmd.Params})
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %#v\nwant %#v", c.name, got, c.want)
		}
	}
}

func TestMetaCommandsParse(t *testing.T) {
	s, err := Parse(`\set a 1 + \
  2
\SET b :a * 2
\if :a > 2
  SELECT 1;
\elif :b
  SELECT 2;
\else
  \sleep 10 ms
\endif
\sleep :a us
\sleep 3s
\sleep 2
SELECT 3;`)
	if err != nil {
		t.Fatal(err)
	}
	var lines []int
	for _, c := range s.commands {
		lines = append(lines, c.line)
	}
	if want := []int{1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}; !reflect.DeepEqual(lines, want) {
		t.Errorf("command lines %v, want %v", lines, want)
	}
	cmds := s.Commands()
	if !cmds[0].Conditional || !cmds[1].Conditional || cmds[2].Conditional {
		t.Errorf("conditional flags %v %v %v, want true true false", cmds[0].Conditional, cmds[1].Conditional, cmds[2].Conditional)
	}
	sleeps := []sleepArg{}
	for _, c := range s.commands {
		if c.sql == nil && c.meta == metaSleep {
			sleeps = append(sleeps, c.sleep)
		}
	}
	want := []sleepArg{{micros: 10, unit: 1000}, {variable: "a", unit: 1}, {micros: 3, unit: 1_000_000}, {micros: 2, unit: 1_000_000}}
	if !reflect.DeepEqual(sleeps, want) {
		t.Errorf("sleeps %+v, want %+v", sleeps, want)
	}
}

// Each refusal names its line and says why, on one line.
func TestParseRefuses(t *testing.T) {
	for _, c := range []struct {
		script string
		line   int
		says   string
	}{
		{"SELECT 1;\n\\setshell x echo 1", 2, `\setshell is not supported`},
		{"\\shell echo 1", 1, `\shell is not supported`},
		{"SELECT 1 AS x \\gset", 1, `\gset is not supported: it stores a query's result`},
		{"SELECT 1 AS x\n\\aset", 2, `\aset is not supported`},
		{"\\startpipeline\nSELECT 1;\n\\endpipeline", 1, `pipelines are not supported`},
		{"SELECT 1;\n\n\\endpipeline", 3, `pipelines are not supported`},
		{"\\frobnicate", 1, `invalid command \frobnicate`},
		{"SELECT 1 \\; SELECT 2;", 1, `several statements in one command`},
		{"SELECT 1;\nSELECT 'abc;\n", 2, "unterminated quoted string"},
		{"SELECT \"abc;\n", 1, "unterminated quoted identifier"},
		{"SELECT $x$ abc;\n", 1, "unterminated dollar-quoted string"},
		{"SELECT 1 /* /* */;\n", 1, "unterminated /* comment"},
		{"\\set x 1\n\\elif :x", 2, `\elif without matching \if`},
		{"\\if 1\n\\else\n\\elif 2\n\\endif", 3, `\elif after \else`},
		{"\\if 1\n\\else\n\\else\n\\endif", 3, `\else after \else`},
		{"\\else", 1, `\else without matching \if`},
		{"SELECT 1;\n\\endif", 2, `\endif without matching \if`},
		{"\\if 1\nSELECT 1;\n\\if 2\n\\endif", 1, `\if without matching \endif`},
		{"\\endif extra", 1, `unexpected argument`},
		{"\\set", 1, `\set: missing variable name`},
		{"\\set x", 1, `\set x: missing expression`},
		{"\\set 1x 2", 1, `invalid variable name "1x"`},
		{"\\set x 1 +\n", 1, `\set x: syntax error: unexpected end of expression`},
		{"\n\\set x random(1, 2, 3)", 2, `random takes 2 arguments, not 3`},
		{"\\set x nosuch(1)", 1, `unknown function "nosuch"`},
		{"\\if\n\\endif", 1, `\if: missing expression`},
		{"\\sleep", 1, `\sleep: missing argument`},
		{"\\sleep 1 ms extra", 1, `\sleep: too many arguments`},
		{"\\sleep 1.5 s", 1, `invalid sleep time "1.5", must be an integer`},
		{"\\sleep 1 min", 1, `unrecognized time unit "min"`},
		{"\\sleep 1.5", 1, `unrecognized time unit ".5"`},
		{"-- only a comment\n", 2, "the script has no command"},
	} {
		_, err := Parse(c.script)
		var se *Error
		if !errors.As(err, &se) {
			t.Errorf("%q: error %v, want a line error", c.script, err)
			continue
		}
		if se.Line != c.line || !strings.Contains(se.Msg, c.says) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %q, want line %d saying %q", c.script, err, c.line, c.says)
		}
	}
}

func TestParseDefine(t *testing.T) {
	for arg, want := range map[string]Define{"scale=10": {"scale", "10"}, "a=b=c": {"a", "b=c"}, "empty=": {"empty", ""}} {
		got, err := ParseDefine(arg)
		if err != nil || got != want {
			t.Errorf("ParseDefine(%q) = %+v, %v, want %+v", arg, got, err, want)
		}
	}
	for _, arg := range []string{"noequals", "=1", "1a=2", "a-b=3"} {
		if _, err := ParseDefine(arg); err == nil {
			t.Errorf("ParseDefine(%q) accepted", arg)
		}
	}
}

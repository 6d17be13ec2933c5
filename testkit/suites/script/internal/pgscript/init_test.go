package pgscript

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/serverproctest"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/testkit/servers/pgserver"
)

func TestInitStatementsSplitAndSubstitute(t *testing.T) {
	vars := map[string]string{"scale": "2", "word": "it's", "ident": `a"b`, "neg": "-3", "ratio": "0.99", "back": `a\b`, "kind": "unlogged"}
	for _, c := range []struct {
		name, text string
		want       []InitStatement
	}{
		{"statements over lines", "\n-- a comment; with a semicolon\nCREATE TABLE t (a int);\nINSERT INTO t\n  SELECT g FROM generate_series(1, 10 * :scale) g;",
			[]InitStatement{{3, "CREATE TABLE t (a int)"}, {4, "INSERT INTO t\n  SELECT g FROM generate_series(1, 10 * 2) g"}}},
		{"no final semicolon, empty statements", ";; SELECT :ratio", []InitStatement{{1, "SELECT 0.99"}}},
		{"quoted forms", "SELECT :'word', :\"ident\", :'back'", []InitStatement{{1, `SELECT 'it''s', "a""b", E'a\\b'`}}},
		{"a plain word", "CREATE :kind TABLE u ()", []InitStatement{{1, "CREATE unlogged TABLE u ()"}}},
		{"nothing inside quotes, dollar quotes or comments", "SELECT ':scale', \":scale\", $$ :scale; $$, $f$ :scale $f$, E'\\':scale' /* :scale; */ -- :scale;\n, 1",
			[]InitStatement{{1, "SELECT ':scale', \":scale\", $$ :scale; $$, $f$ :scale $f$, E'\\':scale' /* :scale; */ -- :scale;\n, 1"}}},
		{"casts and parentheses", "SELECT :scale::int, (1; 2);", []InitStatement{{1, "SELECT 2::int, (1; 2)"}}},
		{"a negative value after a minus", "SELECT 1-:neg, 1 - :neg", []InitStatement{{1, "SELECT 1- -3, 1 - -3"}}},
		{"colons that are not variables", "SELECT (ARRAY[1,2,3])[1:2], :'', : scale", []InitStatement{{1, "SELECT (ARRAY[1,2,3])[1:2], :'', : scale"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseInit(c.text, vars)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestParseInitRefuses(t *testing.T) {
	vars := map[string]string{"scale": "1", "words": "two words", "semi": "1; DROP TABLE t", "empty": ""}
	for _, c := range []struct {
		text string
		line int
		msg  string
	}{
		{"SELECT 1;\nSELECT\n  :nope;", 3, ":nope is not set (give it with -D nope=VALUE)"},
		{"SELECT :'nope'", 1, ":nope is not set"},
		{"SELECT :words", 1, `:words is "two words", neither a number nor a plain word: write :'words' for a string literal`},
		{"SELECT :semi", 1, "neither a number nor a plain word"},
		{"SELECT :empty", 1, "neither a number nor a plain word"},
		{"SELECT 1;\n\\set x 1\n", 2, `\set: an init file is plain SQL`},
		{"SELECT 1 \\gset", 1, `\gset: an init file is plain SQL`},
		{"SELECT 'open", 1, "unterminated quoted string"},
		{"SELECT :'scale", 1, "unterminated quoted string"},
		{"SELECT $$ open", 1, "unterminated dollar-quoted string"},
		{"\n/* open", 2, "unterminated /* comment"},
		{"-- only a comment;\n\n", 3, "the init file has no SQL statement"},
	} {
		_, err := ParseInit(c.text, vars)
		var e *Error
		if !errors.As(err, &e) || e.Line != c.line || !strings.Contains(e.Msg, c.msg) {
			t.Errorf("%q: got %v, want line %d: ...%s...", c.text, err, c.line, c.msg)
		}
	}
}

// The statements of an init file are the queries psql sends for the same file and -v values
// (logged with -L): split at the same semicolons, with the same text substituted.
func TestInitStatementsAgreeWithPsql(t *testing.T) {
	bins, err := pgserver.FindBinaries("")
	if err != nil {
		serverproctest.Missing(t, "no PostgreSQL binaries, so no psql to compare with: %v", err)
	}
	psql := filepath.Join(bins.BinDir, "psql")
	if _, err := os.Stat(psql); err != nil {
		serverproctest.Missing(t, "psql is missing next to postgres (%s): the comparison with psql needs it", psql)
	}
	vars := map[string]string{"n": "3", "word": "it's", "ident": "col", "neg": "-2"}
	text := `-- a leading comment; with a semicolon
CREATE TEMP TABLE init_t (a int, b text DEFAULT ':n', :"ident" text); -- after it
INSERT INTO init_t SELECT g, :'word', 'x' FROM generate_series(1, :n) g
  WHERE g > :neg;   -- a comment ; inside
/* block ; */ SELECT $$ :n ; $$, E'\';:n', 1::int, (ARRAY[1, 2])[1:2], (SELECT 1; );
SELECT :n * 2 FROM init_t
  ;
DO $body$ BEGIN PERFORM 1; END $body$;
SELECT count(*) FROM init_t`
	ours, err := ParseInit(text, vars)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file, log := filepath.Join(dir, "init.sql"), filepath.Join(dir, "psql.log")
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"-X", "-q", "-L", log, "-f", file}
	for name, value := range vars {
		args = append(args, "-v", name+"="+value)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// psql goes on after a statement fails (the one with a semicolon inside parentheses does).
	out, err := exec.CommandContext(ctx, psql, append(args, testdb.Server(t).DSN())...).CombinedOutput()
	if err != nil {
		t.Fatalf("psql: %v\n%s", err, out)
	}
	logged, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	query := regexp.MustCompile(`(?s)\*{9} QUERY \*{10}\n(.*?)\n\*{26}\n`)
	normal := func(sql string) string { return strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(sql), ";")) }
	// psql sends a /* comment */ before a statement with it; ParseInit leaves it out, as
	// pgbench does.
	leadingComment := regexp.MustCompile(`^(?s)/\*.*?\*/\s*`)
	var theirs, mine []string
	for _, m := range query.FindAllStringSubmatch(string(logged), -1) {
		theirs = append(theirs, normal(leadingComment.ReplaceAllString(m[1], "")))
	}
	for _, s := range ours {
		mine = append(mine, normal(s.SQL))
	}
	if strings.Join(mine, "\n--\n") != strings.Join(theirs, "\n--\n") {
		t.Errorf("statements differ\nhere:\n%s\npsql:\n%s\n(psql's output:\n%s)", strings.Join(mine, "\n--\n"), strings.Join(theirs, "\n--\n"), out)
	}
}

package pgscript

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/serverproctest"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/testkit/servers/pgserver"
)

func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }

// pgbenchDefines are the -D values of the comparison with pgbench: the same for both.
var pgbenchDefines = []string{
	"default_seed=5432", "n=7", "d=2.5", "s=hello", "b=yes", "t=t", "off=off", "nul=null",
	"big=9223372036854775807", "neg=-3", "spaced= 42", "dx=1e3", "zero=0", "lead=007",
}

// pgbenchSeed is --random-seed for pgbench and Env.Seed for the kit: :random_seed.
const pgbenchSeed = 1234

// deterministicExpressions have the same value under pgbench and here: arithmetic and its
// int/double rules, precedence, NULL and boolean logic, CASE, the functions but the random
// ones, -D values and built-ins, and how doubles print.
var deterministicExpressions = []string{
	// arithmetic, int and double
	"1 + 2", "7 / 2", "-7 / 2", "7 % 3", "-7 % 3", "7 % -3", "7.0 / 2", "1 + 2.5", "5 - 3.0",
	"2 * 3", "2.5 * 2", "1 / 3.0", "5.5 % 2", "4.5 % 3", "-5 / -1", "9223372036854775807 % -1",
	"-9223372036854775808", "-9223372036854775807 - 1", "- -3", "+3", "+ 2.5", "-(2)", "1 - - 1",
	"1.0 / 0", "-1.0 / 0", "1e308 * 10", "0.0 / 0", "sqrt(-1)", "ln(0)", "ln(-1)", "0.1 + 0.2", "1e-5", ".5", "1.", "1e3", "2.5E-3",
	"100000000000000000000.0", "123456789012345678.0", "0.00001", "1.0 / 3", "12345678901234567890.0",
	// precedence and associativity
	"2 + 3 * 4", "(2 + 3) * 4", "2 * 3 % 4", "10 - 2 - 3", "100 / 10 / 5", "-2 * 3", "1 + 2 < 4",
	"1 | 2 + 1", "~1", "~ 1 + 2", "~1 | 2", "~ 2 * 3", "1 << 2 + 1", "8 >> 1 & 3", "1 # 3", "5 & 3",
	"5 | 3", "1 << 62", "1 << 63", "1 << 64", "1 << -1", "-16 >> 2", "1 >> 64", "~ 1.5", "3.7 & 1",
	"- 2 * - 3", "2 - -2", "1 + 2 = 3", "NOT 1 = 2", "- ~ 1 + 2", "~ - 1",
	// comparisons
	"1 = 1", "1 = 1.0", "1 <> 2", "1 != 1", "2 < 1", "2 > 1", "1 <= 1", "1 >= 2", "0.1 + 0.2 = 0.3",
	"1 = NULL", "NULL < 1", "2.5 > 2",
	// logic and NULL
	"true", "FALSE", "true AND false", "true OR false", "NULL AND false", "false AND NULL",
	"true AND NULL", "NULL OR true", "true OR NULL", "false OR NULL", "not false", "NOT NULL",
	"NOT TRUE AND FALSE", "NOT (TRUE AND FALSE)", "true AND false OR true", "true OR false AND false",
	"NULL", "null IS NULL",
	// IS
	"1 IS NULL", "NULL IS NULL", "NULL IS NOT NULL", "1 ISNULL", "1 NOTNULL", "NULL NOTNULL",
	"NULL ISNULL", "true IS TRUE", "false IS TRUE", "1 IS TRUE", "false IS NOT TRUE",
	"NULL IS FALSE", "NULL IS NOT FALSE", "1 = 1 IS TRUE", "NOT 1 IS NULL", "1 < 2 IS TRUE",
	"1 IS NULL IS NULL",
	// CASE
	"CASE WHEN 1 = 1 THEN 10 ELSE 20 END", "CASE WHEN false THEN 1 END",
	"case when 0 then 1 when 2 then 3 else 4 end", "CASE WHEN NULL THEN 1 ELSE 2 END",
	"CASE WHEN 1 > 2 THEN 1/0 ELSE 7 END", "CASE WHEN :n > 5 THEN :n * 2 ELSE 0 END",
	"CASE WHEN 0.0 THEN 1 WHEN 0.5 THEN 2 END", "CASE WHEN true THEN NULL ELSE 1 END",
	// functions
	"abs(-17)", "abs(-2.5)", "abs(-9223372036854775807)", "abs(-0.0)", "double(5432)", "exp(1.0)",
	"exp(0)", "ln(2.718281828459045)", "ln(10)", "greatest(5, 4, 3, 2)", "least(5, 4, 3, 2.1)",
	"greatest(1, 2.5)", "least(3)", "greatest(1, NULL, 3)", "int(5.4 + 3.8)", "int(2.5)",
	"int(-2.5)", "int(3.5)", "int(-0.4)", "mod(54, 32)", "mod(-54, 32)", "pi()", "pow(2.0, 10)",
	"power(2, 0.5)", "pow(2, -1)", "pow(-8, 1.0/3)", "sqrt(2.0)", "sqrt(16)", "Abs(-1)", "ABS(-1)",
	"hash(10, 5432)", "hash_fnv1a(10, 5432)", "hash_murmur2(10, 5432)", "hash(10)", "hash(-1)",
	"hash_fnv1a(0)", "hash(2.5, 3)", "hash_fnv1a(-9223372036854775808, -1)", "hash(NULL)",
	"permute(0, 4)", "permute(3, 10, 42)", "permute(-1, 10, 42)", "permute(12345, 1000000, 7)",
	"permute(5, 1)", "permute(7, 1000, :default_seed + 123)", "permute(1, 2, 3)", "permute(2, 3, 0)",
	"permute(123456789, 9223372036854775807, 5)", "permute(-9223372036854775808, 1000003, -1)",
	"permute(NULL, 5)", "pow(NULL, 2)", "sqrt(NULL)", "int(NULL)", "random(NULL, 5)",
	"random(3, 3)", "random_zipfian(7, 7, 1.5)", "random_exponential(9, 9, 1)",
	// variables: -D values and built-ins
	":n * 2", ":d * 2", ":n + :d", ":b", ":t", ":off", ":nul IS NULL", ":big", ":neg", ":spaced",
	":dx", ":zero", ":lead", ":lead + 1", ":client_id", ":random_seed", ":default_seed", ":b AND :t",
	"CASE WHEN :zero THEN 1 ELSE 2 END",
}

// runtimeErrors fail when evaluated, under pgbench and here, each with this phrase in both
// messages (empty: only that both fail).
var runtimeErrors = []struct{ expr, phrase string }{
	{"1 / 0", "division by zero"}, {"1 % 0", "division by zero"},
	{"9223372036854775807 + 1", "bigint add out of range"},
	{"-9223372036854775807 - 2", "bigint sub out of range"},
	{"9223372036854775807 * 2", "bigint mul out of range"},
	{"-9223372036854775808 * -1", "bigint mul out of range"},
	{"-9223372036854775808 / -1", "bigint div out of range"},
	{"true + 1", "cannot coerce boolean to int"}, {"true + 1.5", "cannot coerce boolean to double"},
	{"not 1", "cannot coerce int to boolean"}, {"1 and true", "cannot coerce int to boolean"},
	{"true AND 1", "cannot coerce int to boolean"}, {"5 or 0", "cannot coerce int to boolean"},
	{"true = true", "cannot coerce boolean to int"}, {"int(1e300)", "double to int overflow"},
	{"int(-9223372036854775809.0 * 2)", "double to int overflow"},
	{"random(5, 1)", "empty range"},
	{"random(-9223372036854775808, 9223372036854775807)", "too large"},
	{"random(0, 9223372036854775807)", "too large"},
	{"random_gaussian(1, 10, 1.5)", "gaussian parameter must be at least"},
	{"random_exponential(1, 10, 0)", "exponential parameter must be greater than"},
	{"random_exponential(1, 10, -1)", "exponential parameter must be greater than"},
	{"random_zipfian(1, 10, 1001)", "zipfian parameter must be"},
	{"permute(1, 0)", "permute size parameter must be greater than zero"},
	{"permute(1, -5)", "permute size parameter must be greater than zero"},
	{"sqrt(true)", "cannot coerce boolean to double"}, {"hash(true)", "cannot coerce boolean to int"},
	{"least(true, 1)", "cannot coerce boolean to int"}, {"pow(true, 2)", "cannot coerce boolean to double"},
	{"greatest(1.5, false)", "cannot coerce boolean to double"},
	{"CASE WHEN 1 < 2 THEN 1/0 ELSE 7 END", "division by zero"},
	{"1 << (1/0)", "division by zero"}, {"1 ISNULL = false", "cannot coerce boolean to int"},
}

// bindErrors are refused by Bind here and fail at run time under pgbench.
var bindErrors = []string{":s + 1", ":nope + 1", "hash(:undefined)"}

// parseErrors are syntax errors for both.
var parseErrors = []string{
	"1 +", "(1", "1)", "random(1)", "random(1, 2, 3)", "foo(1)", "1 < 2 < 3", "1 = 2 = 3",
	"9223372036854775808", "99999999999999999999", "1e400", "1 ! 2", ":", "hash(1, 2, 3)",
	"permute(1)", "least()", "CASE END", "CASE WHEN 1 THEN 2", "1 IS 2", "pi(1)", "1 2",
	"CASE WHEN 1 THEN 2 ELSE 3", "1 IS NOT", "abs()", "random_zipfian(1, 2)", "1 = 2 <> 3",
	"sqrt 2", "1 IS TRUE IS", "@1", "1 < 2 = true",
}

// pgbenchBinary returns the pgbench next to the PostgreSQL the tests run, skipping when there
// is none (failing in CI).
func pgbenchBinary(t *testing.T) string {
	t.Helper()
	bins, err := pgserver.FindBinaries("")
	if err != nil {
		serverproctest.Missing(t, "no PostgreSQL binaries, so no pgbench to compare with: %v", err)
	}
	path := filepath.Join(bins.BinDir, "pgbench")
	if _, err := os.Stat(path); err != nil {
		serverproctest.Missing(t, "pgbench is missing next to postgres (%s): the comparison with pgbench needs it", path)
	}
	return path
}

// runPgbench runs script once under pgbench on the test server with the comparison's seed
// and -D values, and returns its stderr.
func runPgbench(t *testing.T, pgbench, dsn, script string) (string, error) {
	t.Helper()
	args := []string{"--random-seed", fmt.Sprint(pgbenchSeed)}
	for _, d := range pgbenchDefines {
		args = append(args, "-D", d)
	}
	return pgbenchRun(t, pgbench, dsn, "", script, args...)
}

// pgbenchRun runs script once under pgbench with args, in schema when it is not empty, and
// returns its stderr.
func pgbenchRun(t *testing.T, pgbench, dsn, schema, script string, args ...string) (string, error) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "script.sql")
	if err := os.WriteFile(file, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	args = append([]string{"-n", "-t", "1", "-c", "1", "-f", file}, args...)
	return pgbenchCommand(t, pgbench, schema, append(args, dsn)...)
}

func pgbenchCommand(t *testing.T, pgbench, schema string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, pgbench, args...)
	if schema != "" {
		cmd.Env = append(os.Environ(), "PGOPTIONS=-c search_path="+schema)
	}
	cmd.Stderr = &stderr
	err := cmd.Run()
	return stderr.String(), err
}

// kitEnv is the environment matching pgbench's invocation.
func kitEnv(t *testing.T) Env {
	t.Helper()
	env := Env{Seed: pgbenchSeed, Clients: 1}
	for _, arg := range pgbenchDefines {
		d, err := ParseDefine(arg)
		if err != nil {
			t.Fatal(err)
		}
		env.Defines = append(env.Defines, d)
	}
	return env
}

var pgbenchDebugLine = regexp.MustCompile(`(?m)^debug\(script=0,command=(\d+)\): (.*)$`)

func TestExpressionsAgreeWithPgbench(t *testing.T) {
	pgbench := pgbenchBinary(t)
	dsn := testdb.Server(t).DSN()

	var script strings.Builder
	for i, e := range deterministicExpressions {
		fmt.Fprintf(&script, "\\set v%d debug(%s)\n", i, e)
	}
	stderr, err := runPgbench(t, pgbench, dsn, script.String())
	if err != nil {
		t.Fatalf("pgbench: %v\n%s", err, stderr)
	}
	theirs := map[string]string{}
	for _, m := range pgbenchDebugLine.FindAllStringSubmatch(stderr, -1) {
		theirs[m[1]] = m[2]
	}

	s, err := Parse(script.String())
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Bind(kitEnv(t))
	if err != nil {
		t.Fatal(err)
	}
	var x Execution
	if err := p.Eval(0, &x); err != nil {
		t.Fatal(err)
	}
	for i, e := range deterministicExpressions {
		want, ok := theirs[fmt.Sprint(i+1)]
		if !ok {
			t.Errorf("%s: pgbench printed nothing", e)
			continue
		}
		v, _ := x.Var(fmt.Sprintf("v%d", i))
		if got := v.debugText(); got != want {
			t.Errorf("%s: %s here, %s under pgbench", e, got, want)
		}
	}
}

func TestRuntimeErrorsAgreeWithPgbench(t *testing.T) {
	pgbench := pgbenchBinary(t)
	dsn := testdb.Server(t).DSN()
	for _, c := range runtimeErrors {
		script := fmt.Sprintf("\\set x %s\n", c.expr)
		stderr, err := runPgbench(t, pgbench, dsn, script)
		if err == nil {
			t.Errorf("%s: pgbench did not fail:\n%s", c.expr, stderr)
		} else if !strings.Contains(stderr, c.phrase) {
			t.Errorf("%s: pgbench failed without %q:\n%s", c.expr, c.phrase, stderr)
		}
		s, err := Parse(script)
		if err != nil {
			t.Errorf("%s: refused at parse, pgbench only at run time: %v", c.expr, err)
			continue
		}
		p, err := s.Bind(kitEnv(t))
		if err != nil {
			t.Errorf("%s: refused at bind: %v", c.expr, err)
			continue
		}
		var x Execution
		err = p.Eval(0, &x)
		var se *Error
		switch {
		case err == nil:
			v, _ := x.Var("x")
			t.Errorf("%s: evaluated to %s, pgbench failed", c.expr, v.debugText())
		case !errors.As(err, &se) || se.Line != 1:
			t.Errorf("%s: error %v, want one at line 1", c.expr, err)
		case !strings.Contains(err.Error(), c.phrase):
			t.Errorf("%s: error %q lacks %q", c.expr, err, c.phrase)
		}
	}
}

func TestBindRefusesWhatPgbenchFailsOnAtRunTime(t *testing.T) {
	pgbench := pgbenchBinary(t)
	dsn := testdb.Server(t).DSN()
	for _, e := range bindErrors {
		script := fmt.Sprintf("\\set x %s\n", e)
		if stderr, err := runPgbench(t, pgbench, dsn, script); err == nil {
			t.Errorf("%s: pgbench did not fail:\n%s", e, stderr)
		}
		s, err := Parse(script)
		if err != nil {
			t.Errorf("%s: refused at parse: %v", e, err)
			continue
		}
		if _, err := s.Bind(kitEnv(t)); err == nil {
			t.Errorf("%s: bound", e)
		}
	}
}

func TestSyntaxErrorsAgreeWithPgbench(t *testing.T) {
	pgbench := pgbenchBinary(t)
	dsn := testdb.Server(t).DSN()
	for _, e := range parseErrors {
		script := fmt.Sprintf("\\set x %s\n", e)
		if stderr, err := runPgbench(t, pgbench, dsn, script); err == nil {
			t.Errorf("%s: pgbench accepted it:\n%s", e, stderr)
		}
		if _, err := Parse(script); err == nil {
			t.Errorf("%s: parsed", e)
		}
	}
}

// The SQL commands pgbench sends in its extended mode are the script's, split where pgbench
// splits them and with the same $n placeholders, for the built-in scripts (copied from
// pgbench --show-script) and for commands spread over lines, with comments, casts, strings
// and dollar quotes holding semicolons, parentheses, and a command ended by a meta command.
func TestSQLCommandsAgreeWithPgbench(t *testing.T) {
	pgbench := pgbenchBinary(t)
	target := testdb.New(t)
	if stderr, err := pgbenchCommand(t, pgbench, target.Schema(), "-i", "-s", "1", "-q", target.DSN()); err != nil {
		t.Fatalf("pgbench -i: %v\n%s", err, stderr)
	}
	scripts := map[string]string{}
	for _, name := range []string{"tpcb-like", "simple-update", "select-only"} {
		text, err := os.ReadFile(filepath.Join("testdata", name+".sql"))
		if err != nil {
			t.Fatal(err)
		}
		scripts[name] = string(text)
	}
	// The last command is not valid SQL (a semicolon inside parentheses does not end it, for
	// pgbench as here): pgbench sends it, then stops at the server's error.
	scripts["tricky"] = `-- a comment; then a meta command
\set a 5
SELECT :a::int AS x,   -- a comment; with a semicolon
  'str;(' AS s, $$dollar ; )$$ AS d, $q$ $$ ; $q$ AS q, E'esc\';' AS e, "x"."y;" FROM (SELECT 1 AS "y;") AS "x";
SELECT /* c ; /* nested ; */ */ 1 + :a
  ; SELECT ((:a)), (ARRAY[1,2,3])[1:2];
SELECT 1
\set b :a + 1
SELECT :b, :a, :a
    -- a comment, then a meta command
\sleep 1 us
SELECT (1; ) -- the end, without a semicolon
`
	sending := regexp.MustCompile(`(?s)pgbench: (?:debug: )?client 0 sending (.*?)\n(?:pgbench: |\z)`)
	for name, text := range scripts {
		stderr, _ := pgbenchRun(t, pgbench, target.DSN(), target.Schema(), text, "-M", "extended", "-d")
		var theirs []string
		for rest := stderr; ; {
			m := sending.FindStringSubmatchIndex(rest)
			if m == nil {
				break
			}
			sql := strings.TrimSpace(rest[m[2]:m[3]])
			theirs = append(theirs, strings.TrimSpace(strings.TrimSuffix(sql, ";")))
			rest = rest[m[3]:]
		}
		s, err := Parse(text)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		var ours []string
		for _, c := range s.Commands() {
			ours = append(ours, c.SQL)
		}
		if strings.Join(ours, "\n--\n") != strings.Join(theirs, "\n--\n") {
			t.Errorf("%s: commands differ\nhere:\n%s\npgbench:\n%s\n(pgbench's stderr:\n%s)", name,
				strings.Join(ours, "\n--\n"), strings.Join(theirs, "\n--\n"), stderr)
		}
	}
}

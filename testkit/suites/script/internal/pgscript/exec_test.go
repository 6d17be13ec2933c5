package pgscript

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

func bind(t *testing.T, script string, env Env) *Program {
	t.Helper()
	if env.Clients == 0 {
		env.Clients = 1
	}
	p, err := mustParse(t, script).Bind(env)
	if err != nil {
		t.Fatalf("%q: %v", script, err)
	}
	return p
}

func eval(t *testing.T, p *Program, request int64) *Execution {
	t.Helper()
	x := &Execution{}
	if err := p.Eval(request, x); err != nil {
		t.Fatalf("request %d: %v", request, err)
	}
	return x
}

// args are an execution's statements as "SQL [args]" lines.
func args(x *Execution) string {
	var b strings.Builder
	for _, st := range x.Statements {
		fmt.Fprintf(&b, "%s %v\n", st.Command.SQL, st.Args)
	}
	return b.String()
}

func TestBuiltinVariables(t *testing.T) {
	p := bind(t, "SELECT :client_id, :request_id, :random_seed;", Env{Seed: 99, Clients: 3})
	for i := int64(0); i < 7; i++ {
		x := eval(t, p, i)
		want := []any{i % 3, i, int64(99)}
		var got []any
		for _, a := range x.Statements[0].Args {
			got = append(got, a.Any())
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("request %d: %v, want %v", i, got, want)
		}
	}
	// -D takes precedence over a built-in, as in pgbench.
	p = bind(t, "SELECT :client_id, :random_seed;", Env{Seed: 99, Clients: 3, Defines: defines(t, "client_id=5", "random_seed=1")})
	if got := args(eval(t, p, 4)); got != "SELECT $1, $2 [5 1]\n" {
		t.Errorf("-D client_id=5 random_seed=1: %q", got)
	}
	// default_seed follows the seed.
	seedOf := func(seed int64) int64 {
		v, _ := eval(t, bind(t, "\\set s :default_seed", Env{Seed: seed}), 0).Var("s")
		return v.Int64()
	}
	if seedOf(1) == seedOf(2) || seedOf(1) != seedOf(1) {
		t.Errorf("default_seed: %d under seed 1, %d under seed 2", seedOf(1), seedOf(2))
	}
}

func TestConditionalsChooseTheStatements(t *testing.T) {
	p := bind(t, `\set r :request_id % 4
\if :r = 0
  SELECT 'zero';
\elif :r = 1
  SELECT 'one';
  \if :request_id > 4
    SELECT 'one, later';
  \endif
\elif :r = 2
  SELECT 'two';
\else
  SELECT 'other';
\endif
SELECT 'always';`, Env{})
	for request, want := range map[int64]string{
		0: "SELECT 'zero' []\nSELECT 'always' []\n",
		1: "SELECT 'one' []\nSELECT 'always' []\n",
		5: "SELECT 'one' []\nSELECT 'one, later' []\nSELECT 'always' []\n",
		2: "SELECT 'two' []\nSELECT 'always' []\n",
		3: "SELECT 'other' []\nSELECT 'always' []\n",
	} {
		if got := args(eval(t, p, request)); got != want {
			t.Errorf("request %d:\n%s\nwant\n%s", request, got, want)
		}
	}
}

func TestSleepsBetweenStatements(t *testing.T) {
	p := bind(t, `\sleep 2 ms
\sleep :n us
SELECT 1;
SELECT 2;
\sleep 1
\sleep :lead ms`, Env{Defines: defines(t, "n=30", "lead=007")})
	x := eval(t, p, 0)
	if got := []time.Duration{x.Statements[0].SleepBefore, x.Statements[1].SleepBefore, x.SleepAfter}; !reflect.DeepEqual(got, []time.Duration{2030 * time.Microsecond, 0, time.Second + 7*time.Millisecond}) {
		t.Errorf("sleeps %v", got)
	}
	if err := bind(t, "\\set b true\n\\sleep :b", Env{}).Eval(0, &Execution{}); err == nil || !strings.Contains(err.Error(), `invalid sleep time "true"`) {
		t.Errorf("sleeping true: %v", err)
	}
}

// Arguments are typed for the driver, -D values keep the text they were given.
func TestArgumentsAreTyped(t *testing.T) {
	p := bind(t, "\\set i 1 + 1\n\\set d 1.5\n\\set b 1 < 2\n\\set z NULL\nSELECT :i, :d, :b, :z, :name, :lead;",
		Env{Defines: defines(t, "name=alice", "lead=007")})
	st := eval(t, p, 0).Statements[0]
	var anys []any
	var texts []string
	for _, a := range st.Args {
		anys = append(anys, a.Any())
		texts = append(texts, a.Text())
	}
	if want := []any{int64(2), 1.5, true, nil, "alice", int64(7)}; !reflect.DeepEqual(anys, want) {
		t.Errorf("arguments %#v, want %#v", anys, want)
	}
	if want := []string{"2", "1.5", "true", "NULL", "alice", "007"}; !reflect.DeepEqual(texts, want) {
		t.Errorf("texts %q, want %q", texts, want)
	}
	// A -D value copied by \set is a value, printed as pgbench prints values.
	if v, _ := eval(t, bind(t, "\\set c :lead", Env{Defines: defines(t, "lead=007")}), 0).Var("c"); v.Text() != "7" {
		t.Errorf("\\set c :lead with -D lead=007: %q", v.Text())
	}
}

func TestEvaluationErrorsNameTheLine(t *testing.T) {
	p := bind(t, "SELECT 1;\n\\set x 10 / (:request_id - 3)\nSELECT :x;", Env{})
	if got := args(eval(t, p, 5)); got != "SELECT 1 []\nSELECT $1 [5]\n" {
		t.Errorf("request 5: %q", got)
	}
	err := p.Eval(3, &Execution{})
	var se *Error
	if !errors.As(err, &se) || se.Line != 2 || se.Msg != `\set x: division by zero` {
		t.Errorf("request 3: %v, want line 2: \\set x: division by zero", err)
	}
	// A failing constant in a branch no request takes fails no request.
	p = bind(t, "\\if false\n\\set x 1 / 0\n\\endif\n\\set y random_gaussian(1, 10, 1)\nSELECT 1;", Env{})
	if err := p.Eval(0, &Execution{}); err == nil || !strings.Contains(err.Error(), "line 4: \\set y: random_gaussian: gaussian parameter must be at least 2") {
		t.Errorf("error %v", err)
	}
}

func TestRandomFunctionsStayInTheirRanges(t *testing.T) {
	p := bind(t, `\set u random(-5, 5)
\set e random_exponential(1, 10, 3.0)
\set g random_gaussian(100, 200, 2.5)
\set z random_zipfian(1, 1000, 0.99)
\set w random_zipfian(10, 10 + :request_id % 7, 1.2)
SELECT :u, :e, :g, :z, :w;`, Env{Seed: 7})
	bounds := [][2]int64{{-5, 5}, {1, 10}, {100, 200}, {1, 1000}, {10, 16}}
	zipfOnes := 0
	for i := int64(0); i < 2000; i++ {
		for k, a := range eval(t, p, i).Statements[0].Args {
			v := a.Int64()
			lo, hi := bounds[k][0], bounds[k][1]
			if k == 4 {
				hi = 10 + i%7
			}
			if v < lo || v > hi {
				t.Fatalf("request %d argument %d: %d outside [%d, %d]", i, k, v, lo, hi)
			}
			if k == 3 && v == 1 {
				zipfOnes++
			}
		}
	}
	// Rank 1 of zipfian(1000, 0.99) has probability 0.134: ~268 of 2000, sd ~15.
	if zipfOnes < 200 || zipfOnes > 340 {
		t.Errorf("random_zipfian(1, 1000, 0.99) drew 1 %d times in 2000", zipfOnes)
	}
}

func TestDebugWritesToTheEnvironment(t *testing.T) {
	var out bytes.Buffer
	p := bind(t, "SELECT 1;\n\\set x debug(:request_id * 2)", Env{Debug: &out})
	eval(t, p, 21)
	if got := out.String(); got != "debug(request=21,line=2): int 42\n" {
		t.Errorf("debug output %q", got)
	}
}

func TestExecutionIsReused(t *testing.T) {
	p := bind(t, "\\if :request_id % 2 = 0\nSELECT :request_id;\n\\endif\nSELECT :request_id + 0;", Env{})
	var x Execution
	if err := p.Eval(0, &x); err != nil {
		t.Fatal(err)
	}
	first := x.Statements[0].Args
	if err := p.Eval(1, &x); err != nil {
		t.Fatal(err)
	}
	if got := args(&x); got != "SELECT $1 + 0 [1]\n" || x.Request != 1 {
		t.Errorf("second evaluation: request %d %q", x.Request, got)
	}
	if first[0].Int64() != 1 {
		t.Errorf("arguments are not reused: %v", first)
	}
	if v, ok := x.Var("request_id"); !ok || v.Int64() != 1 {
		t.Errorf("Var(request_id) = %v, %v", v, ok)
	}
}

// snapshot is an execution in comparable form.
type snapshot struct {
	sql   []string
	args  [][]Value
	sleep []time.Duration
}

func snap(x *Execution) snapshot {
	var s snapshot
	for _, st := range x.Statements {
		s.sql = append(s.sql, st.Command.SQL)
		s.args = append(s.args, append([]Value(nil), st.Args...))
		s.sleep = append(s.sleep, st.SleepBefore)
	}
	return s
}

// The property the kit relies on: the same seed, request, -D values and clients give the same
// execution, whichever program bound from the script evaluates it, in whatever order, on
// however many goroutines.
func TestExecutionsAreRecomputable(t *testing.T) {
	script := readTestdata(t, "tpcb-like.sql") + `\set z random_zipfian(1, 100000 * :scale, 0.99)
\set e random_exponential(1, 10, 2.0)
\set g random_gaussian(1, 10, 2.5)
\if :z % 3 = 0
\sleep :e ms
UPDATE hot SET n = n + 1 WHERE k = :z AND c = :client_id AND h = hash(:g);
\endif
`
	env := Env{Seed: 42, Clients: 8, Defines: defines(t, "scale=10")}
	const requests = 2000
	reference := make([]snapshot, requests)
	first := bind(t, script, env)
	for i := range reference {
		reference[i] = snap(eval(t, first, int64(i)))
	}
	second := bind(t, script, env)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			var x Execution
			for n := 0; n < requests; n++ {
				i := (n*7 + g*13) % requests // another order on each goroutine
				if err := second.Eval(int64(i), &x); err != nil {
					t.Errorf("request %d: %v", i, err)
					return
				}
				if got := snap(&x); !reflect.DeepEqual(got, reference[i]) {
					t.Errorf("request %d differs on goroutine %d: %+v, first %+v", i, g, got, reference[i])
					return
				}
			}
		}(g)
	}
	wg.Wait()

	differ := func(other Env) bool {
		p := bind(t, script, other)
		for i := 0; i < 50; i++ {
			if !reflect.DeepEqual(snap(eval(t, p, int64(i))), reference[i]) {
				return true
			}
		}
		return false
	}
	if !differ(Env{Seed: 43, Clients: 8, Defines: env.Defines}) {
		t.Error("another seed gave the same executions")
	}
	if !differ(Env{Seed: 42, Clients: 8, Defines: defines(t, "scale=11")}) {
		t.Error("another scale gave the same executions")
	}
	if !differ(Env{Seed: 42, Clients: 9, Defines: env.Defines}) {
		t.Error("another number of clients gave the same executions")
	}
	if reflect.DeepEqual(reference[0], reference[1]) {
		t.Error("requests 0 and 1 did the same")
	}
}

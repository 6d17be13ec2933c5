package pgscript

import (
	"errors"
	"strings"
	"testing"
)

func mustParse(t *testing.T, script string) *Script {
	t.Helper()
	s, err := Parse(script)
	if err != nil {
		t.Fatalf("%q: %v", script, err)
	}
	return s
}

func defines(t *testing.T, args ...string) []Define {
	t.Helper()
	var ds []Define
	for _, a := range args {
		d, err := ParseDefine(a)
		if err != nil {
			t.Fatal(err)
		}
		ds = append(ds, d)
	}
	return ds
}

func TestBindRefuses(t *testing.T) {
	for _, c := range []struct {
		script  string
		defines []string
		line    int
		says    string
	}{
		{"SELECT :delta;\n\\set delta 1", nil, 1, ":delta is used before it is set (line 2 sets it)"},
		{"\\set aid random(1, 100000 * :scale)", nil, 1, ":scale is used before it is set (no \\set sets it; give it with -D scale=VALUE)"},
		{"\\set a 1\n\\set b :a + :c", nil, 2, ":c is used before it is set"},
		{"\\if :request_id % 2 = 0\n\\set x 1\n\\endif\nSELECT :x;", nil, 4, ":x is used before it is set on every path (line 2 sets it inside an \\if branch)"},
		{"\\if 1\n\\set x 1\n\\elif 2\n\\set x 2\n\\endif\nSELECT :x;", nil, 6, ":x is used before it is set"},
		{"\\if 1\n\\set x 1\n\\else\n\\set y 2\n\\endif\nSELECT :x;", nil, 6, ":x is used before it is set"},
		{"\\if 1\n\\set x 1\n\\elif :x\n\\endif", nil, 3, ":x is used before it is set"},
		{"\\if 1\n\\if 2\n\\set x 1\n\\else\n\\set x 2\n\\endif\n\\endif\nSELECT :x;", nil, 8, ":x is used before it is set"},
		{"\\sleep :pause ms", nil, 1, ":pause is used before it is set"},
		{"\\set x :name + 1", []string{"name=alice"}, 1, `:name is "alice" (from -D), which is not a number`},
		{"SELECT 'id-:request_id';", nil, 1, ":request_id is inside a quoted string or identifier"},
		{"\\set k 1\nSELECT \"col:k\" FROM t;", nil, 2, ":k is inside a quoted string or identifier"},
		{"SELECT $$:scale$$;", []string{"scale=1"}, 1, ":scale is inside a quoted string"},
	} {
		s := mustParse(t, c.script)
		_, err := s.Bind(Env{Seed: 1, Clients: 1, Defines: defines(t, c.defines...)})
		var se *Error
		if !errors.As(err, &se) {
			t.Errorf("%q: error %v, want a line error", c.script, err)
			continue
		}
		if se.Line != c.line || !strings.Contains(se.Msg, c.says) {
			t.Errorf("%q: %q, want line %d saying %q", c.script, err, c.line, c.says)
		}
	}
}

func TestBindAccepts(t *testing.T) {
	for _, c := range []struct {
		script  string
		defines []string
	}{
		{readTestdata(t, "tpcb-like.sql"), []string{"scale=1"}},
		{"\\if 1\n\\set x 1\n\\else\n\\set x 2\n\\endif\nSELECT :x;", nil},
		{"\\if 1\n\\set x 1\n\\elif 2\n\\set x 2\n\\else\n\\set x 3\n\\endif\nSELECT :x;", nil},
		{"\\set x 0\n\\if 1\n\\set y 1\n\\endif\nSELECT :x;", nil},
		{"SELECT :client_id, :request_id, :random_seed, :default_seed, hash_fnv1a;", nil},
		{"\\set h hash(:request_id) + permute(:request_id, 10)", nil},
		{"SELECT :name, 'a:b', '10:30', '{\"k\":1}' -- :nope\n;", []string{"name=alice"}},
		{"SELECT :later;", []string{"later=3"}},
		{"\\set x 1 / 0", nil}, // fails only when a request evaluates it
	} {
		if _, err := mustParse(t, c.script).Bind(Env{Seed: 1, Clients: 2, Defines: defines(t, c.defines...)}); err != nil {
			t.Errorf("%q: %v", c.script, err)
		}
	}
}

func TestBindChecksTheEnvironment(t *testing.T) {
	s := mustParse(t, "SELECT :client_id;")
	if _, err := s.Bind(Env{Clients: 0}); err == nil {
		t.Error("bound with no client")
	}
	if _, err := mustParse(t, "SELECT 1;").Bind(Env{Clients: 1, Defines: defines(t, "big=99999999999999999999")}); err == nil ||
		!strings.Contains(err.Error(), "out of range for type bigint") {
		t.Errorf("an integer -D value past int64: %v", err)
	}
}

// -D values take pgbench's types (for expressions) and keep their text (for SQL).
func TestDefineValuesAreTypedAsPgbench(t *testing.T) {
	for _, c := range []struct {
		text string
		kind Kind
		any  any
	}{
		{"7", Int, int64(7)}, {"007", Int, int64(7)}, {" -3", Int, int64(-3)}, {"2.5", Double, 2.5},
		{"1e3", Double, 1000.0}, {"yes", Bool, true}, {"t", Bool, true}, {"on", Bool, true},
		{"of", Bool, false}, {"n", Bool, false}, {"FALSE", Bool, false}, {"null", Null, nil},
		{"NULL", Null, nil}, {"alice", String, "alice"}, {"", String, ""}, {"o", String, "o"},
		{"1_000", String, "1_000"}, {"1e-400", String, "1e-400"}, {"0x10", Double, 16.0},
	} {
		v, err := defineValue("v", c.text)
		if err != nil {
			t.Errorf("%q: %v", c.text, err)
			continue
		}
		if v.Kind() != c.kind || v.Any() != c.any || v.Text() != c.text {
			t.Errorf("-D v=%q: %s %v text %q, want %s %v text %q", c.text, v.Kind(), v.Any(), v.Text(), c.kind, c.any, c.text)
		}
	}
}

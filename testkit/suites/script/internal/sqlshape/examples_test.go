package sqlshape

import (
	"context"
	"io/fs"
	"slices"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/examples/scripts"
	"github.com/hotspotkit/hotspotkit/internal/testhelp/testdb"
	"github.com/hotspotkit/hotspotkit/testkit/suites/script/internal/pgscript"
)

// exampleInputs are an example script's SQL commands as the script parser hands them over.
func exampleInputs(t *testing.T, name string) []Input {
	t.Helper()
	text, err := fs.ReadFile(scripts.Files, name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := pgscript.Parse(string(text))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var inputs []Input
	for _, c := range s.Commands() {
		inputs = append(inputs, Input{SQL: c.SQL, Line: c.Line, Params: c.Params})
	}
	return inputs
}

// exampleCatalog runs an example's init file, with its documented values, on a fresh
// schema and reads that schema's catalog.
func exampleCatalog(t *testing.T, ex scripts.Example) *Catalog {
	t.Helper()
	text, err := fs.ReadFile(scripts.Files, ex.Init)
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	for _, arg := range ex.Set {
		d, err := pgscript.ParseDefine(arg)
		if err != nil {
			t.Fatal(err)
		}
		vars[d.Name] = d.Value
	}
	stmts, err := pgscript.ParseInit(string(text), vars)
	if err != nil {
		t.Fatalf("%s: %v", ex.Init, err)
	}
	target := testdb.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, st := range stmts {
		if _, err := target.Admin().Exec(ctx, st.SQL); err != nil {
			t.Fatalf("%s line %d: %v", ex.Init, st.Line, err)
		}
	}
	cat, err := LoadCatalog(ctx, target.Admin(), target.Schema(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

func example(t *testing.T, script string) scripts.Example {
	t.Helper()
	i := slices.IndexFunc(scripts.List(), func(ex scripts.Example) bool { return ex.Script == script })
	if i < 0 {
		t.Fatalf("no example %s", script)
	}
	return scripts.List()[i]
}

// TestExampleScripts: each example script, on the tables its init file makes, is
// deferrable exactly when it is not documented as sync only.
func TestExampleScripts(t *testing.T) {
	catalogs := map[string]*Catalog{} // by init file
	for _, ex := range scripts.List() {
		t.Run(ex.Script, func(t *testing.T) {
			cat := catalogs[ex.Init]
			if cat == nil {
				cat = exampleCatalog(t, ex)
				catalogs[ex.Init] = cat
			}
			s, err := Plan(exampleInputs(t, ex.Script), cat)
			if err != nil {
				t.Fatal(err)
			}
			if s.Deferrable() == ex.SyncOnly {
				t.Errorf("deferrable %v, documented sync only %v; refusals %v", s.Deferrable(), ex.SyncOnly, s.Refusals)
			}
		})
	}
}

// TestUsageCounterScript: the usage counter example adds 0.001 to numeric(20,8) columns,
// as the built-in suite does; every statement is deferrable, and its writes evaluate
// exactly.
func TestUsageCounterScript(t *testing.T) {
	ex := example(t, "usage-counter.sql")
	inputs := exampleInputs(t, ex.Script)
	s, err := Plan(inputs, exampleCatalog(t, ex))
	if err != nil {
		t.Fatal(err)
	}
	if !s.Deferrable() {
		t.Fatalf("refused: %v", s.Refusals)
	}
	want := []Class{TxControl, Insert, Update, Update, Update, Update, TxControl}
	if got := classes(s); !slices.Equal(got, want) {
		t.Fatalf("classes %v, want %v", got, want)
	}
	// Request 7 of hot set 0 (hot_keys=1), rt = 50 + 7 % 100: each statement's
	// parameters bound by name.
	vars := map[string]Value{"request_id": Int(7), "hot": Int(0), "rt": Int(57)}
	params := func(i int) []Value {
		var out []Value
		for _, name := range inputs[i].Params {
			out = append(out, vars[name])
		}
		return out
	}

	usage := s.Statements[1]
	rows, err := usage.Insert.Values(params(1))
	if err != nil {
		t.Fatal(err)
	}
	cost := slices.IndexFunc(usage.Insert.Columns, func(c *Column) bool { return c.Name == "cost" })
	if len(rows) != 1 || rows[0][0] != String("7") || rows[0][cost] != Dec(100_000, 3) {
		t.Errorf("usage row %v", rows)
	}
	if usage.Insert.Claim == nil || usage.Insert.Claim.Name != "usage_pkey" {
		t.Errorf("usage claim %v", usage.Insert.Claim)
	}

	type write struct {
		op     WriteOp
		value  Value
		server string
	}
	wantWrites := map[string]map[string]write{
		"api_keys": {
			"total_requests": {op: Increment, value: Int(1)}, "total_tokens": {op: Increment, value: Int(30)},
			"total_cost": {op: Increment, value: Dec(100_000, 3)}, "last_used_at": {op: Greatest, server: "now()"},
		},
		"global_models": {"usage_count": {op: Increment, value: Int(1)}},
		"provider_api_keys": {
			"request_count": {op: Increment, value: Int(1)}, "success_count": {op: Increment, value: Int(1)},
			"total_tokens": {op: Increment, value: Int(30)}, "total_cost": {op: Increment, value: Dec(100_000, 3)},
			"total_response_time_ms": {op: Increment, value: Int(57)},
		},
		"providers": {"monthly_used": {op: Increment, value: Dec(100_000, 3)}, "updated_at": {op: ServerTime, server: "now()"}},
	}
	for i, st := range s.Statements {
		if st.Class != Update {
			continue
		}
		p := params(i)
		key, err := st.Update.KeyValues(p)
		if err != nil || !slices.Equal(key, []Value{String("0"), Int(0)}) {
			t.Errorf("line %d: key %v (%v), want ('0', 0)", st.Line, key, err)
		}
		want := wantWrites[st.Target]
		if len(st.Update.Set) != len(want) {
			t.Errorf("line %d: %d writes, want %d", st.Line, len(st.Update.Set), len(want))
		}
		for _, item := range st.Update.Set {
			w, ok := want[item.Column.Name]
			if !ok || item.Op != w.op || item.ServerFunc != w.server {
				t.Errorf("line %d: %s is %v %q, want %v %q", st.Line, item.Column.Name, item.Op, item.ServerFunc, w.op, w.server)
				continue
			}
			if w.server != "" {
				continue
			}
			v, err := item.Eval(p)
			if err != nil || v != w.value {
				t.Errorf("line %d: %s = %v (%v), want %v", st.Line, item.Text, v, err, w.value)
			}
			if item.Column.BaseTypeOID != oidNumeric {
				continue
			}
			// numeric(20,8) columns take the amount in decimal.Decimal's units.
			if d, err := v.Decimal(); err != nil || d != 100_000 {
				t.Errorf("line %d: %s: %v units (%v), want 100000", st.Line, item.Text, d, err)
			}
		}
	}

	slots := verdicts(s)
	for table, allowed := range map[string]bool{
		"api_keys": false, "global_models": true, "provider_api_keys": true, "providers": false, "usage": false,
	} {
		if slots[table].Allowed() != allowed {
			t.Errorf("%s: slots allowed %v, want %v (%s)", table, slots[table].Allowed(), allowed, slots[table].Reason)
		}
	}
}

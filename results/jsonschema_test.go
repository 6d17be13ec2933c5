package results

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/recordstest"
)

var update = flag.Bool("update", false, "rewrite jsonschema/*.schema.json from the types")

// The committed JSON Schemas are generated from the Go types (and their doc comments); this
// test fails when the two drift apart. go generate ./results rewrites them.
func TestReportSchema(t *testing.T) {
	for _, s := range []struct {
		file string
		gen  func(docs) []byte
	}{{"report.schema.json", reportSchema}, {"samples.schema.json", samplesSchema}} {
		path := filepath.Join("jsonschema", s.file)
		got := s.gen(readDocs(t))
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go generate ./results writes it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what the types generate (go generate ./results rewrites it); first difference at line %d", path, firstDiffLine(got, want))
		}
	}
}

func firstDiffLine(a, b []byte) int {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			return i + 1
		}
	}
	return min(len(la), len(lb)) + 1
}

// Every committed report reads; it validates against the schema once upgraded, as the
// document the upgrade produces (so a field of an old version that no type holds any more
// fails it) and as written again; and it reads the same once written again (as Store does):
// the upgrade loses nothing the types hold.
func TestCommittedReports(t *testing.T) {
	schema := readSchema(t, "report.schema.json")
	dir := t.TempDir()
	for _, path := range recordstest.Reports(t, ".json") {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var head struct {
			SchemaVersion int `json:"schema_version"`
		}
		if err := json.Unmarshal(raw, &head); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if head.SchemaVersion < SchemaVersion {
			if raw, err = upgrade(raw, head.SchemaVersion); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
		}
		if errs := validate(t, schema, raw); len(errs) > 0 {
			t.Errorf("%s, upgraded: %s", path, strings.Join(errs[:min(5, len(errs))], "; "))
		}
		rep, err := Read(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for i, r := range rep.Runs {
			if c := r.Config; c.FlushBatchSize == 0 || c.QueueBackend == "" || c.Role == "" || len(c.Modes) == 0 {
				t.Errorf("%s run %d: config not upgraded: %+v", path, i, c)
			}
		}
		again := filepath.Join(dir, filepath.Base(path))
		if err := rep.WriteFile(again); err != nil {
			t.Fatal(err)
		}
		written, err := os.ReadFile(again)
		if err != nil {
			t.Fatal(err)
		}
		if errs := validate(t, schema, written); len(errs) > 0 {
			t.Errorf("%s, written: %s", path, strings.Join(errs[:min(5, len(errs))], "; "))
		}
		if back, err := Read(bytes.NewReader(written)); err != nil || !reflect.DeepEqual(rep, back) {
			t.Errorf("%s reads differently once written again (%v)", path, err)
		}
	}
}

// The schemas reject what the types would not write, so the validation above can fail.
func TestSchemaRejects(t *testing.T) {
	schema := readSchema(t, "report.schema.json")
	ok := `{"schema_version":%d,"suite":"s","started_at":"2025-01-01T00:00:00Z","finished_at":"2025-01-01T00:00:00Z","interrupted":false,"environment":{"go_version":"","gomaxprocs":1,"num_cpu":1,"cpu_model":"","os":"","arch":"","machine_class":"","database_kind":"postgres","database_version":"","database_settings":null,"managed_database":true,"database_start_ms":0,"schema":"","durability":"on","git_revision":""},"runs":[]%s}`
	if errs := validate(t, schema, fmt.Appendf(nil, ok, SchemaVersion, "")); len(errs) > 0 {
		t.Fatalf("a minimal report fails: %v", errs)
	}
	for name, doc := range map[string][]byte{
		"an older version":   fmt.Appendf(nil, ok, SchemaVersion-1, ""),
		"an unknown field":   fmt.Appendf(nil, ok, SchemaVersion, `,"extra":1`),
		"a wrong type":       []byte(strings.Replace(string(fmt.Appendf(nil, ok, SchemaVersion, "")), `"num_cpu":1`, `"num_cpu":"1"`, 1)),
		"a required missing": []byte(strings.Replace(string(fmt.Appendf(nil, ok, SchemaVersion, "")), `"suite":"s",`, "", 1)),
	} {
		if errs := validate(t, schema, doc); len(errs) == 0 {
			t.Errorf("%s passes the schema", name)
		}
	}
}

// docs holds the doc comments of the package's types and their fields.
type docs struct {
	types  map[string]string
	fields map[string]map[string]string
}

func readDocs(t *testing.T) docs {
	t.Helper()
	d := docs{types: map[string]string{}, fields: map[string]map[string]string{}}
	paths, _ := filepath.Glob("*.go")
	fset := token.NewFileSet()
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				ts := spec.(*ast.TypeSpec)
				doc := ts.Doc
				if doc == nil {
					doc = gd.Doc
				}
				d.types[ts.Name.Name] = docText(doc)
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				fields := map[string]string{}
				for _, fl := range st.Fields.List {
					for _, n := range fl.Names {
						fields[n.Name] = docText(fl.Doc)
					}
				}
				d.fields[ts.Name.Name] = fields
			}
		}
	}
	return d
}

func docText(g *ast.CommentGroup) string {
	if g == nil {
		return ""
	}
	return strings.Join(strings.Fields(g.Text()), " ")
}

// node is a JSON object whose keys keep the order they were added in.
type node struct {
	keys []string
	vals map[string]any
}

func obj(kv ...any) *node {
	n := &node{vals: map[string]any{}}
	for i := 0; i+1 < len(kv); i += 2 {
		n.set(kv[i].(string), kv[i+1])
	}
	return n
}

func (n *node) set(k string, v any) {
	if _, ok := n.vals[k]; !ok {
		n.keys = append(n.keys, k)
	}
	n.vals[k] = v
}

func (n *node) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range n.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(n.vals[k])
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// generator turns Go types into JSON Schema (draft 2020-12), each named struct once under $defs.
type generator struct {
	docs docs
	defs *node
	seen map[string]bool
}

const schemaBase = "https://github.com/hotspotkit/hotspotkit/blob/main/results/jsonschema/"

func reportSchema(d docs) []byte {
	g := &generator{docs: d, defs: obj(), seen: map[string]bool{"Report": true}}
	root := g.structSchema(reflect.TypeFor[Report]())
	root.vals["properties"].(*node).vals["schema_version"].(*node).set("const", SchemaVersion)
	return g.document("report.schema.json", "hotspotkit report, schema_version "+fmt.Sprint(SchemaVersion), root)
}

func samplesSchema(d docs) []byte {
	g := &generator{docs: d, defs: obj(), seen: map[string]bool{}}
	header := g.structSchema(reflect.TypeFor[SamplesHeader]())
	header.vals["properties"].(*node).vals["schema_version"].(*node).set("const", SchemaVersion)
	g.seen["SamplesHeader"] = true
	g.defs.set("SamplesHeader", header)
	root := obj("description", "One line of a samples file (NDJSON): the SamplesHeader on the first line, a Sample on every other.",
		"anyOf", []any{g.ref(reflect.TypeFor[SamplesHeader]()), g.ref(reflect.TypeFor[Sample]())})
	return g.document("samples.schema.json", "hotspotkit samples file line, schema_version "+fmt.Sprint(SchemaVersion), root)
}

func (g *generator) document(file, title string, root *node) []byte {
	doc := obj("$schema", "https://json-schema.org/draft/2020-12/schema", "$id", schemaBase+file, "title", title)
	for _, k := range root.keys {
		doc.set(k, root.vals[k])
	}
	doc.set("$defs", g.defs)
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		panic(err)
	}
	return append(b, '\n')
}

func (g *generator) ref(t reflect.Type) *node {
	if !g.seen[t.Name()] {
		g.seen[t.Name()] = true
		g.defs.set(t.Name(), nil) // keep $defs in the order types are first met
		g.defs.set(t.Name(), g.structSchema(t))
	}
	return obj("$ref", "#/$defs/"+t.Name())
}

func (g *generator) structSchema(t reflect.Type) *node {
	props, required := obj(), []string{}
	g.fields(t, t.Name(), props, &required)
	s := obj("type", "object")
	if d := g.docs.types[t.Name()]; d != "" {
		s = withDescription(s, d)
	}
	s.set("properties", props)
	if len(required) > 0 {
		s.set("required", required)
	}
	s.set("additionalProperties", false)
	return s
}

func (g *generator) fields(t reflect.Type, owner string, props *node, required *[]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if f.Anonymous && tag == "" {
			g.fields(f.Type, f.Type.Name(), props, required) // embedded: its fields are the parent's
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		omit := strings.Contains(opts, "omitempty")
		s := g.typeSchema(f.Type, !omit)
		if d := g.docs.fields[owner][f.Name]; d != "" {
			s = withDescription(s, d)
		}
		if owner == "RunConfig" && f.Name != "Suite" {
			st, _ := LookupSetting(name)
			s.set("x-shapes-work", st.Shapes)
			if st.Flag != "" {
				s.set("x-flag", "--"+st.Flag)
			}
		}
		props.set(name, s)
		if !omit {
			*required = append(*required, name)
		}
	}
}

func withDescription(s *node, d string) *node {
	if _, isRef := s.vals["$ref"]; isRef {
		return obj("description", d, "allOf", []any{s}) // 2020-12 allows siblings of $ref, but not every validator does
	}
	out := obj("description", d)
	for _, k := range s.keys {
		out.set(k, s.vals[k])
	}
	return out
}

// typeSchema is t's schema; nullable when a nil value is written as null (no omitempty).
func (g *generator) typeSchema(t reflect.Type, nullable bool) *node {
	orNull := func(typ string) any {
		if nullable {
			return []string{typ, "null"}
		}
		return typ
	}
	switch {
	case t == reflect.TypeFor[time.Time]():
		return obj("type", "string", "format", "date-time")
	case t == reflect.TypeFor[Value](): // a number or a name, as its MarshalJSON writes it
		return obj("type", []string{"number", "string"})
	case t.Kind() == reflect.Pointer:
		s := g.typeSchema(t.Elem(), false)
		if nullable {
			return obj("anyOf", []any{s, obj("type", "null")})
		}
		return s
	case t.Kind() == reflect.Struct:
		return g.ref(t)
	case t.Kind() == reflect.Slice:
		return obj("type", orNull("array"), "items", g.typeSchema(t.Elem(), false))
	case t.Kind() == reflect.Map:
		s := obj("type", orNull("object"))
		if t.Key().Kind() != reflect.String {
			s.set("propertyNames", obj("pattern", "^-?[0-9]+$"))
		}
		s.set("additionalProperties", g.typeSchema(t.Elem(), false))
		return s
	case t.Kind() == reflect.Interface:
		return obj()
	case t.Kind() == reflect.Bool:
		return obj("type", "boolean")
	case t.Kind() == reflect.String:
		return obj("type", "string")
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		return obj("type", "integer")
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return obj("type", "number")
	}
	panic("schema: no JSON Schema for " + t.String())
}

func readSchema(t *testing.T, file string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("jsonschema", file))
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// validate checks doc against schema, for the keywords the generator writes: type, const,
// properties, required, additionalProperties, items, propertyNames, $ref, allOf, anyOf.
func validate(t *testing.T, schema map[string]any, doc []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var val any
	if err := dec.Decode(&val); err != nil {
		return []string{err.Error()}
	}
	v := validator{defs: schema["$defs"].(map[string]any)}
	v.check(schema, val, "$")
	return v.errs
}

type validator struct {
	defs map[string]any
	errs []string
}

func (v *validator) fail(format string, a ...any) { v.errs = append(v.errs, fmt.Sprintf(format, a...)) }

func (v *validator) check(s map[string]any, val any, at string) {
	if ref, ok := s["$ref"].(string); ok {
		v.check(v.defs[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any), val, at)
	}
	for _, sub := range asList(s["allOf"]) {
		v.check(sub.(map[string]any), val, at)
	}
	if anyOf := asList(s["anyOf"]); len(anyOf) > 0 && !slices.ContainsFunc(anyOf, func(sub any) bool {
		alone := validator{defs: v.defs}
		alone.check(sub.(map[string]any), val, at)
		return len(alone.errs) == 0
	}) {
		v.fail("%s: matches none of anyOf", at)
	}
	if c, ok := s["const"]; ok && fmt.Sprint(c) != fmt.Sprint(val) {
		v.fail("%s: %v, want %v", at, val, c)
	}
	if typ, ok := s["type"]; ok && !slices.ContainsFunc(asList(typ), func(want any) bool { return hasType(val, want.(string)) }) {
		v.fail("%s: %T is not %v", at, val, typ)
		return
	}
	switch val := val.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		for _, r := range asList(s["required"]) {
			if _, ok := val[r.(string)]; !ok {
				v.fail("%s: no %s", at, r)
			}
		}
		for k, item := range val {
			if p, ok := s["propertyNames"].(map[string]any); ok && !regexp.MustCompile(p["pattern"].(string)).MatchString(k) {
				v.fail("%s: key %s does not match %s", at, k, p["pattern"])
			}
			switch sub, extra := props[k], s["additionalProperties"]; {
			case sub != nil:
				v.check(sub.(map[string]any), item, at+"."+k)
			case extra == false:
				v.fail("%s: unknown key %s", at, k)
			case extra != nil && extra != true:
				v.check(extra.(map[string]any), item, at+"."+k)
			}
		}
	case []any:
		if items, ok := s["items"].(map[string]any); ok {
			for i, item := range val {
				v.check(items, item, fmt.Sprintf("%s[%d]", at, i))
			}
		}
	}
}

func asList(v any) []any {
	switch v := v.(type) {
	case []any:
		return v
	case nil:
		return nil
	}
	return []any{v}
}

func hasType(v any, typ string) bool {
	switch v := v.(type) {
	case nil:
		return typ == "null"
	case bool:
		return typ == "boolean"
	case string:
		return typ == "string"
	case json.Number:
		_, err := v.Int64()
		return typ == "number" || (typ == "integer" && err == nil)
	case []any:
		return typ == "array"
	case map[string]any:
		return typ == "object"
	}
	return false
}

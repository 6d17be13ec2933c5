package results

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// Every axis steps a setting of RunConfig whose type fits its unit, with a flag, and shows
// figures a level holds.
func TestAxesAreWellDeclared(t *testing.T) {
	if err := checkAxes(); err != nil {
		t.Fatal(err)
	}
}

// A text axis (a database's kind, issue "MySQL") needs no code beyond its declaration: its
// values parse, sort, bound to its choices, and round-trip through JSON as names.
func TestTextAxis(t *testing.T) {
	kind := &Axis{Name: "postgres_url", Unit: UnitText, Choices: []string{"mariadb", "postgres"}, Want: "postgres or mariadb"}
	vs, errs := kind.ParseList("postgres, mariadb,postgres")
	if len(errs) > 0 || !slices.Equal(vs, []Value{Text("mariadb"), Text("postgres")}) {
		t.Errorf("ParseList: %v %v", vs, errs)
	}
	if _, err := kind.Parse("oracle"); err == nil || err.Error() != `"oracle" is not postgres or mariadb` {
		t.Errorf("an unknown kind: %v", err)
	}
	var c RunConfig
	kind.Set(&c, Text("mariadb"))
	if c.PostgresURL != "mariadb" || kind.Of(c) != Text("mariadb") {
		t.Errorf("Set then Of: %q, %v", c.PostgresURL, kind.Of(c))
	}
	b, err := json.Marshal(Position{"kind": Text("mariadb"), "slots": Number(4)})
	var back Position
	if err != nil || string(b) != `{"kind":"mariadb","slots":4}` || json.Unmarshal(b, &back) != nil || back["kind"] != Text("mariadb") || back["slots"] != Number(4) {
		t.Errorf("JSON %s (%v), read back %v", b, err, back)
	}
	if Number(1e9).Compare(Text("a")) >= 0 || Text("b").Compare(Text("a")) <= 0 || Number(2).Compare(Number(10)) >= 0 {
		t.Error("Compare: numbers by size before names in byte order")
	}
}

// Each axis's flag reads its values as its unit says, sorted without repeats, and refuses
// what its bounds (its own, else its setting's) do not allow, one error per bad value.
func TestAxisParsing(t *testing.T) {
	for _, c := range []struct {
		a    *Axis
		raw  string
		want []float64
		errs []string
	}{
		{AxisConcurrency, "8,1,64,8", []float64{1, 8, 64}, nil},
		{AxisConcurrency, "0,2,x", []float64{2}, []string{`"0" is not a positive integer`, `"x" is not a positive integer`}},
		{AxisSlots, "16,1,4096", []float64{1, 16}, []string{"4096 is above 1024"}}, // the slots setting's max tag
		{AxisRTT, "1ms,0,200us,5s", []float64{0, 0.2, 1}, []string{"5s is above 1s"}},
		{AxisRTT, "-1ms,fast", nil, []string{`"-1ms" is not a round trip`, `"fast" is not a round trip`}},
		{AxisPool, "64,4,20000,2.5", []float64{4, 64}, []string{"20000 is above 10000", `"2.5" is not a positive integer (a pool size)`}},
		{AxisRate, "400,100.5,0,inf", []float64{100.5, 400}, []string{`"0" is not a positive rate`, `"inf" is not a positive rate`}},
		{AxisBatch, "1000,50,200,-1", []float64{50, 200, 1000}, []string{`"-1" is not a positive integer (records per flush)`}},
	} {
		vs, errs := c.a.ParseList(c.raw)
		var got []float64
		for _, v := range vs {
			got = append(got, v.Num)
		}
		var gotErrs []string
		for _, err := range errs {
			gotErrs = append(gotErrs, err.Error())
		}
		if !slices.Equal(got, c.want) || len(gotErrs) != len(c.errs) {
			t.Errorf("%s %q: %v, errors %q; want %v, %q", c.a.FlagName(), c.raw, got, gotErrs, c.want, c.errs)
			continue
		}
		for i, e := range c.errs {
			if !strings.HasPrefix(gotErrs[i], e) {
				t.Errorf("%s %q: error %q, want %q", c.a.FlagName(), c.raw, gotErrs[i], e)
			}
		}
	}
}

// A run's value on an axis is its config's setting, Unset where the config leaves it out
// (one slot, no round trip, a closed loop); Shown names the values a row shows; a Position
// holds a run that stands where it says.
func TestPositions(t *testing.T) {
	var c RunConfig
	AxisPool.Set(&c, Number(16))
	AxisRTT.Set(&c, Number(0.2))
	c.Concurrency = 64
	if c.MaxConnections != 16 || c.DBRTTMs != 0.2 || AxisSlots.Of(c) != Number(1) || AxisRate.Of(c) != Number(0) {
		t.Errorf("config %+v: slots %v, rate %v", c, AxisSlots.Of(c), AxisRate.Of(c))
	}
	c.Ladder = map[string][]Value{"max_connections": {Number(4), Number(16)}}
	r := Run{Mode: "sync", Config: c}
	if rung := r.Rung(); rung.Key() != "max_connections=16" || r.Level() != 0 {
		t.Errorf("rung %v, level %d", rung, r.Level())
	}
	if shown := Shown(c); shown.Key() != "db_rtt_ms=0.2,max_connections=16" {
		t.Errorf("shown %q: want the pool (stepped) and the round trip (not unset), not the concurrency", shown.Key())
	}
	if !(Position{"max_connections": Number(16)}).Holds(r) || (Position{"slots": Number(4)}).Holds(r) || !(Position{}).Holds(r) {
		t.Error("Holds")
	}
	if got := r.Label(); got != "sync · pool 16" {
		t.Errorf("label %q", got)
	}
}

// checkAxes is what a test checks of every axis: a setting of its name whose type fits its
// unit, a flag, a unit, and columns and a chart of known figures.
func checkAxes() error {
	seen := map[string]bool{}
	for _, a := range Axes {
		s, ok := LookupSetting(a.Name)
		if !ok || s.Key != a.Name {
			return fmt.Errorf("axis %s: no setting of RunConfig has that key", a.Name)
		}
		kind := reflect.TypeOf(s.Addr(&RunConfig{})).Elem().Kind()
		switch {
		case a.Unit == UnitText && kind != reflect.String, a.Unit != UnitText && kind == reflect.String:
			return fmt.Errorf("axis %s: unit %s on a setting of kind %s", a.Name, a.Unit, kind)
		case a.Flag == "" || a.Usage == "" || a.Title == "" || a.Want == "" || a.Row == nil:
			return fmt.Errorf("axis %s: no flag, usage, title, want or row", a.Name)
		case seen[a.Flag] || seen[a.Name]:
			return fmt.Errorf("axis %s: its name or flag is another axis's", a.Name)
		}
		seen[a.Flag], seen[a.Name] = true, true
		for _, k := range append(slices.Clone(a.Columns), a.Chart...) {
			if _, ok := columns[k]; !ok {
				return fmt.Errorf("axis %s: no column %s", a.Name, k)
			}
		}
		if len(a.Columns) == 0 || len(a.Chart) == 0 {
			return fmt.Errorf("axis %s: no columns or no chart", a.Name)
		}
	}
	return nil
}

package results

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// An axis is a setting of RunConfig that one invocation can step over: --databases steps the
// database's kind, --levels the concurrency, --slots-levels the slots, --rtt-levels the round
// trip added to the database, --pool-levels the load's pool size, --rates the offered rate,
// --batch-levels the queue's batch, --flush-interval-levels the longest a partial batch waits.
// An Axis says everything the kit does with one: its flag and how its values parse and
// are bounded; the setting a run takes its value in (so a run's position on every axis is its
// RunConfig, one place); how values sort; how a row and a ladder name a value; the figures a
// ladder level shows beside the common ones (its columns) and the rule that finds the
// ladder's answer (a knee, a best size, the highest rate within the objective). Package plan
// registers, parses and crosses the axes from this list, the engine hands each run its rung,
// BuildLadders makes one Ladder per mode and stepped axis, and results/render prints and
// plots them, each from the declaration alone.
//
// A new axis is a value added to Axes and the code that reads its setting (the engine or the
// suite, as for any setting). It need not be a number: a text axis (Text) takes names, as the
// database's kind (postgres, mariadb) does. Several axes may be stepped at once (a search over
// mode × slots × pool size × batch): Rungs crosses them, a run records where it stood on each
// (Run.Rung), and SummarizeOver groups runs by any set of axes.
type Axis struct {
	// Name is the key of the RunConfig setting the axis steps (concurrency, slots, db_rtt_ms,
	// max_connections, rate, flush_batch_size, flush_interval_ms): a run takes its value there,
	// a ladder names its axis by it, and a position is keyed by it.
	Name string
	// Flag is the ladder's flag, without the dashes (levels), and Usage its help.
	Flag, Usage string
	// Title names a ladder over the axis in a summary line and a chart ("slot" → "sync slot
	// ladder"); Across names what the ladder steps, for a chart's x axis ("slots per hot row").
	Title, Across string
	// Unit is what a value is: UnitCount (a positive integer), UnitMs (a duration, given as 0
	// or a Go duration such as 200us, recorded in milliseconds), UnitRPS (a positive rate) or
	// UnitText (a name, one of Choices when they are given).
	Unit    string
	Choices []string
	// Want says, in an error, what each value of the flag must be ("a positive integer").
	Want string
	// Min and Max bound a number, inclusive, where the setting's own bounds (its min and max
	// tags) do not, or bound it tighter for a ladder (0: the setting's, else none; a count is
	// at least 1).
	Min, Max float64
	// Unset is the value of a run whose config leaves the setting out (Canonical): one slot,
	// no added round trip, a closed loop. A row names such a run's value off a ladder when it
	// is not Unset (16 slots, a round trip, a rate). Nil: the setting is always recorded, and a
	// row names its value on a ladder only (a concurrency, a pool size, a batch).
	Unset *Value
	// Load says the value is part of the load (a concurrency, a rate): the table's load column
	// shows it rather than the mode's name.
	Load bool
	// Row is how a row names a value beside its mode, given the value as text and the run's
	// config: "· 16 slots by session", "@ 1ms", "· pool 16"; "" says nothing (one slot).
	Row func(v string, c RunConfig) string
	// ForDuration says a rung runs for --duration (unless --requests was given too): a ladder
	// over it needs one.
	ForDuration bool
	// Needs is what an invocation must have for the axis to mean anything: NeedsSlots (a suite
	// whose hot rows split into slots) or NeedsQueue (every mode of --modes with a queue); ""
	// nothing.
	Needs string
	// Columns are the figures a ladder level shows in a summary line, in order (the first
	// leads: "4 → 1,500 rps, p99 35.0 ms, …"), and Chart those drawn against the axis (the
	// first on the left axis with those of its unit, the others on the right).
	Columns, Chart []string
	// Rule finds the ladder's answer (nil: none, the levels speak for themselves).
	Rule *Rule
	// Apart says the values are separate measurements, not steps of one setting (the
	// database's kinds): a ladder over it gives no level as a share of another's, and a table
	// puts its values side by side under each mode.
	Apart bool
}

// Units of an axis's values and of a ladder's figures (Axis.Unit, Column.Unit). UnitMs is also
// the unit tag of RunConfig's millisecond settings.
const (
	UnitCount = "count"
	UnitRPS   = "rps"
	UnitText  = "text"
	UnitShare = "share" // a fraction, 0..1
	UnitBytes = "bytes"
)

// What an axis needs of the invocation (Axis.Needs).
const (
	NeedsSlots = "slots"
	NeedsQueue = "queue"
)

// The axes, in the order Rungs crosses them (the first outermost) and a row names them.
var (
	// AxisDatabase steps the database's kind: each value a server of its own, the same work on
	// each (a temporary one, or the server a URL gives for that kind; mysql is only ever
	// given by URL, and a server given by URL is the kind it says it is). A kind's figures
	// are its own: its runs pair only with runs of the same kind (compare), and a ladder over
	// it has no rule (nothing is found across two engines: the levels speak for themselves).
	AxisDatabase = &Axis{Name: "database", Flag: "databases", Title: "database", Across: "the database's kind",
		Usage: "the same runs on each kind of database, e.g. postgres,mariadb: a temporary server of each, or the server of --postgres-url for postgres and of --mysql-url for mariadb or mysql (named by what it is), each opened when its runs begin and closed after them, their runs tabled side by side per mode",
		Unit:  UnitText, Choices: []string{"postgres", "mariadb", "mysql"}, Want: "postgres, mariadb or mysql", Unset: &Value{Text: "postgres"},
		Row:     func(v string, _ RunConfig) string { return "on " + KindName(v) },
		Columns: []string{MetricThroughputRPS, MetricP99Ms, MetricPersistLagP99Ms, MetricMaxLockWaiters, MetricServerCPUPerRequest},
		Chart:   []string{MetricThroughputRPS, MetricP99Ms}, Apart: true}
	AxisConcurrency = &Axis{Name: "concurrency", Flag: "levels", Title: "concurrency", Across: "concurrency",
		Usage: "concurrency ladder, e.g. 1,2,4,8,64 (one run per mode and level, each for --duration)",
		Unit:  UnitCount, Want: "a positive integer", Load: true, ForDuration: true,
		Row:     func(v string, _ RunConfig) string { return "×" + v },
		Columns: []string{MetricThroughputRPS, MetricP95Ms, MetricP99Ms, MetricPersistLagP99Ms},
		Chart:   []string{MetricThroughputRPS, MetricP95Ms}, Rule: RuleKnee}
	AxisSlots = &Axis{Name: "slots", Flag: "slots-levels", Title: "slot", Across: "slots per hot row",
		Usage: "compare slot counts in one invocation, e.g. 1,4,16,64 (one run per mode and count)",
		Unit:  UnitCount, Want: "a positive integer", Unset: &Value{Num: 1}, Needs: NeedsSlots,
		Row: func(v string, c RunConfig) string {
			switch {
			case v == "1": // a plain row
				return ""
			case c.SlotPick == "" || c.SlotPick == "hash":
				return "· " + v + " slots"
			}
			return "· " + v + " slots by " + c.SlotPick
		},
		Columns: []string{MetricThroughputRPS, ColumnMaxWaiters, ColumnMaxWaitersPerRow, MetricTotalReadP99Ms, MetricPersistLagP99Ms},
		Chart:   []string{MetricThroughputRPS, ColumnMaxWaitersPerRow, MetricTotalReadP99Ms, MetricPersistLagP99Ms},
		Rule:    RuleStopsPaying}
	AxisRTT = &Axis{Name: "db_rtt_ms", Flag: "rtt-levels", Title: "RTT", Across: "round trip added to PostgreSQL",
		Usage: "RTT ladder to PostgreSQL, e.g. 0,200us,1ms,2ms: one run per mode and round trip, each on fresh state",
		Unit:  UnitMs, Want: "a round trip such as 0, 200us or 1ms", Max: 1000, Unset: &Value{},
		Row:     func(v string, _ RunConfig) string { return "@ " + v },
		Columns: []string{MetricRTTP50Ms, MetricThroughputRPS, MetricP99Ms, MetricPersistLagP99Ms, ColumnMaxWaiters, MetricMaxLockWaitMs},
		Chart:   []string{MetricThroughputRPS, MetricP99Ms, MetricPersistLagP99Ms, ColumnMaxWaiters, MetricMaxLockWaitMs}}
	AxisPool = &Axis{Name: "max_connections", Flag: "pool-levels", Title: "pool", Across: "pool size (--pool-levels)",
		Usage: "pool-size ladder over the load's connection pool (--max-connections), e.g. 4,8,16,32,64,128: one run per mode and size, each on fresh state",
		Unit:  UnitCount, Want: "a positive integer (a pool size)", Max: 10000,
		Row: func(v string, _ RunConfig) string { return "· pool " + v },
		Columns: []string{MetricThroughputRPS, MetricP99Ms, MetricPersistLagP99Ms, MetricAcquireWaitP99Ms, MetricMaxLockWaiters,
			MetricMaxLockWaitMs},
		Chart: []string{MetricThroughputRPS, MetricP99Ms, MetricAcquireWaitP99Ms, MetricMaxLockWaiters}, Rule: RuleBest}
	AxisRate = &Axis{Name: "rate", Flag: "rates", Title: "rate", Across: "offered rps",
		Usage: "open-loop rate ladder, requests per second, e.g. 100,200,400,800 (one run per mode and rate, each for --duration)",
		Unit:  UnitRPS, Want: "a positive rate (requests per second)", Unset: &Value{}, Load: true, ForDuration: true,
		Row:     func(v string, _ RunConfig) string { return "@ " + v },
		Columns: []string{MetricAchievedRPS, MetricSentShare, MetricP99Ms, MetricServiceP99Ms, MetricLate, MetricSkipped},
		Chart:   []string{MetricP99Ms, MetricP50Ms, MetricServiceP99Ms, MetricAchievedRPS}, Rule: RuleMaxAtSLO}
	AxisBatch = &Axis{Name: "flush_batch_size", Flag: "batch-levels", Title: "batch", Across: "records per flush (--batch-levels)",
		Usage: "queue batch ladder: the async modes' --flush-batch-size per rung, e.g. 50,200,1000 (one run per mode and size, each on fresh state)",
		Unit:  UnitCount, Want: "a positive integer (records per flush)", Needs: NeedsQueue,
		Row:     func(v string, _ RunConfig) string { return "· batch " + v },
		Columns: []string{MetricThroughputRPS, MetricPersistLagP99Ms, MetricWritesPerUpdate, MetricWALBytesPerRequest},
		Chart:   []string{MetricThroughputRPS, MetricPersistLagP99Ms}, Rule: RuleStopsPaying}
	AxisFlushInterval = &Axis{Name: "flush_interval_ms", Flag: "flush-interval-levels", Title: "flush interval", Across: "longest a partial batch waits, ms (--flush-interval-levels)",
		Usage: "queue flush-interval ladder: the async modes' --flush-interval-ms per rung, e.g. 10,50,200 (one run per mode and interval, each on fresh state)",
		Unit:  UnitCount, Want: "a positive integer (milliseconds)", Needs: NeedsQueue,
		Row:     func(v string, _ RunConfig) string { return "· flush " + v + "ms" },
		Columns: []string{MetricThroughputRPS, MetricPersistLagP99Ms, MetricWritesPerUpdate, MetricWALBytesPerRequest},
		Chart:   []string{MetricThroughputRPS, MetricPersistLagP99Ms}}
)

// Axes lists every axis.
var Axes = []*Axis{AxisDatabase, AxisConcurrency, AxisSlots, AxisRTT, AxisPool, AxisRate, AxisBatch, AxisFlushInterval}

// AxisNamed is the axis whose Name is name; nil when there is none.
func AxisNamed(name string) *Axis {
	if i := slices.IndexFunc(Axes, func(a *Axis) bool { return a.Name == name }); i >= 0 {
		return Axes[i]
	}
	return nil
}

// Value is a position on one axis: a number (a concurrency, a slot count, a round trip in
// milliseconds, a pool size, a rate) or, on a text axis, a name (a database's kind). In JSON
// it is a number or a string. The zero Value is the number 0.
type Value struct {
	Num  float64
	Text string
}

// Number is the value n; Text the name s.
func Number(n float64) Value { return Value{Num: n} }
func Text(s string) Value    { return Value{Text: s} }

// IsText says the value is a name.
func (v Value) IsText() bool { return v.Text != "" }

// String is the value as plain text: the name, or the number in the fewest digits.
func (v Value) String() string {
	if v.IsText() {
		return v.Text
	}
	return strconv.FormatFloat(v.Num, 'f', -1, 64)
}

// Compare orders values: numbers by size, before names, which are in byte order.
func (v Value) Compare(w Value) int {
	switch {
	case v.IsText() != w.IsText():
		if v.IsText() {
			return 1
		}
		return -1
	case v.IsText():
		return strings.Compare(v.Text, w.Text)
	}
	return cmp.Compare(v.Num, w.Num)
}

func (v Value) MarshalJSON() ([]byte, error) {
	if v.IsText() {
		return json.Marshal(v.Text)
	}
	if math.IsInf(v.Num, 0) || math.IsNaN(v.Num) {
		return nil, fmt.Errorf("results: axis value %v is not a JSON number", v.Num)
	}
	return []byte(strconv.FormatFloat(v.Num, 'f', -1, 64)), nil
}

func (v *Value) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		*v = Value{}
		return json.Unmarshal(b, &v.Text)
	}
	*v = Value{}
	return json.Unmarshal(b, &v.Num)
}

// Position is where a run stands on some axes, by axis name: {"max_connections": 16}. A run's
// Rung is its position on the axes its invocation stepped over; a Summary's At the position
// its runs share.
type Position map[string]Value

// Key is the position as one comparable text, the same for equal positions.
func (p Position) Key() string {
	var parts []string
	for _, a := range Axes {
		if v, ok := p[a.Name]; ok {
			parts = append(parts, a.Name+"="+v.String())
		}
	}
	return strings.Join(parts, ",")
}

// Holds says run r stands where p says on every axis p names (p empty: anywhere).
func (p Position) Holds(r Run) bool {
	for name, v := range p {
		if a := AxisNamed(name); a == nil || a.Of(r.Config) != v {
			return false
		}
	}
	return true
}

// Rung is the run's position on the axes its invocation stepped over (its config's Ladder);
// empty off every ladder.
func (r Run) Rung() Position {
	p := Position{}
	for name := range r.Config.Ladder {
		if a := AxisNamed(name); a != nil {
			p[name] = a.Of(r.Config)
		}
	}
	return p
}

// Level is the run's concurrency on a concurrency ladder (--levels), 0 off one: the rung
// the samples, the metrics' labels and baseline compare name a run by.
func (r Run) Level() int {
	if _, ok := r.Config.Ladder[AxisConcurrency.Name]; !ok {
		return 0
	}
	return int(AxisConcurrency.Of(r.Config).Num)
}

// Of is the value config c gives the axis (Unset when c leaves the setting out).
func (a *Axis) Of(c RunConfig) Value {
	var v Value
	switch p := a.setting().Addr(&c).(type) {
	case *int:
		v.Num = float64(*p)
	case *int64:
		v.Num = float64(*p)
	case *float64:
		v.Num = *p
	case *string:
		v.Text = *p
	}
	if a.Unset != nil && v == (Value{}) {
		return *a.Unset
	}
	return v
}

// Set gives config c the value v on the axis.
func (a *Axis) Set(c *RunConfig, v Value) {
	switch p := a.setting().Addr(c).(type) {
	case *int:
		*p = int(v.Num)
	case *int64:
		*p = int64(v.Num)
	case *float64:
		*p = v.Num
	case *string:
		*p = v.Text
	}
}

// setting is the RunConfig setting the axis steps (a test checks every axis has one).
func (a *Axis) setting() Setting {
	s, ok := LookupSetting(a.Name)
	if !ok || s.Key != a.Name {
		panic("results: axis " + a.Name + " names no setting of RunConfig")
	}
	return s
}

// FlagName is the axis's ladder flag with its dashes: "--levels".
func (a *Axis) FlagName() string { return "--" + a.Flag }

// Format writes a value as plain text in the axis's unit: "16", "200µs", "400/s".
func (a *Axis) Format(v Value) string {
	switch {
	case v.IsText():
		return v.Text
	case a.Unit == UnitMs && v.Num == 0:
		return "0"
	case a.Unit == UnitMs:
		return Duration(v.Num).String()
	case a.Unit == UnitRPS:
		return v.String() + "/s"
	}
	return v.String()
}

// Parse reads one value of the axis's flag, as its unit says, and checks its bounds.
func (a *Axis) Parse(s string) (Value, error) {
	s = strings.TrimSpace(s)
	var v Value
	ok := false
	switch a.Unit {
	case UnitCount:
		n, err := strconv.Atoi(s)
		v, ok = Number(float64(n)), err == nil
	case UnitRPS:
		f, err := strconv.ParseFloat(s, 64)
		v, ok = Number(f), err == nil && f > 0 && !math.IsInf(f, 0)
	case UnitMs:
		d, err := time.ParseDuration(s)
		if s == "0" {
			d, err = 0, nil
		}
		v, ok = Number(Milliseconds(d)), err == nil && d >= 0
	case UnitText:
		v, ok = Text(s), s != "" && (a.Choices == nil || slices.Contains(a.Choices, s))
	}
	lo, hi := a.bounds()
	switch {
	case !ok || (a.Unit == UnitCount && v.Num < 1):
		return Value{}, fmt.Errorf("%q is not %s", s, a.Want)
	case v.Num > hi:
		return Value{}, fmt.Errorf("%s is above %s", a.Format(v), a.Format(Number(hi)))
	case v.Num < lo:
		return Value{}, fmt.Errorf("%s is below %s", a.Format(v), a.Format(Number(lo)))
	}
	return v, nil
}

// bounds are the least and the most a value may be: the axis's Min and Max, else its
// setting's min and max tags, else none.
func (a *Axis) bounds() (lo, hi float64) {
	s := a.setting()
	lo, hi = a.Min, a.Max
	if lo == 0 && s.Min != "" {
		lo, _ = strconv.ParseFloat(s.Min, 64)
	}
	if hi == 0 {
		hi = math.Inf(1)
		if s.Max != "" {
			hi, _ = strconv.ParseFloat(s.Max, 64)
		}
	}
	return lo, hi
}

// ParseList reads the axis's flag: values separated by commas, each as Parse reads it,
// returned in order without repeats; errs says what was wrong with each value Parse refused.
func (a *Axis) ParseList(raw string) (vs []Value, errs []error) {
	if raw == "" {
		return nil, nil
	}
	for _, f := range strings.Split(raw, ",") {
		v, err := a.Parse(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		vs = append(vs, v)
	}
	slices.SortFunc(vs, Value.Compare)
	return slices.Compact(vs), errs
}

// Cross is every position of ps extended by each of values on axis a, the positions of ps
// outermost (ps itself when values is empty): the rungs of several axes, crossed one at a time.
func Cross(ps []Position, a *Axis, values []Value) []Position {
	if len(values) == 0 {
		return ps
	}
	var out []Position
	for _, p := range ps {
		for _, v := range values {
			q := Position{a.Name: v}
			for k, pv := range p {
				q[k] = pv
			}
			out = append(out, q)
		}
	}
	return out
}

// Shown is run config c's position on the axes a row names beside its mode: those its
// invocation stepped over, and those it set away from their Unset value.
func Shown(c RunConfig) Position {
	p := Position{}
	for _, a := range Axes {
		v := a.Of(c)
		if _, stepped := c.Ladder[a.Name]; stepped || (a.Unset != nil && v != *a.Unset) {
			p[a.Name] = v
		}
	}
	return p
}

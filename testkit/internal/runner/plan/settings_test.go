package plan

import (
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/queue/redisq"
	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/load"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/redisrun"
	"github.com/hotspotkit/hotspotkit/testkit/servers/pgserver"
	"github.com/hotspotkit/hotspotkit/testkit/servers/redisserver"
	"github.com/hotspotkit/hotspotkit/testkit/suites/usagecounter"
)

// A field of results.RunConfig with a usage tag is all a setting takes: it is a flag of every
// suite, with its tags' help and default, bound to the field, so that what the command line
// sets is what the report records; and the Plan reads it under the field's name.
func TestEverySettingIsAFlag(t *testing.T) {
	c, own, err := newParser(usagecounter.New()) // a suite with slots and hot sets: nothing hidden from it
	if err != nil {
		t.Fatal(err)
	}
	given := map[string]string{}
	n := 0
	for _, s := range results.Settings() {
		f := c.fs.Lookup(s.Flag)
		if s.Usage == "" {
			continue
		}
		n++
		if f == nil {
			t.Errorf("setting %s: no flag --%s", s.Key, s.Flag)
			continue
		}
		if f.Usage != s.Usage || f.Hidden != s.Hidden || own[s.Flag] {
			t.Errorf("--%s: usage %q, hidden %v, the suite's own %v; its tags say %q, hidden %v", s.Flag, f.Usage, f.Hidden, own[s.Flag], s.Usage, s.Hidden)
		}
		if err := f.Value.Set(f.DefValue); err != nil {
			t.Errorf("--%s: its default %q does not parse: %v", s.Flag, f.DefValue, err)
		}
		v := otherValue(s, f.DefValue)
		if err := c.fs.Set(s.Flag, v); err != nil {
			t.Errorf("--%s %s: %v", s.Flag, v, err)
		}
		given[s.Flag] = v
	}
	if n < 40 {
		t.Errorf("only %d settings are flags", n)
	}
	c.checkSettings(func(string, ...any) {})
	c.record(own)
	for _, s := range results.Settings() {
		v, ok := given[s.Flag]
		if !ok {
			continue
		}
		got := reflect.ValueOf(s.Addr(&c.recorded)).Elem().Interface()
		if s.Unit == results.UnitMs {
			d, _ := time.ParseDuration(v)
			v = strconv.FormatFloat(results.Milliseconds(d), 'g', -1, 64)
		}
		if s.Key != "postgres_url" && s.Key != "redis_url" && fmt.Sprint(got) != v { // the URLs are recorded redacted (TestRunConfigRecordsWhatShapesTheRun)
			t.Errorf("--%s %s: the report records %s %v", s.Flag, given[s.Flag], s.Key, got)
		}
	}

	// The Plan's field of a setting's name is the setting's, but for the typed views that
	// stand in its place (and c.Settings.Name is the setting).
	views := []string{"QueueFull", "HotKeyDist", "Arrivals", "Role"}
	plan := reflect.TypeFor[Plan]()
	for i := range reflect.TypeFor[results.RunConfig]().NumField() {
		rf := reflect.TypeFor[results.RunConfig]().Field(i)
		if rf.Tag.Get("usage") == "" {
			continue
		}
		pf, ok := plan.FieldByName(rf.Name)
		if own := ok && slices.Equal(pf.Index, []int{0, 0, i}); own == slices.Contains(views, rf.Name) {
			t.Errorf("Plan.%s is the setting: %v (index %v); a typed view in its place: %v", rf.Name, own, pf.Index, slices.Contains(views, rf.Name))
		}
	}
}

// otherValue is a value of s's flag other than its default def, within its bounds.
func otherValue(s results.Setting, def string) string {
	switch k := reflect.ValueOf(s.Addr(&results.RunConfig{})).Elem().Kind(); {
	case s.Enum != nil:
		return s.Enum[(slices.Index(s.Enum, def)+1)%len(s.Enum)]
	case s.Unit == results.UnitMs:
		return "7ms"
	case k == reflect.Bool:
		return strconv.FormatBool(def != "true")
	case k == reflect.String:
		return "other-" + def
	case k == reflect.Float64:
		return "7.5"
	}
	return "7" // an int: within every bound, and no setting's default
}

// A setting's tags cannot name another package's constant: the ones that mirror one say the
// same, and the views of the settings the engine reads typed convert every value.
func TestSettingsMirrorTheirPackages(t *testing.T) {
	c, _, err := newParser(usagecounter.New())
	if err != nil {
		t.Fatal(err)
	}
	for flag, want := range map[string]string{
		"queue-capacity": strconv.Itoa(queue.DefaultCapacity), "queue-workers": strconv.Itoa(queue.DefaultWorkers),
		"queue-retries": strconv.Itoa(queue.DefaultMaxRetries), "queue-retry-backoff-ms": strconv.Itoa(int(queue.DefaultRetryBackoff / time.Millisecond)),
		"queue-full": queue.PolicySync.String(), "request-timeout": DefaultRequestTimeout.String(),
		"reconcile-timeout": DefaultReconcileTimeout.String(), "shutdown-timeout": DefaultShutdownTimeout.String(),
		"arrivals": string(load.Poisson), "slot-pick": testkit.SlotPickHash,
		"max-deliveries": strconv.Itoa(redisq.DefaultMaxDeliveries), "redis-persist": redisserver.PersistOff,
		"queue-backend": testkit.BackendMemory, "redis": redisrun.Embedded, "role": redisq.RoleBoth.String(),
	} {
		if got := c.engineDefaults[flag]; got != want {
			t.Errorf("--%s defaults to %s, its package's default is %s", flag, got, want)
		}
	}
	for flag, want := range map[string]int{"queue-workers": queue.MaxWorkers, "slots": MaxSlots} {
		if s, _ := results.LookupSetting(flag); s.Max != strconv.Itoa(want) {
			t.Errorf("--%s is at most %s, its package's cap is %d", flag, s.Max, want)
		}
	}
	if s, _ := results.LookupSetting("pg-bin-dir"); !strings.Contains(s.Usage, "$"+pgserver.BinDirEnv+",") {
		t.Errorf("--pg-bin-dir does not name $%s: %q", pgserver.BinDirEnv, s.Usage)
	}
	s, _ := results.LookupSetting("queue-full")
	for _, name := range s.Enum {
		if p, err := queue.ParseFullPolicy(name); err != nil || p.String() != name {
			t.Errorf("--queue-full %s is queue's %v (%v)", name, p, err)
		}
	}
	p := parse(t, usagecounter.New(), "--queue-full Block --drain-timeout 90s --db-rtt 1500us --duration 2s")
	if p.QueueFull != queue.PolicyBlock || p.Settings.QueueFull != "block" || p.DrainTimeout != 90*time.Second ||
		p.DBRTT != 1500*time.Microsecond || p.Duration != 2*time.Second || p.RequestTimeout != DefaultRequestTimeout {
		t.Errorf("views: %v %q %s %s %s %s", p.QueueFull, p.Settings.QueueFull, p.DrainTimeout, p.DBRTT, p.Duration, p.RequestTimeout)
	}
}

// The bounds a setting's tags give are checked with the others, in one line.
func TestSettingsBounds(t *testing.T) {
	for _, s := range results.Settings() {
		for _, b := range []struct {
			tag  string
			past float64
		}{{s.Min, -1}, {s.Max, 1}} {
			if v, err := strconv.ParseFloat(b.tag, 64); err == nil {
				refused(t, usagecounter.New(), fmt.Sprintf("--%s %g", s.Flag, v+b.past), "--"+s.Flag+" must ")
			}
		}
	}
	// How each kind of bound reads; what a setting must agree with is code (validate).
	refused(t, usagecounter.New(), "--queue-workers 65", "--queue-workers must be 1..64")
	refused(t, usagecounter.New(), "--queue-retries -1", "--queue-retries must not be negative")
	refused(t, usagecounter.New(), "--flush-interval-ms 0", "--flush-interval-ms must be at least 1")
	refused(t, usagecounter.New(), "--queue-capacity 2 --queue-workers 3", "--queue-capacity must be at least --queue-workers")
	refused(t, usagecounter.New(), "--queue-full later", `invalid argument "later" for "--queue-full" flag: want drop, sync or block`)
}

// refused checks that Parse refuses args for suite s in one line that says want.
func refused(t *testing.T, s testkit.Suite, args, want string) {
	t.Helper()
	_, err := Parse(s, strings.Fields(args), io.Discard)
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Errorf("%s: error %v, want one line saying %q", args, err, want)
	}
}

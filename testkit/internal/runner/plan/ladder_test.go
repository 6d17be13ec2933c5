package plan

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit/database"
	"github.com/hotspotkit/hotspotkit/testkit/servers/netdelay"
	"github.com/hotspotkit/hotspotkit/testkit/suites/candidates"
	"github.com/hotspotkit/hotspotkit/testkit/suites/usagecounter"
)

// values is a ladder's values as numbers.
func values(vs []results.Value) []float64 {
	var out []float64
	for _, v := range vs {
		out = append(out, v.Num)
	}
	return out
}

// --pool-levels: sizes sorted without repeats, one rung per size (the pool ladder's only
// rungs), the server and calibration sized for the largest, the ladder and the objective in
// every run's config, and each run's pool its rung's.
func TestPoolLevelsAreRungs(t *testing.T) {
	p := parse(t, usagecounter.New(), "--pool-levels 16,4,64,16 --slo-p99-ms 50 --requests 300")
	if got := values(p.Ladder["max_connections"]); !slices.Equal(got, []float64{4, 16, 64}) {
		t.Fatalf("pool levels %v, want [4 16 64]", got)
	}
	var pools []int
	for _, g := range p.Rungs() {
		rc := p.RunConfig(g, 300)
		if len(g) != 1 || rc.Rate != 0 || rc.DBRTTMs != 0 || rc.Concurrency != 100 || p.ForDuration(g) {
			t.Errorf("rung %v: want a closed-loop run bounded by --requests", g)
		}
		if rc.SLOP99Ms != 50 || len(rc.Ladder["max_connections"]) != 3 {
			t.Errorf("recorded ladder %v, slo_p99_ms %v", rc.Ladder, rc.SLOP99Ms)
		}
		pools = append(pools, rc.MaxConnections)
	}
	if !slices.Equal(pools, []int{4, 16, 64}) {
		t.Errorf("rungs' pools %v, want [4 16 64]", pools)
	}
	if p.MaxPool() != 64 {
		t.Errorf("MaxPool %d, want 64 (the largest level, not --max-connections' default)", p.MaxPool())
	}

	// Without the ladder: one rung per mode at --max-connections, which the server fits.
	p = parse(t, usagecounter.New(), "--max-connections 12")
	if g := p.Rungs(); len(g) != 1 || len(g[0]) != 0 || p.RunConfig(g[0], 300).MaxConnections != 12 || p.MaxPool() != 12 {
		t.Errorf("rungs %+v, MaxPool %d: want one at pool 12", g, p.MaxPool())
	}
	if rc := p.RunConfig(nil, 300); rc.Ladder != nil || rc.SLOP99Ms != 0 {
		t.Errorf("a run off a pool ladder records ladder %v, slo_p99_ms %v", rc.Ladder, rc.SLOP99Ms)
	}
}

// Every axis's ladder: each rung a run whose config takes its value; the rungs of a ladder
// over a concurrency or a rate run for --duration.
func TestEveryAxisSteps(t *testing.T) {
	for _, c := range []struct {
		args    string
		axis    *results.Axis
		want    []float64
		timed   bool
		setting func(results.RunConfig) float64
	}{
		{"--levels 8,2 --duration 1s", results.AxisConcurrency, []float64{2, 8}, true, func(c results.RunConfig) float64 { return float64(c.Concurrency) }},
		{"--slots-levels 4,1", results.AxisSlots, []float64{1, 4}, false, func(c results.RunConfig) float64 { return float64(max(c.Slots, 1)) }},
		{"--rtt-levels 1ms,0", results.AxisRTT, []float64{0, 1}, false, func(c results.RunConfig) float64 { return c.DBRTTMs }},
		{"--pool-levels 8,2", results.AxisPool, []float64{2, 8}, false, func(c results.RunConfig) float64 { return float64(c.MaxConnections) }},
		{"--rates 20,10 --duration 1s", results.AxisRate, []float64{10, 20}, true, func(c results.RunConfig) float64 { return c.Rate }},
		{"--batch-levels 1000,50 --modes async,async-compact", results.AxisBatch, []float64{50, 1000}, false, func(c results.RunConfig) float64 { return float64(c.FlushBatchSize) }},
	} {
		p := parse(t, usagecounter.New(), c.args)
		var got []float64
		for _, g := range p.Rungs() {
			rc := p.RunConfig(g, 0)
			got = append(got, c.setting(rc))
			if p.ForDuration(g) != c.timed || !p.Steps(c.axis) || g[c.axis.Name] != c.axis.Of(rc) {
				t.Errorf("%s: rung %v, for --duration %v", c.args, g, p.ForDuration(g))
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: runs at %v, want %v", c.args, got, c.want)
		}
	}
	if p := parse(t, usagecounter.New(), "--slots-levels 1,16,4"); p.Config().Slots != 16 || p.SlotsAt(p.Rungs()[2]) != 16 {
		t.Errorf("a suite seeds the most slots of any rung: %d", p.Config().Slots)
	}
	if p := parse(t, candidates.New(), ""); p.SlotsAt(p.Rungs()[0]) != 0 {
		t.Error("a suite without slots runs at 0")
	}
}

// One rule refuses every ladder's nonsense, in one line before anything starts: a bad value,
// the flag of the setting it steps beside it, two ladders, what the suite or the modes lack, a
// split run, no --duration for a timed ladder; and the objective needs a ladder it judges.
func TestLadderRefusals(t *testing.T) {
	for args, want := range map[string]string{
		"--pool-levels 4,0":                             `--pool-levels: "0" is not a positive integer`,
		"--pool-levels -4":                              `--pool-levels: "-4" is not a positive integer`,
		"--pool-levels 4,eight":                         `--pool-levels: "eight" is not a positive integer`,
		"--pool-levels 4,2.5":                           `--pool-levels: "2.5" is not a positive integer`,
		"--pool-levels 4,":                              `--pool-levels: "" is not a positive integer`,
		"--pool-levels 4,20000":                         "--pool-levels: 20000 is above 10000",
		"--slots-levels 1,4096":                         "--slots-levels: 4096 is above 1024",
		"--rtt-levels 0,5s":                             "--rtt-levels: 5s is above 1s",
		"--rtt-levels 0,fast":                           `--rtt-levels: "fast" is not a round trip`,
		"--rates 0,10 --duration 1s":                    `--rates: "0" is not a positive rate`,
		"--pool-levels 4,8 --max-connections 8":         "--max-connections and --pool-levels exclude each other",
		"--slots-levels 1,4 --slots 4":                  "--slots and --slots-levels exclude each other",
		"--rtt-levels 0,1ms --db-rtt 1ms":               "--db-rtt and --rtt-levels exclude each other",
		"--rates 10,20 --rate 10 --duration 1s":         "--rate and --rates exclude each other",
		"--levels 1,2 --concurrency 4 --duration 1s":    "--concurrency and --levels exclude each other",
		"--pool-levels 4,8 --levels 1,2 --duration 1s":  "--levels and --pool-levels exclude each other (one ladder per invocation)",
		"--pool-levels 4,8 --slots-levels 1,4":          "--slots-levels and --pool-levels exclude each other (one ladder per invocation)",
		"--pool-levels 4,8 --rates 10,20 --duration 1s": "one ladder per invocation",
		"--pool-levels 4,8 --rtt-levels 0,1ms":          "one ladder per invocation",
		"--levels 1,2":                                  "--levels needs --duration",
		"--rates 10,20":                                 "--rates needs --duration",
		"--rate 10 --levels 1,2 --duration 1s":          "--rate cannot be combined with --levels",
		"--slo-p99-ms 50":                               "--slo-p99-ms needs --pool-levels or --rates",
		"--levels 1,2 --duration 1s --slo-p99-ms 50":    "--slo-p99-ms needs --pool-levels or --rates",
		"--pool-levels 4,8 --slo-p99-ms -1":             "--slo-p99-ms must be positive",
		"--pool-levels 4,8 --min-connections 5":         "--min-connections 5 is above the smallest --pool-levels size 4",
		"--rtt-levels 200us,1ms --db-rtt-jitter 500us":  "--db-rtt-jitter 500µs is above the --rtt-levels round trip 200µs",
		"--pool-levels 4,8 --role producer --redis-url redis://localhost:1 --queue-backend redis":  "--role producer cannot be combined with --pool-levels",
		"--slots-levels 1,4 --role consumer --redis-url redis://localhost:1 --queue-backend redis": "--role consumer cannot be combined with --slots-levels",
	} {
		refused(t, usagecounter.New(), args, want)
	}
	refused(t, candidates.New(), "--slots-levels 1,4", "--slots-levels: request_candidate_persistence_baseline has no counter rows to split into slots")
	refused(t, usagecounter.New(), "--batch-levels 50,200", "--batch-levels: sync and outbox have no queue, whose batch it steps (--modes with async modes only)")
	refused(t, usagecounter.New(), "--batch-levels 50,200 --modes async,sync", "--batch-levels: sync has no queue")
	refused(t, usagecounter.New(), "--batch-levels 50,200 --modes async --flush-batch-size 9", "--flush-batch-size and --batch-levels exclude each other")
	refused(t, usagecounter.New(), "--batch-levels 50,200 --modes async --pool-levels 4,8", "--pool-levels and --batch-levels exclude each other (one ladder per invocation)")
}

// A ladder's flag stands right below the setting it steps in --help, hidden where the suite
// lacks what the axis needs.
func TestLadderFlagsInHelp(t *testing.T) {
	var b bytes.Buffer
	if _, err := Parse(usagecounter.New(), []string{"--help"}, &b); !errors.Is(err, ErrHelp) {
		t.Fatal(err)
	}
	line := func(flag string) int {
		return slices.IndexFunc(strings.Split(b.String(), "\n"), func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), flag+" ") })
	}
	for _, a := range results.Axes {
		s, _ := results.LookupSetting(a.Name)
		if i, j := line("--"+s.Flag), line(a.FlagName()); i < 0 || j != i+1 {
			t.Errorf("%s is line %d of --help, --%s line %d", a.FlagName(), j, s.Flag, i)
		}
	}
	b.Reset()
	if _, err := Parse(candidates.New(), []string{"--help"}, &b); !errors.Is(err, ErrHelp) || strings.Contains(b.String(), "--slots-levels") {
		t.Errorf("a suite without slots lists --slots-levels (%v)", err)
	}
}

// The round trip's bound is the proxy's.
func TestRTTAxisBound(t *testing.T) {
	if got := results.Duration(results.AxisRTT.Max); got != netdelay.MaxRTT {
		t.Errorf("the RTT axis is bound at %s, the proxy at %s", got, netdelay.MaxRTT)
	}
}

// --databases: a plan per kind, each its database, dialect and retry classes, its rungs that
// kind's (each run's config records the ladder of both); refused with --database, --advise,
// another ladder, an unknown kind, or a PostgreSQL-only flag with mariadb among them.
func TestDatabasesAreKinds(t *testing.T) {
	p := parse(t, usagecounter.New(), "--databases postgres,mariadb --requests 300 --fault lock-timeout=2000")
	if !slices.Equal(p.Kinds(), []string{"mariadb", "postgres"}) || len(p.Rungs()) != 2 {
		t.Fatalf("kinds %v, rungs %v", p.Kinds(), p.Rungs())
	}
	plans := p.ByKind()
	if len(plans) != 2 {
		t.Fatalf("%d plans", len(plans))
	}
	for i, kind := range []string{"mariadb", "postgres"} {
		k := plans[i]
		rungs := k.Rungs()
		if k.Database != kind || len(rungs) != 1 || rungs[0][results.AxisDatabase.Name] != results.Text(kind) {
			t.Errorf("%s's plan: database %q, rungs %v", kind, k.Database, rungs)
			continue
		}
		rc := k.RunConfig(rungs[0], 300)
		if rc.DatabaseKind() != kind || len(rc.Ladder[results.AxisDatabase.Name]) != 2 {
			t.Errorf("%s's run records kind %q, ladder %v", kind, rc.DatabaseKind(), rc.Ladder)
		}
		if onMySQL := kind == "mariadb"; k.OnMySQL() != onMySQL || slices.Contains(k.RetryClasses, "mysql-1205") != onMySQL {
			t.Errorf("%s's plan: on MySQL %v, retry classes %v", kind, k.OnMySQL(), k.RetryClasses)
		}
	}
	if p.Database != "postgres" || p.RetryClasses == nil {
		t.Errorf("ByKind changed the plan: %q %v", p.Database, p.RetryClasses)
	}
	if one := parse(t, usagecounter.New(), "--requests 300"); len(one.ByKind()) != 1 || one.ByKind()[0] != one || one.Kinds() != nil {
		t.Errorf("without --databases: %v", one.ByKind())
	}
	for args, want := range map[string]string{
		"--databases postgres,oracle":                                          `--databases: "oracle" is not postgres, mariadb or mysql`,
		"--databases postgres,mariadb --database mariadb":                      "--database and --databases exclude each other",
		"--databases postgres,mariadb --pool-levels 4,8":                       "--databases and --pool-levels exclude each other (one ladder per invocation)",
		"--databases postgres,mariadb --pooler pgbouncer":                      "--pooler is PostgreSQL's (PgBouncer, a pooler of PostgreSQL's): not with mariadb in --databases",
		"--databases postgres,mariadb --advise --pool-levels 4,8 --modes sync": "--databases and --advise exclude each other",
	} {
		refused(t, usagecounter.New(), args, want)
	}
}

// --databases with a URL for a kind on the axis: that kind's plan runs on the URL's server
// (and records it, without its password), the others on temporary servers; with mariadb and
// mysql both, the URL is mysql's and mariadb's server the temporary MariaDB.
func TestDatabasesTakeServersByURL(t *testing.T) {
	const pg, my = "postgres://u:secret@pg.example:5432/x", "mysql://u:secret@my.example:3306/"
	for _, c := range []struct {
		args string
		urls map[string]string // kind → the URL its plan runs on ("": a temporary server)
	}{
		{"--databases postgres,mariadb --postgres-url " + pg + " --mysql-url " + my, map[string]string{"postgres": pg, "mariadb": my}},
		{"--databases postgres,mariadb --mysql-url " + my, map[string]string{"postgres": "", "mariadb": my}},
		{"--databases postgres,mariadb --postgres-url " + pg, map[string]string{"postgres": pg, "mariadb": ""}},
		{"--databases postgres,mysql --mysql-url " + my, map[string]string{"postgres": "", "mysql": my}},
		{"--databases mariadb,mysql,postgres --mysql-url " + my, map[string]string{"postgres": "", "mariadb": "", "mysql": my}},
	} {
		p := parse(t, usagecounter.New(), c.args+" --requests 300")
		plans := p.ByKind()
		if len(plans) != len(c.urls) {
			t.Errorf("%s: %d plans", c.args, len(plans))
			continue
		}
		for _, k := range plans {
			want, ok := c.urls[k.Database]
			rc := k.RunConfig(k.Rungs()[0], 300)
			recorded := rc.PostgresURL + rc.MySQLURL
			switch {
			case !ok || k.DatabaseURL() != want || k.OnMySQL() != (k.Database != "postgres"):
				t.Errorf("%s: %s's plan runs on %q (on MySQL %v), want %q", c.args, k.Database, database.RedactURL(k.DatabaseURL()), k.OnMySQL(), database.RedactURL(want))
			case rc.ManagedPostgres != (want == "") || strings.Contains(recorded, "secret") || (want != "") != strings.Contains(recorded, ".example"):
				t.Errorf("%s: %s's run records managed %v, URLs %q %q", c.args, k.Database, rc.ManagedPostgres, rc.PostgresURL, rc.MySQLURL)
			case (k.Database == "postgres" && rc.MySQLURL != "") || (k.Database != "postgres" && rc.PostgresURL != ""):
				t.Errorf("%s: %s's run records the other kind's URL: %q %q", c.args, k.Database, rc.PostgresURL, rc.MySQLURL)
			}
		}
	}
	for args, want := range map[string]string{
		"--databases postgres --mysql-url " + my:                                                      "--mysql-url is the server of mariadb or mysql in --databases, and --databases postgres has neither",
		"--databases mariadb --postgres-url " + pg:                                                    "--postgres-url is the server of postgres in --databases, and --databases mariadb has none",
		"--databases postgres,mysql":                                                                  "mysql in --databases is a MySQL server of yours, given by --mysql-url",
		"--databases postgres,mariadb --mysql-url " + my + " --innodb-deadlock-detect off":            "a --mysql-url server's own is read and recorded",
		"--databases postgres,mariadb --postgres-url " + pg + " --pg-dir /tmp":                        "--pg-dir is where the temporary server is made; with --postgres-url there is none",
		"--databases postgres,mariadb --postgres-url mysql://u@h/":                                    "goes with --mysql-url",
		"--databases postgres,mariadb --mysql-url postgres://h/db":                                    "want mysql://",
		"--databases postgres,mariadb --mysql-url " + my + " --advise --pool-levels 4,8 --modes sync": "--databases and --advise exclude each other",
	} {
		refused(t, usagecounter.New(), args, want)
	}
}

// ServedAs names each kind a server given by URL runs on by what the server says it is,
// before anything starts: a MySQL behind --mysql-url is mysql whatever --databases called it,
// in the ladder, the kind's plan and every run's config; a MariaDB where mysql is asked for
// beside a temporary MariaDB, and a server that does not answer, are refused.
func TestServedAsNamesTheKindByTheServer(t *testing.T) {
	const my = "mysql://u:secret@my.example:3306/"
	reached := map[string]bool{}
	says := func(kind string, err error) func(string, bool) (string, error) {
		return func(url string, mysql bool) (string, error) {
			reached[url] = mysql
			return kind, err
		}
	}
	p := parse(t, usagecounter.New(), "--databases postgres,mariadb --mysql-url "+my+" --requests 300")
	q, notes, err := p.ServedAs(says("mysql", nil))
	if err != nil || !reached[my] || len(reached) != 1 {
		t.Fatalf("ServedAs: %v, reached %v", err, reached)
	}
	if !slices.Equal(q.Kinds(), []string{"mysql", "postgres"}) || !slices.Equal(p.Kinds(), []string{"mariadb", "postgres"}) {
		t.Errorf("kinds %v (the plan given: %v)", q.Kinds(), p.Kinds())
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "mariadb in --databases is --mysql-url's server, a MySQL: its runs are mysql's") {
		t.Errorf("notes %q", notes)
	}
	mysql := q.ByKind()[0]
	rc := mysql.RunConfig(mysql.Rungs()[0], 300)
	if mysql.Database != "mysql" || mysql.DatabaseURL() != my || !mysql.OnMySQL() || rc.DatabaseKind() != "mysql" ||
		!slices.Equal(rc.Ladder[results.AxisDatabase.Name], []results.Value{results.Text("mysql"), results.Text("postgres")}) {
		t.Errorf("the MySQL's plan: %q on %q, its run's kind %q and ladder %v", mysql.Database, database.RedactURL(mysql.DatabaseURL()), rc.DatabaseKind(), rc.Ladder)
	}
	if same, notes, err := p.ServedAs(says("mariadb", nil)); same != p || notes != nil || err != nil {
		t.Errorf("a MariaDB for mariadb: %v %q %v", same == p, notes, err)
	}
	temporary := parse(t, usagecounter.New(), "--databases postgres,mariadb --requests 300")
	clear(reached)
	if same, _, err := temporary.ServedAs(says("mysql", nil)); same != temporary || err != nil || len(reached) != 0 {
		t.Errorf("no URL: reached %v (%v)", reached, err)
	}
	both := parse(t, usagecounter.New(), "--databases mariadb,mysql --mysql-url "+my+" --requests 300")
	if _, _, err := both.ServedAs(says("mariadb", nil)); err == nil || !strings.Contains(err.Error(), "is a MariaDB server, not a MySQL") || strings.Contains(err.Error(), "secret") {
		t.Errorf("a MariaDB as mysql beside the temporary MariaDB: %v", err)
	}
	if _, _, err := p.ServedAs(says("", errors.New("connecting to it: refused"))); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("a server that does not answer: %v", err)
	}
}

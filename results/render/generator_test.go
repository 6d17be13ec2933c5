package render

import (
	"slices"
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/resultstest"
	"github.com/hotspotkit/hotspotkit/results"
)

// withGenerator is the fixtures' single report (sync, async-compact) with generator figures:
// sync's client took 0.44 of the 1.62 cores it and the server spent on saturated cores (the
// limit), async-compact's little of cores with room.
func withGenerator() *results.Report {
	rep := resultstest.SingleReport()
	server := 0.2
	rep.Runs[0].Generator = &results.Generator{WindowMs: 10000, Requests: 20000, MachineCores: 2, ClientCores: 2, ClientCoresBusy: 0.99,
		Client: results.CPUUse{UserS: 1.5, SystemS: 2.9, PerRequestUs: 220, Cores: 0.44, MachineShare: 0.22},
		Server: &results.CPUUse{PerRequestUs: 590, Cores: 1.18, MachineShare: 0.59}, ServerCores: 2, SharedCores: 2,
		SchedLatencyP99Ms: 1.2, GCPauseTotalMs: 3,
		SetUp: &results.Phase{WallMs: 1200, ClientCPUS: 0.05, ServerCPUS: &server}, Verification: &results.Phase{WallMs: 300, ClientCPUS: 0.06, ServerCPUS: &server}}
	rep.Runs[1].Generator = &results.Generator{WindowMs: 625, Requests: 100000, MachineCores: 2, ClientCores: 2, ClientCoresBusy: 0.6,
		Client: results.CPUUse{PerRequestUs: 5, Cores: 0.8, MachineShare: 0.4},
		Server: &results.CPUUse{PerRequestUs: 2, Cores: 0.32, MachineShare: 0.16}, ServerCores: 2, SharedCores: 2,
		SchedLatencyP99Ms: 2, GCPauseTotalMs: 0.5,
		SetUp: &results.Phase{WallMs: 800, ClientCPUS: 0.04, ServerCPUS: &server}, Verification: &results.Phase{WallMs: 100, ClientCPUS: 0.01, ServerCPUS: &server}}
	return rep
}

// TestGeneratorFindings: a run the generator limited gets a finding with the figures of the
// rule that held; the others one saying it did not, with each rule's highest figure.
func TestGeneratorFindings(t *testing.T) {
	got := generatorFindings(withGenerator().Runs)
	want := []string{
		"sync: the generator was the limit: the 2 cores it ran on were 99.0% busy and it took 27.2% of what it and PostgreSQL spent (0.440 cores against 1.18): 22.0% of the machine, 220 µs a request",
		"the generator was not the limit in the other runs: client 40.0% of the machine (0.800 cores of 2, 5 µs a request; the cores it ran on 60.0% busy; PostgreSQL 16.0% of the machine); goroutines' wait for a core p99 7.03% of the persist lag p50; GC pauses 0.080% of the window", // 2 ms of 85.3/3, 0.5 ms of 625
	}
	if !slices.Equal(got, want) {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	rep := withGenerator()
	rep.Runs[0].Generator.ClientCoresBusy = 0.7 // room on the cores: neither run limited
	got = generatorFindings(rep.Runs)
	if len(got) != 1 || !strings.HasPrefix(got[0], "the generator was not the limit in any run: client at most 40.0% of the machine (async-compact: ") ||
		!strings.Contains(got[0], "goroutines' wait for a core p99 at most 9.68% of the request p50 (sync)") { // 1.2 ms of 12.4
		t.Errorf("no run limited: %q", got)
	}
	if got := generatorFindings(resultstest.SingleReport().Runs); got != nil {
		t.Errorf("a report without the figures has findings about them: %q", got)
	}
}

// TestSummaryShowsTheGenerator: the summary's lines say what the client and the server spent
// per request and what the set-up and verification took, and the finding is among the others.
func TestSummaryShowsTheGenerator(t *testing.T) {
	var b strings.Builder
	Summary(&b, withGenerator(), SummaryOptions{Modes: allModes, HotTables: counterHotTables})
	out := strings.Join(strings.Fields(b.String()), " ") // unwrapped
	for _, want := range []string{
		"client CPU (the kit's own) and its share of the 2 cores over the window: sync 220 µs a request, 22.0% (PostgreSQL 590 µs, 59.0%); async-compact 5 µs a request, 40.0% (PostgreSQL 2 µs, 16.0%)",
		"outside the windows, set-up 2.00 s (client 0.090 CPU-s, PostgreSQL 0.400 CPU-s), verification 400 ms (client 0.070 CPU-s, PostgreSQL 0.400 CPU-s), 2 runs in all",
		"- sync: the generator was the limit:",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	Summary(&b, resultstest.SingleReport(), SummaryOptions{Modes: allModes})
	if strings.Contains(b.String(), "client CPU") || strings.Contains(b.String(), "generator") {
		t.Errorf("a report without the figures shows them:\n%s", b.String())
	}
	td := Table([]*results.Report{withGenerator()})
	if c := cellsByTitle(t, td, 0)["client CPU µs/req"]; c != "220" {
		t.Errorf("table cell %q, want 220", c)
	}
}

// TestGeneratorVerdictOnRecordedRuns: TPC-B at scale 10, sync, 64 workers for 20 s, two rounds
// turn about on one busy 2-core machine (runs/weight): sharing both cores with the server,
// the client took over a quarter of what the two spent on saturated cores, and the generator
// was the limit; pinned apart (the server on CPU 0, the client on CPU 1), it used under half of
// its core, and was not.
func TestGeneratorVerdictOnRecordedRuns(t *testing.T) {
	for _, c := range []struct {
		file    string
		bound   bool
		finding string
	}{
		{"tpcb_s10_shared_1", true, "sync: the generator was the limit: the 2 cores it ran on were 98.4% busy and it took 27.2% of what it and PostgreSQL spent (0.467 cores against 1.25): 23.3% of the machine, 190 µs a request; goroutines waited 4.72 ms for a core at p99, 26.5% of the request p50 (17.8 ms)"},
		{"tpcb_s10_shared_2", true, "sync: the generator was the limit: the 2 cores it ran on were 99.5% busy and it took 27.9% of what it and PostgreSQL spent (0.468 cores against 1.21): 23.4% of the machine, 210 µs a request"},
		{"tpcb_s10_pinned_1", false, "the generator was not the limit: client 24.1% of the machine (0.482 cores of 2, 300 µs a request; pinned apart from the server, 48.2% of its 1 core; PostgreSQL 47.6% of the machine); goroutines' wait for a core p99 2.79% of the request p50; GC pauses <0.01% of the window; pool wait <0.01% of a request's time"},
		{"tpcb_s10_pinned_2", false, "the generator was not the limit: client 21.8% of the machine (0.436 cores of 2, 304 µs a request; pinned apart from the server, 43.6% of its 1 core; PostgreSQL 45.2% of the machine); goroutines' wait for a core p99 4.04% of the request p50; GC pauses <0.01% of the window; pool wait <0.01% of a request's time"},
	} {
		rep := readReport(t, "runs/weight/"+c.file+".json")
		r := rep.Runs[0]
		v, ok := results.GeneratorLimit(r)
		if !ok || v.Bound() != c.bound {
			t.Errorf("%s: bound %v (%v), want %v: %+v", c.file, v.Bound(), ok, c.bound, v)
			continue
		}
		// The figures behind the verdict, from the run's own fields.
		g := r.Generator
		if pinnedApart := !c.bound; pinnedApart != (g.SharedCores == 0) || g.Server == nil || g.MachineCores != 2 {
			t.Errorf("%s: server %v on %d cores, %d shared with the client", c.file, g.Server, g.ServerCores, g.SharedCores)
		}
		if c.bound && v.ClientPart != g.Client.Cores/(g.Client.Cores+g.Server.Cores) {
			t.Errorf("%s: the client's part %v", c.file, v.ClientPart)
		}
		if got := Findings(rep, nil); !slices.Contains(got, c.finding) {
			t.Errorf("%s: findings\n%s\nwant among them\n%s", c.file, strings.Join(got, "\n"), c.finding)
		}
	}
}

// onKinds is the generator's report with its runs on the given kinds of database, in turn,
// and the environment saying so (one server, or a ladder over the kinds with one of each).
func onKinds(kinds ...string) *results.Report {
	rep := withGenerator()
	versions := map[string]string{"mariadb": "10.11.14-MariaDB-0+deb12u1", "postgres": "15.18"}
	for i := range rep.Runs {
		if len(kinds) > 1 {
			rep.Runs[i].Config.Ladder = map[string][]results.Value{results.AxisDatabase.Name: {results.Text(kinds[0]), results.Text(kinds[1])}}
		}
		results.AxisDatabase.Set(&rep.Runs[i].Config, results.Text(kinds[i%len(kinds)]))
		rep.Runs[i].Config = rep.Runs[i].Config.Canonical()
	}
	rep.Environment.DatabaseKind, rep.Environment.DatabaseVersion = kinds[0], versions[kinds[0]]
	if len(kinds) > 1 {
		for _, k := range kinds {
			rep.Environment.Databases = append(rep.Environment.Databases, results.DatabaseServer{Kind: k, Version: versions[k], Durability: "on"})
		}
	}
	return rep
}

// A run on MariaDB names MariaDB wherever a PostgreSQL run names PostgreSQL: the server's CPU
// beside the client's, the set-up's, the generator's findings, the header; a ladder over the
// kinds names each run's own, and the header both servers.
func TestSummaryNamesTheRunsDatabase(t *testing.T) {
	for _, wide := range []bool{false, true} {
		var b strings.Builder
		Summary(&b, onKinds("mariadb"), SummaryOptions{Modes: allModes, HotTables: counterHotTables, Wide: wide})
		out := strings.Join(strings.Fields(b.String()), " ")
		for _, want := range []string{"sync on MariaDB 220 µs a request, 22.0% (MariaDB 590 µs, 59.0%)", "(client 0.090 CPU-s, MariaDB 0.400 CPU-s)", "MariaDB 10.11.14"} {
			if !strings.Contains(out, want) {
				t.Errorf("wide %v: the summary lacks %q:\n%s", wide, want, b.String())
			}
		}
		if strings.Contains(out, "PostgreSQL") {
			t.Errorf("wide %v: a MariaDB report's summary names PostgreSQL:\n%s", wide, b.String())
		}
	}
	if got := strings.Join(generatorFindings(onKinds("mariadb").Runs), "\n"); strings.Contains(got, "PostgreSQL") || !strings.Contains(got, "what it and MariaDB spent") ||
		!strings.Contains(got, "MariaDB 16.0% of the machine") {
		t.Errorf("findings of a MariaDB report:\n%s", got)
	}

	var b strings.Builder
	Summary(&b, onKinds("mariadb", "postgres"), SummaryOptions{Modes: allModes, HotTables: counterHotTables})
	out := strings.Join(strings.Fields(b.String()), " ")
	for _, want := range []string{"MariaDB 10.11.14 and PostgreSQL 15.18, durability on", "(MariaDB 590 µs, 59.0%)", "(PostgreSQL 2 µs, 16.0%)",
		"(client 0.090 CPU-s, the database 0.400 CPU-s)", "sync on MariaDB", "async-compact on PostgreSQL"} {
		if !strings.Contains(out, want) {
			t.Errorf("two kinds: the summary lacks %q:\n%s", want, b.String())
		}
	}
}

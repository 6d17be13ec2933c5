// Package script is the suite of a write path the user brings as a pgbench script (-f FILE):
// each request runs the script once, its variables drawn from --seed and the request's index
// (package pgscript), on tables an init file creates (--init-file, run once per run on the
// run's schema). In sync the script runs as written, in one transaction per request. In the
// queue modes its writes are deferred as package sqlshape classifies them against the live
// catalog: an UPDATE of one row by its whole primary key becomes a delta of package counters
// (merged per row under compaction), an INSERT … VALUES an appended row written with the
// batch's claim, a SELECT runs at request time and reads committed state. What cannot be
// deferred without changing what the transaction means is refused for the queue modes before
// anything runs (exit 2), naming the statement's line and the reason.
//
// A request is one part (a batch merges a row's writes whatever request they came in) and is
// claimed with one row in the transaction that writes it — the script's own INSERT where its
// unique key holds :request_id, else the kit's claim table — so a retried or redelivered
// write counts once; the
// verification recomputes every request from its index and checks every declared row
// exactly (package counters), the appended rows exactly once, and the script's other tables
// unchanged.
//
// It owns the mapping from a script to a counters declaration, the sync path as written, and
// the checks of appended rows; the script language is pgscript's, the statements' meaning
// sqlshape's, merging and verifying rows counters', and the lifecycle the engine's.
package script

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/counters"
	"github.com/hotspotkit/hotspotkit/testkit/suites/script/internal/pgscript"
	"github.com/hotspotkit/hotspotkit/testkit/suites/script/internal/sqlshape"
)

// Name is the suite's (and binary's) name.
const Name = "script_hotspot_baseline"

// Suite is the script suite: New, then flags, then Prepare on the run's database.
type Suite struct {
	file, initFile string
	sets           []string
	asWritten      bool // sync without the kit's claim (--as-written)

	script  *pgscript.Script // parsed by Validate
	lexicon pgscript.Dialect // the SQL script was parsed as
	text    string           // the script's text
	defines []pgscript.Define
	init    string // the init file's text
	updated []string
	config  testkit.Config // Validate's

	p *prepared // Prepare's
}

var (
	_ testkit.Suite          = (*Suite)(nil)
	_ testkit.Flagger        = (*Suite)(nil)
	_ testkit.Validator      = (*Suite)(nil)
	_ testkit.Preparer       = (*Suite)(nil)
	_ testkit.Reconciler     = (*Suite)(nil)
	_ testkit.FigureReporter = (*Suite)(nil)
)

// New returns the suite; its flags say which script it runs.
func New() *Suite { return &Suite{} }

// Of is the suite of one script: its file, its init file ("" for none) and its variables
// (NAME=VALUE), as -f, --init-file and --set would give them (which still override them).
func Of(file, initFile string, sets ...string) *Suite {
	return &Suite{file: file, initFile: initFile, sets: sets}
}

// Info describes the suite. Once Validate has read the script, the tables it updates are the
// hot tables whose lock waiters every report lists.
func (s *Suite) Info() testkit.Info {
	return testkit.Info{
		Name:    Name,
		Summary: "your own hot write path, written as a pgbench script (-f), on tables your init file creates",
		Description: `Each request runs the script (-f FILE, pgbench's language: \set with its expressions and
random functions, :variables, -D/--set NAME=VALUE, :client_id = request index mod --concurrency,
:request_id = the request index) once; the init file (--init-file) creates and seeds its tables on
the run's schema before every run. Every variable is drawn from --seed and the request index, so
the kit recomputes every request to verify it.
  sync           the script as written, one transaction per request (its BEGIN/END are the
                 kit's), plus the kit's claim of the request sent with its first statement
                 (--as-written: without it, the transaction pgbench sends)
  outbox         SELECTs run at request time; the writes' deltas go to the outbox in the
                 request's transaction, a flush loop merges them per row and applies them
  async          SELECTs run at request time; the writes are queued and written in batches,
                 every UPDATE on its own
  async-compact  as async, with the UPDATEs of one row merged first: one UPDATE per row per batch
The queue modes defer an UPDATE t SET c = c + e, c = e, greatest(c, e), least(c, e), now() WHERE
<every primary-key column> = e and an INSERT … VALUES; a SELECT there reads committed state, not
the request's own deferred writes. What would change meaning deferred (a WHERE beyond the key, a
CHECK or trigger on a written column, DELETE, DDL, an inexact expression) is refused for them
before anything runs, with its line; it still runs in sync. Every row the script updates is then
checked exactly, every inserted row exactly once, and its other tables unchanged.`,
		Example: Name + " -f examples/scripts/tpcb-like.sql --init-file examples/scripts/tpcb-init.sql --set scale=1 --concurrency 64 --requests 20000 --output /tmp/tpcb.json",
		Modes:   counters.Modes, DefaultModes: counters.Modes, HotTables: s.updated,
		QueueBackends: []string{testkit.BackendMemory, testkit.BackendRedis},
		Slots:         true, // where a table allows it (Prepare)
	}
}

// Flags are the script, its init file and its variables.
func (s *Suite) Flags(fs *pflag.FlagSet) {
	fs.StringVarP(&s.file, "file", "f", s.file, "the pgbench script each request runs (required)")
	fs.StringVar(&s.initFile, "init-file", s.initFile, "SQL run on the run's schema before every run: the script's tables and seed rows (:NAME is --set's NAME, as psql -v)")
	fs.StringArrayVarP(&s.sets, "set", "D", s.sets, "NAME=VALUE: a variable of the script and the init file, as pgbench's -D (repeatable)")
	fs.BoolVar(&s.asWritten, "as-written", s.asWritten, "sync sends the script's statements and nothing else, as pgbench does: no claim of the kit's in the transaction (its INSERT into counter_claims, which finds a request whose outcome was unknown); the rows are then verified against the requests that succeeded. Refused with --max-tries above 1 and --fault, which need the claim")
}

// Validate reads the script and the init file: a missing file, a script pgbench's language
// refuses, a malformed --set is bad input, found before anything starts.
func (s *Suite) Validate(c testkit.Config) error {
	if s.file == "" {
		return errors.New("-f/--file is required: the pgbench script each request runs")
	}
	if err := slotsWithSync(c); err != nil {
		return err
	}
	if s.asWritten && (c.MaxTries > 1 || c.Faulted) {
		return errors.New("--as-written: a retried request (--max-tries above 1) and a fault (--fault, --fault-every) leave requests whose outcome only the kit's claim can tell: drop --as-written or them")
	}
	text, err := os.ReadFile(s.file)
	if err != nil {
		return fmt.Errorf("-f: %w", err)
	}
	s.text = string(text)
	s.defines = s.defines[:0]
	for _, arg := range s.sets {
		d, err := pgscript.ParseDefine(arg)
		if err != nil {
			return fmt.Errorf("--set %w", err)
		}
		s.defines = append(s.defines, d)
	}
	if s.initFile != "" {
		b, err := os.ReadFile(s.initFile)
		if err != nil {
			return fmt.Errorf("--init-file: %w", err)
		}
		s.init = string(b)
	}
	s.config = c
	return s.parse(lexiconOf(c.Dialect))
}

// lexiconOf is the SQL a script for a database of dialect d is written in.
func lexiconOf(d sqldb.Dialect) pgscript.Dialect {
	if d == sqldb.MySQL {
		return pgscript.MySQL
	}
	return pgscript.Postgres
}

// parse parses the script and the init file as SQL of lexicon's, and checks that the script
// binds and that the database's grammar takes every command (before any server starts: the
// grammar's own rejection, with its line); Prepare parses them again when the run's database
// speaks another SQL than Validate took.
func (s *Suite) parse(lexicon pgscript.Dialect) error {
	if s.script != nil && s.lexicon == lexicon {
		return nil
	}
	var err error
	if s.script, err = lexicon.Parse(s.text); err != nil {
		return fmt.Errorf("%s: %w", s.file, err)
	}
	s.lexicon = lexicon
	defines := s.defines
	if s.script.Uses(pgscript.VarScale) && s.vars()[pgscript.VarScale] == "" {
		defines = append(slices.Clone(defines), pgscript.Define{Name: pgscript.VarScale, Value: "1"}) // Prepare counts it, as pgbench
	}
	c := s.config
	if _, err := s.script.Bind(pgscript.Env{Seed: c.Seed, Clients: max(c.Concurrency, 1), Defines: defines}); err != nil {
		return fmt.Errorf("%s: %w", s.file, err)
	}
	grammar := sqlshape.PostgreSQL
	if lexicon == pgscript.MySQL {
		grammar = sqlshape.MySQL
	}
	if err := sqlshape.CheckSyntax(inputs(s.script.Commands()), grammar); err != nil {
		return fmt.Errorf("%s: %w", s.file, err)
	}
	if s.initFile != "" {
		if _, err := lexicon.ParseInit(s.init, s.vars()); err != nil {
			return fmt.Errorf("%s: %w", s.initFile, err)
		}
	}
	s.updated = updatedTables(s.script, lexicon)
	return nil
}

// vars are the --set values, as the init file takes them (a later one wins).
func (s *Suite) vars() map[string]string {
	out := map[string]string{}
	for _, d := range s.defines {
		out[d.Name] = d.Value
	}
	return out
}

var (
	updateTarget      = regexp.MustCompile(`(?is)^\s*update\s+(?:only\s+)?("(?:[^"]|"")+"|[a-z_][a-z0-9_$]*)(?:\s*\.\s*("(?:[^"]|"")+"|[a-z_][a-z0-9_$]*))?`)
	updateTargetMySQL = regexp.MustCompile("(?is)^\\s*update\\s+(?:(?:low_priority|ignore)\\s+)*(`(?:[^`]|``)+`|[a-z0-9_$]+)(?:\\s*\\.\\s*(`(?:[^`]|``)+`|[a-z0-9_$]+))?")
)

// updatedTables are the tables the script's UPDATEs name, for the report's lock waiters (the
// classification proper is Prepare's, on the live catalog): as PostgreSQL folds unquoted
// names to lower case, as MySQL keeps them.
func updatedTables(sc *pgscript.Script, lexicon pgscript.Dialect) []string {
	target := updateTarget
	if lexicon == pgscript.MySQL {
		target = updateTargetMySQL
	}
	var out []string
	for _, c := range sc.Commands() {
		m := target.FindStringSubmatch(c.Text)
		if m == nil {
			continue
		}
		name := m[1]
		if m[2] != "" {
			name = m[2]
		}
		switch {
		case strings.HasPrefix(name, `"`):
			name = strings.ReplaceAll(name[1:len(name)-1], `""`, `"`)
		case strings.HasPrefix(name, "`"):
			name = strings.ReplaceAll(name[1:len(name)-1], "``", "`")
		case lexicon == pgscript.Postgres:
			name = strings.ToLower(name)
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// Prepare runs the init file on the run's schema, reads the catalog, classifies the script's
// statements and refuses, for the queue modes among --modes, what they cannot take.
func (s *Suite) Prepare(ctx context.Context, env testkit.PrepareEnv) error {
	p, err := prepare(ctx, s, env)
	if err != nil {
		return err
	}
	s.p = p
	return nil
}

// Seed recreates the script's tables from the init file (the engine has emptied the schema's
// tables; the init file's CREATE statements need them gone) and records what the run starts
// from.
func (s *Suite) Seed(ctx context.Context, r *testkit.Run) error {
	return s.p.seed(ctx, r)
}

// Workload is one request in r.Mode: the script as written (sync), or its deferred writes.
func (s *Suite) Workload(ctx context.Context, r *testkit.Run) (*testkit.Workload, error) {
	if r.Mode() == testkit.Sync {
		return s.p.syncWorkload(r), nil
	}
	return s.p.queueWorkload(ctx, r)
}

// Verify checks what the applied requests wrote (verify.go).
func (s *Suite) Verify(ctx context.Context, r *testkit.Run, res testkit.Result) ([]results.Check, error) {
	return s.p.verify(ctx, r, res)
}

// Persisted counts every request's claim rows (counters' claim table).
func (s *Suite) Persisted(ctx context.Context, r *testkit.Run, n int64) ([]int32, error) {
	return s.p.persisted(ctx, r, n)
}

// Figures are the queue modes' writes per row UPDATE, by table (counters' Figures).
func (s *Suite) Figures(ctx context.Context, r *testkit.Run) ([]testkit.Figure, error) {
	if s.p.core == nil {
		return nil, nil
	}
	return s.p.core.Figures(ctx, r)
}

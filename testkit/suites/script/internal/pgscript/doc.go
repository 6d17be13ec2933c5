// Package pgscript owns pgbench's script language for the kit: it parses a script as pgbench
// does (SQL commands, \set with pgbench's whole expression grammar and functions, \sleep,
// \if/\elif/\else/\endif), binds it to an environment (the seed, the number of clients, -D
// values) and evaluates one request of it: request i runs the meta commands with its own
// random stream, keydist.NewStream(seed, i), and yields the SQL commands that run for it,
// each with the SQL rewritten with $1, $2 ... placeholders and the typed values to bind. The
// same (seed, request, -D values, clients) always gives the same execution, so any process
// can recompute what a request wrote.
//
// Where the kit differs from pgbench, it is so that a request depends on nothing but those
// inputs: :client_id is the request index modulo the number of clients, :request_id is the
// request index, variables start afresh for every request, the random functions draw from
// the kit's stream (their laws are pgbench's; random_zipfian also accepts exponents in (0, 1)),
// and what would read state from outside (\setshell, \shell, \gset, \aset) is refused, as
// are pipelines. Variables are bound as parameters, never pasted into the SQL text.
//
// It also reads the init file that creates a script's tables (ParseInit): plain SQL, split
// into statements where a script's SQL is split, its variables replaced as text as psql's -v
// replaces them.
//
// The SQL may be PostgreSQL's or MySQL's (Dialect: Parse and ParseInit read PostgreSQL's,
// MySQL.Parse and MySQL.ParseInit MySQL's): the scanner only needs to know its quotes and
// comments to find where a command ends and which :names are variables; what the commands
// mean is the caller's.
//
// The package executes no SQL and knows nothing of suites, modes or the engine.
package pgscript

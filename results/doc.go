// Package results owns the report format of hotspotkit: the JSON report every suite binary
// writes, the NDJSON samples file beside it, their version and how older versions are read,
// and what is computed from a report's runs (repetition summaries, ladders, efficiency, where
// a report is filed). Tables built from reports live in results/render, comparisons and A/Bs
// in results/render/judge, plots in results/render/plot.
//
// # The report
//
// A Report is one invocation of one suite binary: the Environment it measured (machine,
// PostgreSQL, calibration), one Run per mode run (per repetition, ladder level, rate or slot
// count), and the Summaries and ladders computed from those runs. A Run holds its RunConfig
// (what it was configured with, and which of those settings shape the work) beside what was
// measured: Load, Pool, LockMonitor, the Queue or outbox Flush, the Database's account, the
// Verification and Reconciliation of every write.
//
// Conventions: keys are snake_case; numbers are JSON numbers with their unit in the key
// (_ms, _rps, _bytes, _basis_points); times are RFC3339Nano; exact decimal values (NUMERIC
// totals) travel as strings; a field left out holds its zero value, and its doc says what
// that means where zero would mislead.
//
// The JSON Schema of the current version is committed as jsonschema/report.schema.json,
// generated from these types (go generate; a test fails when the two drift apart).
//
// # The samples file
//
// With --output FILE, the monitor's samples go to FILE.samples.ndjson (SamplesPath): one
// Sample per line, optionally opened by a SamplesHeader naming the version. ReadSamples reads
// either.
//
// # Versions
//
// SchemaVersion names the version this package writes, and moves on every change of the
// format, an added field included (its doc lists the versions). Read upgrades a report of any
// earlier version to the current one in one place, a step per version working on the JSON
// document (upgrade.go), so that the types describe one version and no reader copes with an
// older one. Store writes a report it files at the current version.
//
// Package results imports the standard library only, and results/units for the rounding of
// its figures (deps_test.go keeps it so): a report is plain data, so a service, the engine and the baseline tool can all read it without a
// database, a chart library or each other.
package results

//go:generate go test -run TestReportSchema -update .

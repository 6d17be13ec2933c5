// Package sqlshape recognises the SQL statements of a script with the grammar of the
// database they run on — PostgreSQL's own (pganalyze's pg_query_go, which embeds the
// server's parser) or MySQL's (TiDB's parser, github.com/pingcap/tidb/pkg/parser) — and
// decides, against a catalog read from the live database (LoadCatalog: PostgreSQL's
// pg_catalog; LoadMySQLCatalog: MySQL's and MariaDB's information_schema), how each can
// be deferred by the queue modes (outbox, async, async-compact): an UPDATE of one row by
// its whole primary key becomes mergeable writes per column, an INSERT … VALUES appended
// rows, a SELECT runs at request time. Sync runs every statement as written; the
// analysis only refuses the queue modes, each refusal one line naming the statement's
// line and the reason.
//
// It owns the parse, the classification, the refusals, the client-value expressions
// (Expr) with their exact evaluation, and the slot rule. It must not run a statement,
// parse the pgbench script language (its caller hands over each SQL command with its
// variables already replaced by $1, $2, …), or know the engine, the modes' flags or a
// suite.
//
// # Two grammars, one analysis
//
// A grammar's front end (pg.go, mysql.go) reads its own parse tree into the parts the
// analysis judges (syntax.go): the statement's kind, the table it writes, its SET items
// and WHERE, its VALUES, the forms beyond the shapes below (WITH, joins, RETURNING, ON
// CONFLICT or ON DUPLICATE KEY UPDATE, …), and each expression's operator, literal or
// cast, as its database means it. Everything after that — the key, the merge of each
// item, the client values and their evaluation, the constraints, the slot rule — is
// decided once for both. The catalog says which grammar (Catalog.Grammar).
//
// # Statements
//
//   - Update: UPDATE t [AS a] SET … WHERE pk1 = e1 AND … — the WHERE exactly an
//     equality of every primary-key column (each once, either side of =) with a client
//     value, nothing more; no FROM, WITH, RETURNING or sub-select. Each SET item is an
//     Increment (c = c + e, c = e + c, c = c - e, longer sums naming c once), an Assign
//     (c = e: the last write in request order wins), Greatest / Least (c =
//     greatest(c, e), least(e, c)) or a ServerTime (now(), CURRENT_TIMESTAMP,
//     LOCALTIMESTAMP, clock_timestamp(), transaction_timestamp(),
//     statement_timestamp(), CURRENT_DATE, possibly cast: taken when the write lands,
//     so verification checks it for presence only). greatest/least of the column and a
//     server time (last_used = greatest(last_used, now())) is a Greatest / Least with a
//     ServerFunc.
//   - Insert: INSERT INTO t [(cols)] VALUES (…)[, (…)] or DEFAULT VALUES, every value
//     a client value, a server time or DEFAULT; no ON CONFLICT, RETURNING, SELECT
//     source, WITH or OVERRIDING. Several rows are supported: each is appended.
//   - Select: any SELECT without a locking clause, a write inside WITH or INTO. In the
//     queue modes it reads committed state, not the request's own deferred writes.
//     Functions with side effects (nextval, advisory locks) are not detected.
//   - LockingRead: SELECT … FOR UPDATE / NO KEY UPDATE / SHARE / KEY SHARE, anywhere in
//     the statement. Refused: the writes it locks rows for no longer happen under its
//     lock.
//   - TxControl: BEGIN, START TRANSACTION, COMMIT, END (the kit wraps each request in a
//     transaction of its own); ROLLBACK, and BEGIN with options other than READ
//     COMMITTED / READ WRITE, are refused.
//   - Other: everything else — DELETE, TRUNCATE, DDL, MERGE, COPY, SET, CALL, DO, an
//     UPDATE or INSERT of another shape, several statements in one command.
//
// # Client values
//
// A client value is what the kit evaluates itself, exactly, from a request's
// parameters: $n, an integer, decimal, string, boolean or NULL literal, a cast of one,
// unary minus, and + - * between them. An expression without parameters is evaluated
// once, at analysis, and refused if it fails: it would fail for every request.
//
// Integers are int64, an overflow an error. A decimal literal (0.001, -2.50, 1e-3:
// PostgreSQL's grammar makes each a numeric constant) is a decimal.Decimal: an int64 in
// units of 10⁻⁸, the amount testkit/counters keeps, with the display scale PostgreSQL
// keeps for its text (2.50 shows two places). More than 8 places, trailing zeros counted as PostgreSQL
// counts them, is refused ("0.000000001 has more than 8 decimal places: the kit adds
// numerics exactly to 10⁻⁸"). + and - of decimals and integers are exact, beyond
// ±92233720368.54775807 an error; a product is exact when its places (the sum of its
// factors' display scales, as PostgreSQL's exact product has) are at most 8 (0.5 *
// 0.25), an error otherwise (0.00001 * 0.0001).
//
// A string operand (a parameter or a quoted literal, of no type of its own) takes its
// type as PostgreSQL gives it, the other operand's: an integer beside an integer ($1 + 1
// with '4.5' is an error), a decimal beside a decimal. In an increment of a numeric
// column each term of the sum is added to the column, so c = c + $1 + 1 reads $1 as a
// decimal. A string standing alone is read by the column it goes to, as PostgreSQL's
// input for that type reads it: '0.001' is a decimal in a numeric column, an error in an
// integer one (a caller passes a pgbench double as its shortest decimal text).
//
// Casts to int2/int4/int8 are range-checked (a decimal rounds half away from zero, as
// PostgreSQL's casts round it); numeric keeps integers and decimals exact, and
// numeric(p,s) refuses a value it would round or that overflows it (a scale above 8 or
// below 0 is refused outright); text and bool convert; a cast to another type (uuid,
// date, …) passes the value through for PostgreSQL to convert and cannot be added or
// compared. Refused as inexact: columns (c = c * 2, c = c + $1 * c), functions
// (random()), sub-selects, other operators (/, %, ||), casts to float4/float8 and to
// char(n)/varchar(n) (which pad or cut). PostgreSQL may evaluate a sub-expression in
// int4 and fail where the kit's int64 does not, and it cannot type a sum whose first two
// terms are untyped (c = $1 - $2 + c), which the kit reads as decimals; sync and the
// caller's verification are the backstop.
//
// Increments are exact on int2, int4, int8 and numeric columns (not a numeric with a
// negative scale, which rounds every write). A float4/float8 column is refused: sums of
// floats taken in another order may differ. Greatest/least with a client value take
// integer and numeric columns only. Decimals go to numeric columns whose scale keeps
// their places (or with no typmod): a decimal literal with more places than a numeric
// column's scale, or any fraction for an integer column, is refused in an increment,
// greatest/least, assignment or insert (each write would round, and a merged write
// rounds once); a parameter that evaluates to one fails its request (SetItem.Eval,
// RowInsert.Values). An assigned value may otherwise go to a column of any type. A key
// value its column cannot hold (a fraction for an integer key) names no row: refused.
//
// # Row identity
//
// An UPDATE is deferred only when it names one row by its whole primary key: the kit
// merges writes per key, so two requests must name the same row exactly when their
// keys are equal. A unique constraint does not stand in for a missing primary key: its
// columns may be NULL, deferrable, or assigned by another statement of the script (the
// row's identity would move under the merge), and the slots and claims of the caller
// need one identity per table. Key columns must be of a type whose equality the kit
// reproduces (Column.Compare): integers, numeric (to 8 places, display scale aside),
// text and varchar under a deterministic collation, uuid (canonicalised).
//
// # What can fail differently
//
// A deferred UPDATE is refused where merged or reordered writes could pass or fail
// differently from the writes one by one, or fire something differently: a written
// column under a CHECK (the table's or its domain's; qty >= 0 lets a sync request fail
// that a merged sum lets through), a unique index or exclusion constraint, or a
// foreign key; a table with a trigger or a rule, row-level security, inheritance
// children, or that is partitioned, a view or foreign. An INSERT is refused for the
// table-level reasons only: its CHECKs, unique and foreign keys decide on the row's
// own values, whatever the order (a row failing them fails its batch loudly). The
// ranges of integer types act as a CHECK the analysis cannot see (an int4 sum near its
// bound); SetItem.Eval refuses a single out-of-range delta.
//
// A script's statements are also judged together (ConflictingWrites): a column takes
// one kind of write across the script (incremented at one line and assigned at another
// cannot merge into one write), and a table is either inserted into or updated.
//
// # Slots
//
// A table may be split into slots (--slots N: N physical rows per logical row, each
// write adding to one, reads summing them) only if every statement of the script that
// writes it is an Update whose every SET item on it is an Increment — sums split across
// rows add back up, while an assignment, greatest/least or server time on one slot's
// row is not the logical row's — and the table has no CHECK (table or domain: it
// would hold for each slot's part, not the total), no trigger or rule, no unique index
// besides the primary key (each slot repeats the row's values), no foreign key of
// another table referencing it (the referenced key would no longer be unique), and is a
// plain table without inheritance children or row-level security. The SELECTs that
// read such a table (SlotVerdict.ReadBy) read one slot's part unless they read the sum.
//
// The grammar is that of pg_query_go v6 (PostgreSQL 17's parser); it accepts some
// syntax older servers reject, which sync then reports as the server's error.
//
// # MySQL and MariaDB
//
// MySQL's statements are read by TiDB's parser, under the server's sql_mode and, on
// MariaDB, with its extensions the parser knows; a statement it rejects (INSERT …
// RETURNING, which MariaDB has and the grammar does not, among them) is an error for every
// mode, as PostgreSQL's grammar's are. The script's variables reach it as the ?s the
// MySQL adapters send (sqldb.Placeholders); a ? of the script's own is refused. What
// MySQL means differently is read as it means it: TRUE and FALSE are 1 and 0; 1.50 is an
// exact DECIMAL literal and 1e3 a DOUBLE (refused where the kit would compute with it);
// CAST(x AS SIGNED) and UNSIGNED are 64-bit integers (a negative UNSIGNED, which wraps
// around, is an error), DECIMAL alone is DECIMAL(10,0), CHAR(n) cuts; NOW(),
// CURRENT_TIMESTAMP, SYSDATE(), UTC_TIMESTAMP() and their kin (with a precision or none)
// are server times; column names compare without case. Its forms beyond the deferred
// shapes are refused with the reason: UPDATE of several tables, ORDER BY / LIMIT, IGNORE,
// REPLACE, ON DUPLICATE KEY UPDATE, a PARTITION clause, SELECT … INTO.
//
// The catalog reads MySQL's types into the classes above: every integer type with its own
// range (TINYINT -128..127, an UNSIGNED one from 0), DECIMAL(p, s) as numeric(p, s),
// FLOAT and DOUBLE as floats, CHAR, VARCHAR and the TEXTs as strings. An UNSIGNED column
// acts as CHECK (c >= 0): incremented, it is refused as a checked column is (each value
// assigned to it is checked on its own), and it keeps its table from slots. A string key
// is one only under a binary collation that does not pad (utf8mb4_nopad_bin,
// utf8mb4_0900_bin): under any other, 'a', 'A' and 'a ' can name one row. A CHECK
// constraint's columns, and those a generated column reads (a unique index on one
// constrains them), are read from their expressions with MySQL's grammar; a unique index
// on an expression (MySQL 8) is taken to read every column. A table of an engine without
// transactions (MyISAM, MEMORY) or system-versioned (MariaDB) is refused for deferral. The
// catalog's reads run on MariaDB 10.6 and later; those that differ on MySQL 8 (its CHECK
// constraints) are written to its documented information_schema, not run here.
package sqlshape

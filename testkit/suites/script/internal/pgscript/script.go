package pgscript

import (
	"fmt"
	"strconv"
	"strings"
)

// Error is an error in a script, at a line (1-based). Parse and Bind return it for what they
// refuse; Eval for what an evaluation hits.
type Error struct {
	Line int
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

func errorAt(line int, format string, args ...any) *Error {
	return &Error{Line: line, Msg: fmt.Sprintf(format, args...)}
}

// Command is one SQL command of a script.
type Command struct {
	// Index is the command's position in Script.Commands().
	Index int
	// Line is the line (1-based) of the command's first character.
	Line int
	// Text is the command as written: from its first character, leading comments and
	// whitespace skipped, to its terminating semicolon, which is left out.
	Text string
	// SQL is Text with each :variable outside quotes and comments replaced by a placeholder,
	// $1, $2 ... in order of appearance (a variable used twice gets two), as pgbench's
	// extended and prepared modes do. A :: cast is not a variable.
	SQL string
	// Params are the variables bound to the placeholders: Params[k] to $k+1.
	Params []string
	// Conditional is true for a command inside an \if block, which some requests may skip.
	Conditional bool
	// quoted are the names that look like :variables inside a quoted string or identifier;
	// Bind refuses those that are variables.
	quoted []string
}

type metaKind int

const (
	metaSet metaKind = iota
	metaSleep
	metaIf
	metaElif
	metaElse
	metaEndif
)

// command is a command of the script: SQL (sql set) or meta.
type command struct {
	line int
	sql  *Command
	meta metaKind
	// name is \set's variable.
	name string
	// expr is \set's value, \if's and \elif's condition.
	expr expr
	// sleep is \sleep's amount.
	sleep sleepArg
}

// sleepArg is \sleep's amount: a constant or a variable, times a unit.
type sleepArg struct {
	micros   int64
	variable string
	unit     int64 // microseconds per unit
}

// Script is a parsed pgbench script. It is immutable; Bind gives a Program for an environment.
type Script struct {
	commands []command
	sql      []*Command
	uses     map[string]bool
	sets     map[string]bool
}

// Commands are the script's SQL commands, in order.
func (s *Script) Commands() []*Command { return s.sql }

// Sleeps reports whether the script has a \sleep: a request takes its time.
func (s *Script) Sleeps() bool {
	for _, c := range s.commands {
		if c.meta == metaSleep {
			return true
		}
	}
	return false
}

// Uses reports whether the script reads the variable: in an expression (hash and permute
// without a seed read default_seed), as an SQL parameter or as a \sleep amount. A caller
// gives :scale with -D when the script uses it; pgbench would count pgbench_branches.
func (s *Script) Uses(name string) bool { return s.uses[name] }

// Parse parses a pgbench script as pgbench does: SQL commands end at a semicolon outside
// quotes, comments and parentheses (or where a meta command starts), meta commands start with
// a backslash and end at the end of the line (a backslash right before the newline continues
// them). It refuses what would make a request depend on something other than the seed, the
// request index and -D: \setshell, \shell, \gset, \aset; and \startpipeline,
// \syncpipeline, \endpipeline, \; (several statements in one command), and any unknown meta
// command.
func Parse(text string) (*Script, error) { return Postgres.Parse(text) }

// Dialect is the SQL a script's commands and an init file's statements are written in: what
// the scanner must know to find where a command ends and where its :variables are (quotes,
// comments), not what the commands mean.
type Dialect uint8

const (
	// Postgres is PostgreSQL's SQL, as pgbench and psql scan it: '…' (E'…' with backslash
	// escapes), "…" names, $tag$…$tag$ strings, -- comments, /* */ comments that nest.
	Postgres Dialect = iota
	// MySQL is MySQL's and MariaDB's, as their client scans it: '…' and "…" strings with
	// backslash escapes (the default sql_mode's), `…` names, # and "-- " comments (a dash
	// pair followed by a space or control character), /* */ comments that do not nest.
	MySQL
)

// Parse is Parse for a script in d's SQL.
func (d Dialect) Parse(text string) (*Script, error) {
	sc := newScanner(text)
	sc.dialect = d
	if err := sc.run(); err != nil {
		return nil, err
	}
	if len(sc.script.commands) == 0 {
		return nil, &Error{Line: sc.line, Msg: "the script has no command"}
	}
	return sc.script, nil
}

// sqlRef is a :variable in an SQL command, at src[start:end]. quote is ' or " for an init
// file's :'name' and :"name", 0 for :name.
type sqlRef struct {
	start, end int
	name       string
	quote      byte
}

type scanner struct {
	src     string
	i       int
	line    int
	script  *Script
	dialect Dialect

	// initFile makes the scanner read an init file (ParseInit): plain SQL, in which a
	// backslash command is an error and each variable is replaced by its value from vars.
	initFile bool
	vars     map[string]string

	// The SQL command being read: start is -1 when none.
	start, startLine, depth int
	refs                    []sqlRef
	quoted                  []string
	// lastWord is the identifier that ended at lastWordEnd, to tell E'...' strings.
	lastWord    string
	lastWordEnd int

	// ifs are the lines of the open \if blocks, and whether each has had its \else.
	ifs []openIf
}

type openIf struct {
	line    int
	hadElse bool
}

func newScanner(text string) *scanner {
	return &scanner{src: text, line: 1, script: &Script{uses: map[string]bool{}, sets: map[string]bool{}}}
}

func (sc *scanner) run() error {
	sc.start = -1
	for sc.i < len(sc.src) {
		c := sc.src[sc.i]
		switch {
		case c == '\n':
			sc.line++
			sc.i++
		case isSpace(c):
			sc.i++
		case sc.lineComment():
			for sc.i < len(sc.src) && sc.src[sc.i] != '\n' {
				sc.i++
			}
		case c == '/' && sc.peekIs(1, '*'):
			if err := sc.blockComment(); err != nil {
				return err
			}
		case c == '\\':
			if err := sc.backslash(); err != nil {
				return err
			}
		case c == ';' && sc.depth == 0:
			sc.begin()
			if err := sc.endSQL(sc.i); err != nil {
				return err
			}
			sc.i++
		default:
			sc.begin()
			if err := sc.token(); err != nil {
				return err
			}
		}
	}
	if sc.start >= 0 {
		if err := sc.endSQL(len(sc.src)); err != nil {
			return err
		}
	}
	if n := len(sc.ifs); n > 0 {
		return errorAt(sc.ifs[n-1].line, `\if without matching \endif`)
	}
	return nil
}

func (sc *scanner) peekIs(offset int, c byte) bool {
	return sc.i+offset < len(sc.src) && sc.src[sc.i+offset] == c
}

// lineComment says whether a comment to the end of the line starts at the current
// character: -- in PostgreSQL; # or "-- " in MySQL.
func (sc *scanner) lineComment() bool {
	c := sc.src[sc.i]
	if sc.dialect == MySQL {
		return c == '#' || c == '-' && sc.peekIs(1, '-') && (sc.i+2 == len(sc.src) || sc.src[sc.i+2] <= ' ')
	}
	return c == '-' && sc.peekIs(1, '-')
}

// begin marks the start of an SQL command at the current character if none is open.
func (sc *scanner) begin() {
	if sc.start < 0 {
		sc.start, sc.startLine, sc.depth = sc.i, sc.line, 0
		sc.refs, sc.quoted = nil, nil
	}
}

// advanceTo moves to end, counting the newlines passed.
func (sc *scanner) advanceTo(end int) {
	sc.line += strings.Count(sc.src[sc.i:end], "\n")
	sc.i = end
}

// blockComment skips a /* */ comment, which nests as in PostgreSQL (not in MySQL).
func (sc *scanner) blockComment() error {
	line := sc.line
	depth := 0
	for j := sc.i; j < len(sc.src)-1; j++ {
		switch {
		case sc.src[j] == '/' && sc.src[j+1] == '*' && (depth == 0 || sc.dialect != MySQL):
			depth++
			j++
		case sc.src[j] == '*' && sc.src[j+1] == '/':
			depth--
			j++
			if depth == 0 {
				sc.advanceTo(j + 1)
				return nil
			}
		}
	}
	return errorAt(line, "unterminated /* comment")
}

// token reads one token of an SQL command: a quoted string or identifier, a dollar-quoted
// string, a word, a number, a :variable, a :: cast, a parenthesis or another character.
func (sc *scanner) token() error {
	src, i := sc.src, sc.i
	c := src[i]
	switch {
	case c == '\'':
		escapes := sc.dialect == MySQL || sc.lastWordEnd == i && strings.EqualFold(sc.lastWord, "e")
		return sc.quotedText('\'', escapes)
	case c == '"':
		return sc.quotedText('"', sc.dialect == MySQL)
	case c == '`' && sc.dialect == MySQL:
		return sc.quotedText('`', false)
	case c == '$' && sc.dialect != MySQL:
		if tag := dollarTag(src[i:]); tag != "" {
			line := sc.line
			end := strings.Index(src[i+len(tag):], tag)
			if end < 0 {
				return errorAt(line, "unterminated dollar-quoted string")
			}
			bodyEnd := i + len(tag) + end
			sc.noteQuoted(src[i+len(tag) : bodyEnd])
			sc.advanceTo(bodyEnd + len(tag))
			return nil
		}
		sc.i++
	case isNameStart(c):
		j := i + 1
		for j < len(src) && (isNameChar(src[j]) || src[j] == '$') {
			j++
		}
		sc.lastWord, sc.lastWordEnd = src[i:j], j
		sc.i = j
	case isDigit(c):
		j := i + 1
		for j < len(src) && (isNameChar(src[j]) || src[j] == '.') {
			j++
		}
		sc.i = j
	case c == ':':
		j := i + 1
		if j < len(src) && src[j] == ':' {
			for j < len(src) && src[j] == ':' {
				j++
			}
		} else if j < len(src) && isNameStart(src[j]) {
			for j < len(src) && isNameChar(src[j]) {
				j++
			}
			sc.refs = append(sc.refs, sqlRef{start: i, end: j, name: src[i+1 : j]})
		} else if sc.initFile && j < len(src) && (src[j] == '\'' || src[j] == '"') {
			if ref, ok := quotedRef(src, i); ok {
				sc.refs = append(sc.refs, ref)
				j = ref.end
			}
		}
		sc.i = j
	case c == '(':
		sc.depth++
		sc.i++
	case c == ')':
		if sc.depth > 0 {
			sc.depth--
		}
		sc.i++
	default:
		sc.i++
	}
	return nil
}

// quotedText reads a string ('...', E'...' when escapes; MySQL's "..." too) or a quoted
// identifier ("...", MySQL's `...`).
func (sc *scanner) quotedText(quote byte, escapes bool) error {
	src, line := sc.src, sc.line
	for j := sc.i + 1; j < len(src); j++ {
		switch {
		case escapes && src[j] == '\\':
			j++
		case src[j] == quote:
			if j+1 < len(src) && src[j+1] == quote {
				j++
				continue
			}
			sc.noteQuoted(src[sc.i+1 : j])
			sc.advanceTo(j + 1)
			return nil
		}
	}
	if quote == '`' || quote == '"' && sc.dialect != MySQL {
		return errorAt(line, "unterminated quoted identifier")
	}
	return errorAt(line, "unterminated quoted string")
}

// noteQuoted records the :names inside quoted text: pgbench's simple mode would substitute
// variables there as text, which a bound parameter cannot do.
func (sc *scanner) noteQuoted(body string) {
	for k := strings.IndexByte(body, ':'); k >= 0; k = strings.IndexByte(body, ':') {
		body = body[k+1:]
		n := 0
		if len(body) > 0 && isNameStart(body[0]) {
			for n < len(body) && isNameChar(body[n]) {
				n++
			}
			sc.quoted = append(sc.quoted, body[:n])
		}
		body = body[n:]
	}
}

// dollarTag is the $tag$ (or $$) opening a dollar-quoted string at the start of s, or "".
func dollarTag(s string) string {
	j := 1
	if j < len(s) && isNameStart(s[j]) {
		for j < len(s) && isNameChar(s[j]) {
			j++
		}
	}
	if j < len(s) && s[j] == '$' {
		return s[:j+1]
	}
	return ""
}

// endSQL closes the open SQL command at end (its semicolon, a backslash or the end).
func (sc *scanner) endSQL(end int) error {
	text := strings.TrimRight(sc.src[sc.start:end], " \t\r\n\f\v")
	start := sc.start
	sc.start = -1
	if text == "" {
		return nil
	}
	cmd := &Command{Index: len(sc.script.sql), Line: sc.startLine, Text: text, Conditional: len(sc.ifs) > 0, quoted: sc.quoted}
	var sql strings.Builder
	prev := start
	for k, r := range sc.refs {
		sql.WriteString(sc.src[prev:r.start])
		if sc.initFile {
			value, err := initValue(sc.src, r, sc.vars, sc.dialect)
			if err != nil {
				return errorAt(sc.startLine+strings.Count(sc.src[start:r.start], "\n"), "%v", err)
			}
			sql.WriteString(value)
		} else {
			sql.WriteString("$" + strconv.Itoa(k+1))
		}
		prev = r.end
		cmd.Params = append(cmd.Params, r.name)
		sc.script.uses[r.name] = true
	}
	sql.WriteString(text[prev-start:])
	cmd.SQL = sql.String()
	sc.script.sql = append(sc.script.sql, cmd)
	sc.script.commands = append(sc.script.commands, command{line: cmd.Line, sql: cmd})
	return nil
}

// backslash handles a backslash outside quotes: the end of the open SQL command and a meta
// command to the end of the line.
func (sc *scanner) backslash() error {
	line := sc.line
	if sc.initFile {
		rest := sc.src[sc.i+1:]
		if end := strings.IndexByte(rest, '\n'); end >= 0 {
			rest = rest[:end]
		}
		name, _ := nextWord(rest)
		return errorAt(line, `\%s: an init file is plain SQL; backslash commands (psql's or pgbench's) are not run`, name)
	}
	if sc.peekIs(1, ';') {
		return errorAt(line, `"\;" (several statements in one command) is not supported: end each statement with ";"`)
	}
	if sc.peekIs(1, ':') {
		return errorAt(line, `"\:" is not supported`)
	}
	if sc.start >= 0 {
		if err := sc.endSQL(sc.i); err != nil {
			return err
		}
	}
	var meta strings.Builder
	j := sc.i + 1
	for j < len(sc.src) && sc.src[j] != '\n' {
		if sc.src[j] == '\\' {
			if rest := sc.src[j+1:]; strings.HasPrefix(rest, "\n") || strings.HasPrefix(rest, "\r\n") {
				meta.WriteByte(' ')
				j += 1 + strings.IndexByte(rest, '\n') + 1
				sc.line++
				continue
			}
		}
		meta.WriteByte(sc.src[j])
		j++
	}
	sc.i = j
	return sc.metaCommand(line, meta.String())
}

// nextWord splits the first whitespace-separated word off s.
func nextWord(s string) (word, rest string) {
	s = strings.TrimLeft(s, " \t\r\f\v")
	end := strings.IndexAny(s, " \t\r\f\v")
	if end < 0 {
		return s, ""
	}
	return s[:end], s[end:]
}

// refusals are the meta commands a request cannot have: each says why.
var refusals = map[string]string{
	"setshell":      `sets a variable from a shell command: a request would no longer be recomputable from the seed and its index`,
	"shell":         `runs a shell command, which the kit does not run`,
	"gset":          `stores a query's result in variables: a request would no longer be recomputable from the seed and its index`,
	"aset":          `stores a query's result in variables: a request would no longer be recomputable from the seed and its index`,
	"startpipeline": `pipelines are not supported`,
	"syncpipeline":  `pipelines are not supported`,
	"endpipeline":   `pipelines are not supported`,
}

func (sc *scanner) metaCommand(line int, meta string) error {
	name, rest := nextWord(meta)
	lower := strings.ToLower(name)
	if why, refused := refusals[lower]; refused {
		return errorAt(line, `\%s is not supported: it %s`, name, why)
	}
	cmd := command{line: line}
	switch lower {
	case "set":
		variable, exprText := nextWord(rest)
		if variable == "" {
			return errorAt(line, `\set: missing variable name`)
		}
		if !validVariableName(variable) {
			return errorAt(line, `\set: invalid variable name %q`, variable)
		}
		e, err := sc.expression(line, `\set `+variable, exprText)
		if err != nil {
			return err
		}
		cmd.meta, cmd.name, cmd.expr = metaSet, variable, e
		sc.script.sets[variable] = true
	case "if", "elif":
		if lower == "elif" {
			if len(sc.ifs) == 0 {
				return errorAt(line, `\elif without matching \if`)
			}
			if sc.ifs[len(sc.ifs)-1].hadElse {
				return errorAt(line, `\elif after \else`)
			}
		}
		e, err := sc.expression(line, `\`+lower, rest)
		if err != nil {
			return err
		}
		cmd.meta, cmd.expr = metaIf, e
		if lower == "elif" {
			cmd.meta = metaElif
		} else {
			sc.ifs = append(sc.ifs, openIf{line: line})
		}
	case "else", "endif":
		if extra := strings.TrimSpace(rest); extra != "" {
			return errorAt(line, `\%s: unexpected argument %q`, lower, extra)
		}
		if len(sc.ifs) == 0 {
			return errorAt(line, `\%s without matching \if`, lower)
		}
		top := &sc.ifs[len(sc.ifs)-1]
		if lower == "else" {
			if top.hadElse {
				return errorAt(line, `\else after \else`)
			}
			top.hadElse = true
			cmd.meta = metaElse
		} else {
			sc.ifs = sc.ifs[:len(sc.ifs)-1]
			cmd.meta = metaEndif
		}
	case "sleep":
		arg, err := parseSleep(line, rest)
		if err != nil {
			return err
		}
		if arg.variable != "" {
			sc.script.uses[arg.variable] = true
		}
		cmd.meta, cmd.sleep = metaSleep, arg
	default:
		return errorAt(line, `invalid command \%s`, name)
	}
	sc.script.commands = append(sc.script.commands, cmd)
	return nil
}

// expression parses the expression of a meta command (what names it in messages) and notes
// the variables it reads.
func (sc *scanner) expression(line int, what, text string) (expr, error) {
	if strings.TrimSpace(text) == "" {
		return nil, errorAt(line, "%s: missing expression", what)
	}
	e, err := parseExpression(text)
	if err != nil {
		return nil, errorAt(line, "%s: %v", what, err)
	}
	for _, name := range exprVariables(e, nil) {
		sc.script.uses[name] = true
	}
	return e, nil
}

// parseSleep reads \sleep's arguments as pgbench does: an integer or a :variable, then an
// optional unit us, ms or s (seconds when absent), which may be glued to the integer.
func parseSleep(line int, args string) (sleepArg, error) {
	amount, rest := nextWord(args)
	unit, rest := nextWord(rest)
	if amount == "" {
		return sleepArg{}, errorAt(line, `\sleep: missing argument`)
	}
	if extra, _ := nextWord(rest); extra != "" {
		return sleepArg{}, errorAt(line, `\sleep: too many arguments`)
	}
	var arg sleepArg
	if amount[0] == ':' {
		arg.variable = amount[1:]
	} else {
		digits := amount
		if digits[0] == '+' || digits[0] == '-' {
			digits = digits[1:]
		}
		n := 0
		for n < len(digits) && isDigit(digits[n]) {
			n++
		}
		if n < len(digits) {
			if unit != "" || n == 0 {
				return sleepArg{}, errorAt(line, `\sleep: invalid sleep time %q, must be an integer`, amount)
			}
			unit = digits[n:]
		}
		arg.micros = atoi(amount)
	}
	switch strings.ToLower(unit) {
	case "us":
		arg.unit = 1
	case "ms":
		arg.unit = 1000
	case "s", "":
		arg.unit = 1_000_000
	default:
		return sleepArg{}, errorAt(line, `\sleep: unrecognized time unit %q, must be us, ms or s`, unit)
	}
	return arg, nil
}

// atoi is C's atoi for the amounts pgbench reads with it: leading spaces, a sign, the digits
// up to the first other character; 0 when there are none.
func atoi(s string) int64 {
	s = strings.TrimLeft(s, " \t\n\r\f\v")
	negative := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		negative = s[0] == '-'
		s = s[1:]
	}
	var n int64
	for i := 0; i < len(s) && isDigit(s[i]) && n < 1<<40; i++ {
		n = n*10 + int64(s[i]-'0')
	}
	if negative {
		return -n
	}
	return n
}

// validVariableName is pgbench's rule: letters (any non-ASCII byte counts as one), digits and
// underscores, not starting with a digit.
func validVariableName(name string) bool {
	if name == "" || !isNameStart(name[0]) {
		return false
	}
	for i := 1; i < len(name); i++ {
		if !isNameChar(name[i]) {
			return false
		}
	}
	return true
}

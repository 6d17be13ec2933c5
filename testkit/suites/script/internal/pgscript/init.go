package pgscript

import (
	"fmt"
	"strings"
)

// InitStatement is one SQL statement of an init file, its variables replaced by their values.
type InitStatement struct {
	// Line is the line (1-based) of the statement's first character.
	Line int
	// SQL is the statement from its first character to its terminating semicolon, which is
	// left out, with each variable replaced.
	SQL string
}

// ParseInit reads an init file: plain SQL, the DDL and seed of a script's tables, run once
// before the load. It splits the text into statements as pgbench splits a script's SQL (and
// psql a file): at semicolons outside quotes, dollar quotes, comments and parentheses. A
// function body must therefore be dollar-quoted (BEGIN ATOMIC ... END would be split).
//
// Variables are substituted as text, as psql's -v does, outside quotes and comments: :name
// by its value as it is, :'name' by its value as a string literal, :"name" by its value as a
// quoted identifier. A value pasted as it is must be a number or a plain word (letters,
// digits, underscores), so that it cannot change the statement around it. It refuses, naming
// the line, a variable vars does not hold (psql would leave it in the text), a value that is
// neither a number nor a plain word after :name, a backslash command, an unterminated quote
// or comment, and a file without a statement.
func ParseInit(text string, vars map[string]string) ([]InitStatement, error) {
	return Postgres.ParseInit(text, vars)
}

// ParseInit is ParseInit for an init file in d's SQL. In MySQL's, :'name' is the value as a
// string literal with its backslashes and quotes escaped, and :"name" as a name in
// backquotes (MySQL's "…" is a string).
func (d Dialect) ParseInit(text string, vars map[string]string) ([]InitStatement, error) {
	sc := newScanner(text)
	sc.initFile, sc.vars, sc.dialect = true, vars, d
	if err := sc.run(); err != nil {
		return nil, err
	}
	cmds := sc.script.Commands()
	if len(cmds) == 0 {
		return nil, &Error{Line: sc.line, Msg: "the init file has no SQL statement"}
	}
	stmts := make([]InitStatement, len(cmds))
	for i, c := range cmds {
		stmts[i] = InitStatement{Line: c.Line, SQL: c.SQL}
	}
	return stmts, nil
}

// quotedRef reads psql's :'name' or :"name" at src[colon:], if it is one.
func quotedRef(src string, colon int) (sqlRef, bool) {
	quote := src[colon+1]
	j := colon + 2
	if j >= len(src) || !isNameStart(src[j]) {
		return sqlRef{}, false
	}
	for j < len(src) && isNameChar(src[j]) {
		j++
	}
	if j >= len(src) || src[j] != quote {
		return sqlRef{}, false
	}
	return sqlRef{start: colon, end: j + 1, name: src[colon+2 : j], quote: quote}, true
}

// initValue is the text that replaces r in an init file.
func initValue(src string, r sqlRef, vars map[string]string, d Dialect) (string, error) {
	value, ok := vars[r.name]
	if !ok {
		return "", fmt.Errorf(":%s is not set (give it with -D %s=VALUE)", r.name, r.name)
	}
	switch {
	case r.quote == '\'' && d == MySQL:
		return "'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(value) + "'", nil
	case r.quote == '"' && d == MySQL:
		return "`" + strings.ReplaceAll(value, "`", "``") + "`", nil
	case r.quote == '\'':
		return quoteLiteral(value), nil
	case r.quote == '"':
		return `"` + strings.ReplaceAll(value, `"`, `""`) + `"`, nil
	}
	if !isNumber(value) && !isPlainWord(value) {
		return "", fmt.Errorf(":%s is %q, neither a number nor a plain word: write :'%s' for a string literal", r.name, value, r.name)
	}
	// A negative number right after a minus would start a comment (1-:n with n=-2 is 1--2).
	if value[0] == '-' && r.start > 0 && src[r.start-1] == '-' {
		return " " + value, nil
	}
	return value, nil
}

// quoteLiteral is value as an SQL string literal, read the same whatever
// standard_conforming_strings says: an escape string when it holds a backslash, as psql's
// :'name' does.
func quoteLiteral(value string) string {
	quoted := "'" + strings.ReplaceAll(value, "'", "''") + "'"
	if strings.Contains(value, `\`) {
		return "E" + strings.ReplaceAll(quoted, `\`, `\\`)
	}
	return quoted
}

// isPlainWord reports whether s is letters, digits and underscores, starting with a letter or
// an underscore.
func isPlainWord(s string) bool {
	if s == "" || !isASCIINameChar(s[0]) || isDigit(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isASCIINameChar(s[i]) {
			return false
		}
	}
	return true
}

func isASCIINameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || isDigit(c)
}

// isNumber reports whether s is a decimal number as SQL writes one: an optional sign, digits
// with an optional fraction (or a fraction alone), an optional exponent.
func isNumber(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for ; i < len(s) && isDigit(s[i]); i++ {
		digits++
	}
	if i < len(s) && s[i] == '.' {
		for i++; i < len(s) && isDigit(s[i]); i++ {
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exponent := 0
		for ; i < len(s) && isDigit(s[i]); i++ {
			exponent++
		}
		if exponent == 0 {
			return false
		}
	}
	return i == len(s)
}

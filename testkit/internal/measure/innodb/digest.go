package innodb

import (
	"strings"
	"unicode"
)

// DigestKey is the form in which a statement's text is matched with a performance_schema
// digest's (DIGEST_TEXT): the statement the kit sends ($1 or ? placeholders, or literals
// interpolated into it) and the server's digest of it come out the same. Words are lower
// case and identifiers unquoted; every literal and placeholder is "?"; a parenthesised list
// of nothing but them is "(...)", and a run of such lists ("VALUES (...), (...)", which the
// digest writes "VALUES (...) /* , ... */") one; comments are dropped; tokens are joined by
// one space.
func DigestKey(sql string) string {
	var toks []string
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			end := strings.Index(sql[i+2:], "*/")
			if end < 0 {
				i = len(sql)
			} else {
				i += end + 4
			}
		case c == '#' || (c == '-' && strings.HasPrefix(sql[i:], "-- ")):
			end := strings.IndexByte(sql[i:], '\n')
			if end < 0 {
				i = len(sql)
			} else {
				i += end
			}
		case strings.HasPrefix(sql[i:], "(...)"): // a digest's list
			toks = append(toks, "(...)")
			i += len("(...)")
		case c == '\'' || c == '"':
			i = skipQuoted(sql, i, c)
			toks = append(toks, "?")
		case c == '`':
			j := skipQuoted(sql, i, '`')
			toks = append(toks, strings.ToLower(strings.ReplaceAll(sql[i+1:max(j-1, i+1)], "``", "`")))
			i = j
		case c == '?':
			toks = append(toks, "?")
			i++
		case c == '$' && i+1 < len(sql) && isDigit(sql[i+1]):
			i++
			for i < len(sql) && isDigit(sql[i]) {
				i++
			}
			toks = append(toks, "?")
		case isDigit(c) || (c == '.' && i+1 < len(sql) && isDigit(sql[i+1])):
			for i < len(sql) && (isWordByte(sql[i]) || sql[i] == '.') {
				i++
			}
			toks = append(toks, "?")
		case isWordByte(c) || c >= 0x80:
			j := i
			for j < len(sql) && (isWordByte(sql[j]) || sql[j] >= 0x80) {
				j++
			}
			toks = append(toks, strings.ToLower(sql[i:j]))
			i = j
		default:
			j := i + 1
			if j < len(sql) && strings.Contains("<>=!|&:", string(c)) && strings.ContainsRune("<>=|&", rune(sql[j])) {
				j++
			}
			toks = append(toks, sql[i:j])
			i = j
		}
	}
	return strings.Join(collapseLists(toks), " ")
}

// collapseLists writes each parenthesised list of nothing but "?" as "(...)", and a run of
// them separated by commas as one.
func collapseLists(toks []string) []string {
	out := make([]string, 0, len(toks))
	for i := 0; i < len(toks); i++ {
		list := toks[i] == "(...)"
		if toks[i] == "(" {
			if j, ok := valueList(toks, i); ok {
				list, i = true, j
			}
		}
		switch n := len(out); {
		case !list:
			out = append(out, toks[i])
		case n >= 2 && out[n-1] == "," && out[n-2] == "(...)":
			out = out[:n-1] // ", (...)" after "(...)": the same run
		default:
			out = append(out, "(...)")
		}
	}
	return out
}

// valueList says whether toks[open] begins "( ? , ? ... )" and where it ends.
func valueList(toks []string, open int) (end int, ok bool) {
	want := "?"
	for j := open + 1; j < len(toks); j++ {
		switch {
		case toks[j] == ")" && want == ",":
			return j, true
		case toks[j] != want:
			return 0, false
		}
		if want == "?" {
			want = ","
		} else {
			want = "?"
		}
	}
	return 0, false
}

// skipQuoted returns the index after the quoted text that starts at i with quote q (a
// doubled quote, or a backslash before one outside identifiers, stays inside).
func skipQuoted(s string, i int, q byte) int {
	for j := i + 1; j < len(s); j++ {
		switch {
		case s[j] == '\\' && q != '`':
			j++
		case s[j] == q && j+1 < len(s) && s[j+1] == q:
			j++
		case s[j] == q:
			return j + 1
		}
	}
	return len(s)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isWordByte(c byte) bool { return c == '_' || c == '$' || unicode.IsLetter(rune(c)) || isDigit(c) }

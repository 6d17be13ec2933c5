package sqldb

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Placeholders on MySQL: the kit writes a statement once, with PostgreSQL's $1..$n, and the
// MySQL adapters send it with ?s, the arguments in the order the ?s take them. The rewrite
// follows MySQL's lexical rules (with the default sql_mode: a backslash escapes inside a
// string): nothing inside '…', "…" or `…`, after # or "-- " to the end of the line, or inside
// /* … */ is a placeholder, nor a $ that continues a name (MySQL allows $ in names: a$1).

// rewrite is how one statement text is sent: its text with ?s, and for each ? the index of
// its argument. order is nil when the ?s take the arguments as they are ($1, $2, … once each,
// in order, or no $n at all: a statement written for MySQL).
type rewrite struct {
	sql   string
	order []int
	args  int // the number of arguments the statement takes (its highest $n); -1: no $n
	err   error
}

// rewrites caches the rewrite of every statement text seen, up to maxRewrites of them (the
// kit's statements are a few hundred; beyond the bound a text is rewritten each time).
var (
	rewrites     sync.Map // string → *rewrite
	rewriteCount atomic.Int64
)

const maxRewrites = 10_000

// rebind is query with ?s for its $n's, and args in the order the ?s take them.
func rebind(query string, args []any) (string, []any, error) {
	rw := rewriteOf(query)
	switch {
	case rw.err != nil:
		return "", nil, rw.err
	case rw.args < 0:
		return query, args, nil
	case len(args) != rw.args:
		return "", nil, fmt.Errorf("sqldb: the statement takes %d arguments ($1..$%d), %d given", rw.args, rw.args, len(args))
	case rw.order == nil:
		return rw.sql, args, nil
	}
	out := make([]any, len(rw.order))
	for k, i := range rw.order {
		out[k] = args[i]
	}
	return rw.sql, out, nil
}

// Placeholders is query as the MySQL adapters send it, its $n's replaced by ?s, and for each
// ? in order the index (0-based) of the argument it takes: what a caller that parses the
// statement as MySQL reads it (a grammar of ?s) needs to tell which $n each ? was. A query
// without $n comes back as it is, with no indexes (any ? in it is its own).
func Placeholders(query string) (string, []int, error) {
	rw := rewriteOf(query)
	switch {
	case rw.err != nil:
		return "", nil, rw.err
	case rw.args < 0:
		return query, nil, nil
	case rw.order == nil:
		order := make([]int, rw.args)
		for i := range order {
			order[i] = i
		}
		return rw.sql, order, nil
	}
	return rw.sql, slices.Clone(rw.order), nil
}

func rewriteOf(query string) *rewrite {
	if rw, ok := rewrites.Load(query); ok {
		return rw.(*rewrite)
	}
	rw := parsePlaceholders(query)
	if rewriteCount.Load() < maxRewrites {
		if _, loaded := rewrites.LoadOrStore(query, rw); !loaded {
			rewriteCount.Add(1)
		}
	}
	return rw
}

// parsePlaceholders finds query's $n's.
func parsePlaceholders(query string) *rewrite {
	var (
		b       strings.Builder
		order   []int
		used    []bool
		last    int  // query[last:i] is not copied yet
		marks   bool // a ? outside quotes and comments
		inOrder = true
	)
	for i := 0; i < len(query); {
		c := query[i]
		switch {
		case c == '\'' || c == '"':
			i = skipString(query, i)
		case c == '`':
			i = skipQuoted(query, i, '`')
		case c == '#', c == '-' && strings.HasPrefix(query[i:], "--") && (i+2 == len(query) || query[i+2] <= ' '):
			i = skipLine(query, i)
		case c == '/' && strings.HasPrefix(query[i:], "/*"):
			end := strings.Index(query[i+2:], "*/")
			if end < 0 {
				return &rewrite{err: fmt.Errorf("sqldb: a comment is not closed: %.40q", query[i:])}
			}
			i += 2 + end + 2
		case c == '?':
			marks = true
			i++
		case c == '$' && i+1 < len(query) && isDigit(query[i+1]) && (i == 0 || !isNameByte(query[i-1])):
			j := i + 1
			for j < len(query) && isDigit(query[j]) {
				j++
			}
			n, err := strconv.Atoi(query[i+1 : j])
			if err != nil || n < 1 || n > 65535 {
				return &rewrite{err: fmt.Errorf("sqldb: placeholder %s out of range", query[i:j])}
			}
			for len(used) < n {
				used = append(used, false)
			}
			used[n-1] = true
			inOrder = inOrder && n == len(order)+1
			order = append(order, n-1)
			b.WriteString(query[last:i])
			b.WriteByte('?')
			last, i = j, j
		default:
			i++
		}
	}
	if order == nil {
		return &rewrite{sql: query, args: -1}
	}
	if marks {
		return &rewrite{err: fmt.Errorf("sqldb: the statement mixes $n and ? placeholders: %.60q", query)}
	}
	for n, ok := range used {
		if !ok {
			return &rewrite{err: fmt.Errorf("sqldb: the statement takes $%d but not $%d", len(used), n+1)}
		}
	}
	b.WriteString(query[last:])
	rw := &rewrite{sql: b.String(), args: len(used), order: order}
	if inOrder {
		rw.order = nil
	}
	return rw
}

// skipString returns the index after the string that starts at i (quoted by query[i]): a
// doubled quote or a backslash escapes the next byte. An unclosed string runs to the end.
func skipString(query string, i int) int {
	q := query[i]
	for i++; i < len(query); i++ {
		switch query[i] {
		case '\\':
			i++
		case q:
			if i+1 < len(query) && query[i+1] == q {
				i++
				continue
			}
			return i + 1
		}
	}
	return len(query)
}

// skipQuoted returns the index after the name quoted by q that starts at i (a doubled q
// inside it is one).
func skipQuoted(query string, i int, q byte) int {
	for i++; i < len(query); i++ {
		if query[i] == q {
			if i+1 < len(query) && query[i+1] == q {
				i++
				continue
			}
			return i + 1
		}
	}
	return len(query)
}

// skipLine returns the index of the end of the line that i is on.
func skipLine(query string, i int) int {
	if end := strings.IndexByte(query[i:], '\n'); end >= 0 {
		return i + end
	}
	return len(query)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isNameByte reports whether c may continue an unquoted name (MySQL: letters, digits, _ and
// $, and any byte of a multibyte character).
func isNameByte(c byte) bool {
	return c == '_' || c == '$' || isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'z') || c >= 0x80
}

// Marks is n of MySQL's placeholders, "?, ?, ?": an IN list's or a row's of n values.
func Marks(n int) string { return strings.TrimSuffix(strings.Repeat("?, ", n), ", ") }

package sqlshape

import (
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
)

// renderer writes statements and parts of them back as one line of SQL for messages:
// PostgreSQL's own deparser, with the script's parameter names in place of $n.
type renderer struct {
	params  []string
	version int32 // the parse tree's, which the deparser checks
}

// param names $n as the script wrote it, :name, when the name is known.
func (r renderer) param(n int) string {
	if n >= 1 && n <= len(r.params) && r.params[n-1] != "" {
		return ":" + r.params[n-1]
	}
	return "$" + strconv.Itoa(n)
}

// named replaces the parameter tokens of sql by their names, leaving string
// literals, identifiers and comments as they are.
func (r renderer) named(sql string) string {
	if len(r.params) == 0 || !strings.Contains(sql, "$") {
		return sql
	}
	scan, err := pg.Scan(sql)
	if err != nil {
		return sql
	}
	var b strings.Builder
	last := 0
	for _, tok := range scan.Tokens {
		if tok.Token != pg.Token_PARAM {
			continue
		}
		n, err := strconv.Atoi(sql[tok.Start+1 : tok.End])
		if err != nil {
			continue
		}
		b.WriteString(sql[last:tok.Start])
		b.WriteString(r.param(n))
		last = int(tok.End)
	}
	b.WriteString(sql[last:])
	return b.String()
}

// statement renders a whole parsed statement; source is the fallback when the
// deparser cannot (its whitespace collapsed to one line).
func (r renderer) statement(tree *pg.ParseResult, source string) string {
	if text, err := pg.Deparse(tree); err == nil {
		return r.named(text)
	}
	return r.named(strings.Join(strings.Fields(source), " "))
}

// expr renders one expression of a statement.
func (r renderer) expr(n *pg.Node) string {
	target := &pg.Node{Node: &pg.Node_ResTarget{ResTarget: &pg.ResTarget{Val: n}}}
	sel := &pg.SelectStmt{TargetList: []*pg.Node{target}, Op: pg.SetOperation_SETOP_NONE,
		LimitOption: pg.LimitOption_LIMIT_OPTION_DEFAULT}
	text, err := pg.Deparse(&pg.ParseResult{Version: r.version,
		Stmts: []*pg.RawStmt{{Stmt: &pg.Node{Node: &pg.Node_SelectStmt{SelectStmt: sel}}}}})
	if err != nil || !strings.HasPrefix(text, "SELECT ") {
		return "(an expression)"
	}
	return r.named(strings.TrimPrefix(text, "SELECT "))
}

// short is a statement's text cut for the head of a message: an UPDATE shows its
// table and WHERE (what most refusals are about; the reasons name the SET items they
// are about), a long INSERT its table (the reasons name the columns), anything else
// its text up to a length.
func short(text string, head string, where string) string {
	const limit = 72
	switch {
	case head != "" && where != "":
		return head + " … WHERE " + cut(where, limit-len(head))
	case head != "" && len([]rune(text)) > limit:
		return head + " …"
	}
	return cut(text, limit)
}

// cut shortens text to about limit characters, at a space where it can.
func cut(text string, limit int) string {
	if len([]rune(text)) <= limit {
		return text
	}
	s := string([]rune(text)[:limit])
	if i := strings.LastIndexByte(s, ' '); i > len(s)/2 {
		s = s[:i]
	}
	return s + " …"
}

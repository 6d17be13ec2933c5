package pgscript

import (
	"reflect"
	"strings"
	"testing"
)

// TestMySQLCommands: a script in MySQL's SQL ends its commands and finds its :variables as
// MySQL's client scans it: backslash escapes in '…' and "…", `…` names, # and "-- "
// comments, comments that do not nest.
func TestMySQLCommands(t *testing.T) {
	text := "\\set id random(1, 10)\n" +
		"# a comment; :id\n" +
		"UPDATE `t;:id` SET note = 'it\\'s; :id', `x` = \"a\\\"; b\" WHERE id = :id;\n" +
		"-- another; :id\n" +
		"SELECT 1--:id\n;\n" +
		"SELECT /* /* :id; */ :id;\n"
	sc, err := MySQL.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	var got [][]string
	for _, c := range sc.Commands() {
		got = append(got, append([]string{c.SQL}, c.Params...))
	}
	want := [][]string{
		{"UPDATE `t;:id` SET note = 'it\\'s; :id', `x` = \"a\\\"; b\" WHERE id = $1", "id"},
		{"SELECT 1--$1", "id"},
		{"SELECT /* /* :id; */ $1", "id"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("commands %q\nwant %q", got, want)
	}
	// The same text is PostgreSQL's otherwise: 'it\'s; …' ends at its second quote there.
	if _, err := Parse(text); err == nil {
		t.Error("PostgreSQL's scanner took MySQL's escapes")
	}
	if _, err := MySQL.Parse("SELECT `a\nFROM t"); err == nil || !strings.Contains(err.Error(), "line 1: unterminated quoted identifier") {
		t.Errorf("an open name: %v", err)
	}
}

// TestMySQLInit: an init file in MySQL's SQL takes :'name' as a MySQL string literal and
// :"name" as a name in backquotes.
func TestMySQLInit(t *testing.T) {
	vars := map[string]string{"word": `it's a\b`, "ident": "a`b", "scale": "2"}
	got, err := MySQL.ParseInit("INSERT INTO :\"ident\" VALUES (:'word', :scale); # :nope;\nSELECT '\\':nope'", vars)
	if err != nil {
		t.Fatal(err)
	}
	want := []InitStatement{{1, "INSERT INTO `a``b` VALUES ('it''s a\\\\b', 2)"}, {2, "SELECT '\\':nope'"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

package sqlshape

import (
	"fmt"
	"slices"
	"sort"
)

// Script is the analysis of a whole script.
type Script struct {
	Statements []*Statement
	// Refusals: every statement's and the script's own (ConflictingWrites), by line.
	// The queue modes can run the script only when there are none; sync runs it
	// regardless.
	Refusals []Refusal

	cat *Catalog
}

// Plan analyses every command of a script. A command PostgreSQL's grammar rejects
// is an error (the first, by the order given): one line, naming its line.
func Plan(inputs []Input, cat *Catalog) (*Script, error) {
	s := &Script{cat: cat}
	for _, in := range inputs {
		st, err := Analyze(in, cat)
		if err != nil {
			return nil, err
		}
		s.Statements = append(s.Statements, st)
		s.Refusals = append(s.Refusals, st.Refusals...)
	}
	s.Refusals = append(s.Refusals, ConflictingWrites(s.Statements)...)
	sort.SliceStable(s.Refusals, func(i, j int) bool { return s.Refusals[i].Line < s.Refusals[j].Line })
	return s, nil
}

// Deferrable says whether the queue modes can run the script.
func (s *Script) Deferrable() bool { return len(s.Refusals) == 0 }

// ConflictingWrites refuses what no single statement shows: a column written by two
// kinds of write (incremented at one line, assigned at another: one row's writes
// merge into one write per column, which must be of one kind), and a table both
// inserted into and updated (deferred, an update could land before the row it
// updates). Each refusal is on the later statement's line and names the earlier one.
func ConflictingWrites(stmts []*Statement) []Refusal {
	type write struct {
		line int
		item SetItem
	}
	first := map[string]write{}
	inserted, updated := map[string]*Statement{}, map[string]*Statement{}
	var out []Refusal
	for _, st := range stmts {
		switch st.Class {
		case Insert:
			if inserted[st.Target] == nil {
				inserted[st.Target] = st
			}
			if up := updated[st.Target]; up != nil && inserted[st.Target] == st {
				out = append(out, insertedAndUpdated(st, up.Line, st.Line))
			}
		case Update:
			if updated[st.Target] == nil {
				updated[st.Target] = st
			}
			if ins := inserted[st.Target]; ins != nil && updated[st.Target] == st {
				out = append(out, insertedAndUpdated(st, ins.Line, st.Line))
			}
			for _, item := range st.Update.Set {
				key := st.Target + "." + item.Column.Name
				w, seen := first[key]
				if !seen {
					first[key] = write{line: st.Line, item: item}
					continue
				}
				if w.item.Op != item.Op || (w.item.ServerFunc == "") != (item.ServerFunc == "") {
					out = append(out, Refusal{Line: st.Line, Kind: MixedWrites, Statement: st.short,
						Reason: fmt.Sprintf("%s is %s here (%s) and %s at line %d (%s): one row's writes merge into "+
							"one write per column, so a column takes one kind of write", key, verb(item), item.Text,
							verb(w.item), w.line, w.item.Text)})
				}
			}
		}
	}
	return out
}

func insertedAndUpdated(st *Statement, insertLine, updateLine int) Refusal {
	return Refusal{Line: st.Line, Kind: InsertedAndUpdated, Statement: st.short,
		Reason: fmt.Sprintf("%s is inserted into at line %d and updated at line %d: deferred, an update could "+
			"land before the row it updates", st.Target, insertLine, updateLine)}
}

func verb(item SetItem) string {
	server := item.ServerFunc != ""
	switch item.Op {
	case Increment:
		return "incremented"
	case Assign:
		return "assigned"
	case Greatest:
		if server {
			return "raised to the server time"
		}
		return "raised by greatest"
	case Least:
		if server {
			return "lowered to the server time"
		}
		return "lowered by least"
	}
	return "set to the server time"
}

// SlotVerdict says whether a table the script writes may be split into slots
// (--slots: N physical rows per logical row, a write adding to one of them, a read
// summing them). The rule is the package doc's.
type SlotVerdict struct {
	Table  string
	Reason string // why not; "" when it may
	// ReadBy lists the lines of the SELECTs that read the table: with slots they read
	// one slot's part unless they read the sum over the slots.
	ReadBy []int
}

// Allowed says whether the table may be split into slots.
func (v SlotVerdict) Allowed() bool { return v.Reason == "" }

// Slots judges every table the script writes, by name.
func (s *Script) Slots() []SlotVerdict {
	var tables []string
	for _, st := range s.Statements {
		if st.Target != "" && !slices.Contains(tables, st.Target) {
			tables = append(tables, st.Target)
		}
	}
	sort.Strings(tables)
	verdicts := make([]SlotVerdict, 0, len(tables))
	for _, name := range tables {
		v := SlotVerdict{Table: name, Reason: s.slotReason(name, s.cat.Table(name))}
		for _, st := range s.Statements {
			if slices.Contains(st.Reads, name) {
				v.ReadBy = append(v.ReadBy, st.Line)
			}
		}
		verdicts = append(verdicts, v)
	}
	return verdicts
}

func (s *Script) slotReason(name string, t *Table) string {
	for _, st := range s.Statements {
		if st.Target != name {
			continue
		}
		if st.Class != Update {
			return fmt.Sprintf("line %d writes it (%s) otherwise than by increments of one row by its primary key",
				st.Line, st.Tag)
		}
		for _, item := range st.Update.Set {
			if item.Op != Increment {
				return fmt.Sprintf("line %d: %s is %s, and only increments add back up across slots",
					st.Line, item.Column.Name, verb(item))
			}
		}
	}
	switch {
	case t == nil:
		return "it is not in the catalog"
	case t.Kind != Ordinary:
		return fmt.Sprintf("it is a %s", t.Kind)
	case t.Unsupported != "":
		return "it " + t.Unsupported
	case t.HasChildren:
		return "it has inheritance children"
	case len(t.Rules) > 0:
		return fmt.Sprintf("it has rule %s", t.Rules[0])
	case t.RowSecurity:
		return "it has row-level security"
	case len(t.Triggers) > 0:
		return fmt.Sprintf("it has trigger %s, which would fire on each slot's row with that slot's part", t.Triggers[0])
	case len(t.Checks) > 0:
		return fmt.Sprintf("CHECK constraint %s would hold for each slot's part, not for the row's total", t.Checks[0].Name)
	}
	for _, st := range s.Statements {
		if st.Target != name || st.Update == nil {
			continue
		}
		for _, item := range st.Update.Set {
			if item.Column.Unsigned {
				return fmt.Sprintf("%s is %s, whose range would hold for each slot's part, not for the row's total",
					item.Column.Name, item.Column.TypeName)
			}
		}
	}
	for _, c := range t.Columns {
		if len(c.DomainCheck) > 0 {
			return fmt.Sprintf("%s is of domain %s with CHECK constraint %s, which would hold for each slot's part, "+
				"not for the row's total", c.Name, c.DomainCheck[0].Domain, c.DomainCheck[0].Name)
		}
	}
	for _, k := range t.UniqueKeys {
		if !k.Primary {
			return fmt.Sprintf("unique index %s would see one row's values repeated in each slot", k.Name)
		}
	}
	if len(t.ReferencedBy) > 0 {
		fk := t.ReferencedBy[0]
		return fmt.Sprintf("foreign key %s of %s references it: with slots its key no longer names one row",
			fk.Name, fk.Table)
	}
	return ""
}

// CheckSyntax parses every command with grammar g alone, before there is a database to read a
// catalog from: a command the grammar rejects is the first error, one line naming its line,
// as Plan would say it. MySQL's grammar is read under a sql_mode that changes no statement's
// meaning (the server's own, which Plan parses under, may: ANSI_QUOTES) and with MariaDB's
// extensions, since the server's kind is not known yet. A command MySQL's grammar rejects
// and PostgreSQL's takes says so: a script written for the other database.
func CheckSyntax(inputs []Input, g Grammar) error {
	var gr grammar = postgresGrammar{}
	if g == MySQL {
		gr = mysqlGrammar{mariaDB: true}
	}
	for _, in := range inputs {
		if _, err := gr.parse(in); err != nil {
			line := rejectedLine(in, err)
			if g == MySQL {
				if _, pgErr := (postgresGrammar{}).parse(in); pgErr == nil {
					return fmt.Errorf("line %d: %v; PostgreSQL's grammar takes it: the run's database is MySQL, whose SQL the script must be written in", line, err)
				}
			}
			return fmt.Errorf("line %d: %v", line, err)
		}
	}
	return nil
}

package judge

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hotspotkit/hotspotkit/results"
)

// commandFlags is the set of flags named on a recorded command line ("--name" or
// "--name=value"); nil when the report recorded no command.
func commandFlags(command string) map[string]bool {
	if strings.TrimSpace(command) == "" {
		return nil
	}
	out := make(map[string]bool)
	for _, tok := range strings.Fields(command) {
		name, ok := strings.CutPrefix(tok, "--")
		if !ok || name == "" {
			continue
		}
		name, _, _ = strings.Cut(name, "=")
		out[name] = true
	}
	return out
}

// Match says what became of one run group (the runs of a report that share mode, level and
// shaping config) in the matching: the group of the other report it was paired with, or why
// none was.
type Match struct {
	// Side is "old" or "new".
	Side  string `json:"side"`
	Mode  string `json:"mode"`
	Level int    `json:"level,omitempty"`
	Load  string `json:"load"`
	Runs  int    `json:"runs"`
	// Paired is true when the group has a pair; Reason then says which, else why none.
	Paired bool   `json:"paired"`
	Reason string `json:"reason"`
	// Notes lists the keys present on one side only and taken as that flag's default, and the
	// --across keys the pair differs in.
	Notes []string `json:"notes,omitempty"`
	// entry is the group's index among its side's entries.
	entry int
}

// matchSide is one report's groups and what its command line says about its flags.
type matchSide struct {
	name    string
	entries []compareEntry
	// explicit holds the flags named on the report's command line; nil when unknown.
	explicit map[string]bool
}

// configDifferences compares the shaping config of a (on side sa) with b (on side sb), from a's
// point of view (results.RunConfig.Shaping: every engine setting is on both sides, so only a
// suite's own flag can be on one side only). A key named by --across never differs (the
// difference is noted). A key present on one side only takes its default on the other:
//   - the side that has it did not name the flag on its command line: its value is the flag's
//     default, the other side's binary predates (or dropped) the flag and ran as that default
//     does, so the key is noted, not counted;
//   - that side set the flag on its command line: the key differs (pass --across to pair
//     anyway);
//   - that side recorded no command line: the key is taken as its default and noted, since
//     refusing it would make every new flag break every such report.
func configDifferences(a, b compareEntry, sa, sb *matchSide, across map[string]bool) (diffs, notes []string) {
	keys := slices.Sorted(maps.Keys(a.config))
	for k := range b.config {
		if _, ok := a.config[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		av, aok := a.config[k]
		bv, bok := b.config[k]
		switch {
		case aok && bok && av == bv:
		case across[k]:
			notes = append(notes, fmt.Sprintf("%s %s here, %s there (--across)", k, orAbsent(av, aok), orAbsent(bv, bok)))
		case aok && bok:
			diffs = append(diffs, fmt.Sprintf("%s %s here, %s there", k, av, bv))
		default:
			value, present, absent, here, there := av, sa, sb, "here", "there"
			if bok {
				value, present, absent, here, there = bv, sb, sa, "there", "here"
			}
			switch {
			case present.explicit != nil && present.explicit[results.SuiteFlag(k)]:
				diffs = append(diffs, fmt.Sprintf("%s %s %s (set on the %s command line), absent %s", k, value, here, present.name, there))
			case present.explicit != nil:
				notes = append(notes, fmt.Sprintf("%s %s in %s is its default; absent in %s (a binary from before the flag, or after it was dropped)", k, value, present.name, absent.name))
			default:
				notes = append(notes, fmt.Sprintf("%s %s in %s taken as its default (no command line recorded); absent in %s", k, value, present.name, absent.name))
			}
		}
	}
	return diffs, notes
}

func orAbsent(v string, ok bool) string {
	if !ok {
		return "absent"
	}
	return v
}

// matchRuns pairs the groups of old and new. Groups pair when their mode and level are equal
// and configDifferences finds nothing; each group pairs at most once, old groups choosing in
// order. Every group gets a Match saying what became of it.
func matchRuns(old, new *matchSide, across map[string]bool) (pairs [][2]int, matches []Match) {
	pairOf := make(map[int]int) // new group → old group
	for i, o := range old.entries {
		m := newMatch(old.name, i, o)
		j, reason, notes := findPartner(o, old, new, across, func(j int) bool { _, taken := pairOf[j]; return !taken })
		if j >= 0 {
			pairOf[j] = i
			pairs = append(pairs, [2]int{i, j})
			m.Paired, m.Notes = true, notes
		}
		m.Reason = reason
		matches = append(matches, m)
	}
	for j, n := range new.entries {
		m := newMatch(new.name, j, n)
		if i, ok := pairOf[j]; ok {
			m.Paired = true
			m.Reason = "paired with old " + describeEntry(old.entries[i])
			_, m.Notes = configDifferences(n, old.entries[i], new, old, across)
		} else {
			// Every old group that could have been its partner has one already.
			_, m.Reason, _ = findPartner(n, new, old, across, func(int) bool { return false })
		}
		matches = append(matches, m)
	}
	return pairs, matches
}

// findPartner looks among the other side's groups of e's mode and level for the first one
// without differences that is still free. It returns its index (-1 when there is none) and
// the reason: which group, or why none (the differences of the closest group, or that the
// matches are all taken, or that the other side has no such runs).
func findPartner(e compareEntry, side, other *matchSide, across map[string]bool, free func(int) bool) (int, string, []string) {
	closest, closestDiffs, taken := -1, []string(nil), false
	for j, o := range other.entries {
		if o.mode != e.mode || o.level != e.level {
			continue
		}
		diffs, notes := configDifferences(e, o, side, other, across)
		switch {
		case len(diffs) == 0 && free(j):
			return j, "paired with " + other.name + " " + describeEntry(o), notes
		case len(diffs) == 0:
			taken = true
		case closest < 0 || len(diffs) < len(closestDiffs):
			closest, closestDiffs = j, diffs
		}
	}
	mode := modeText(e.mode, e.level)
	switch {
	case taken:
		return -1, fmt.Sprintf("unpaired: its match in %s is already paired with another group (the --across keys make them ambiguous)", other.name), nil
	case closest >= 0:
		return -1, fmt.Sprintf("unpaired: the %s %s runs differ in %s", other.name, mode, strings.Join(closestDiffs, "; ")), nil
	}
	return -1, fmt.Sprintf("unpaired: %s has no %s run", other.name, mode), nil
}

func newMatch(side string, index int, e compareEntry) Match {
	return Match{Side: side, Mode: e.mode, Level: e.level, Load: e.load, Runs: e.reps, entry: index}
}

func describeEntry(e compareEntry) string {
	s := e.mode
	if e.level > 0 {
		s += fmt.Sprintf(" @%d", e.level)
	}
	return fmt.Sprintf("%s · %s (n=%d)", s, e.load, e.reps)
}

// acrossKeys checks that every --across name is a config setting (by key or flag name) or a
// suite flag of some run of either report, and returns the set of their keys.
func acrossKeys(across []string, reps ...*results.Report) (map[string]bool, error) {
	keys := make(map[string]bool, len(across))
	for _, name := range across {
		k := results.SettingKey(name)
		_, found := results.LookupSetting(k)
		for _, rep := range reps {
			for _, r := range rep.Runs {
				_, inSuite := r.Config.Suite[k]
				found = found || inSuite
			}
		}
		if !found {
			return nil, fmt.Errorf("--across %s: no run of either report has that config key", name)
		}
		if k == results.AxisDatabase.Name {
			return nil, fmt.Errorf("--across %s: runs on different kinds of database never pair (%s)", name, kindsApart)
		}
		keys[k] = true
	}
	return keys, nil
}

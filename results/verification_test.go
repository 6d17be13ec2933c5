package results

import "testing"

func TestVerdict(t *testing.T) {
	passed, failed, notMade := Compared("a", 1, 1, true), Compared("b", 1, 2, false), NotChecked("c", "why")
	for _, c := range []struct {
		checks []Check
		want   CheckState
	}{
		{nil, CheckNotChecked}, // no check made: not verified
		{[]Check{passed}, CheckPassed},
		{[]Check{passed, passed}, CheckPassed},
		{[]Check{passed, notMade}, CheckNotChecked},
		{[]Check{notMade}, CheckNotChecked},
		{[]Check{notMade, failed, passed}, CheckFailed},
		{[]Check{passed, failed}, CheckFailed},
	} {
		if got := Verdict(c.checks); got != c.want {
			t.Errorf("Verdict(%+v) = %s, want %s", c.checks, got, c.want)
		}
	}
	for checks, want := range map[*[]Check]string{
		{passed}:                       "no check was made",
		{passed, notMade}:              "a check was not made: c",
		{notMade, NotChecked("d", "")}: "2 checks were not made: c; d",
	} {
		if got := NotCheckedReason(*checks); got != want {
			t.Errorf("NotCheckedReason(%+v) = %q, want %q", *checks, got, want)
		}
	}
}

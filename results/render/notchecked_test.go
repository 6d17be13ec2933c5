package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hotspotkit/hotspotkit/results"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/resultstest"
)

// notCheckedReport is SingleReport with its sync run's content check not made: unverified.
func notCheckedReport() *results.Report {
	rep := resultstest.SingleReport()
	r := &rep.Runs[0]
	r.Verification.Checks = append(r.Verification.Checks, results.NotChecked("what the requests wrote", "not recomputable: line 3: a CHECK"))
	r.Verification.Passed = false
	r.Verification.Unverified = &results.Unverified{Reason: results.NotCheckedReason(r.Verification.Checks), Succeeded: 100000}
	return rep
}

// A run with a check not made reads unverified in baseline table, which names the check and
// why under the Markdown table and in the JSON row; the summary names it too.
func TestTableAndSummaryNameChecksNotMade(t *testing.T) {
	td := Table([]*results.Report{notCheckedReport()})
	if got := cellsByTitle(t, td, 0)["verified"]; got != notVerifiedMark {
		t.Errorf("verified cell %q, want %q", got, notVerifiedMark)
	}
	if got := cellsByTitle(t, td, 1)["verified"]; got != verifiedMark {
		t.Errorf("the other run's verified cell %q", got)
	}
	var md bytes.Buffer
	if err := RenderMarkdown(&md, td); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(md.String(), "\n"), "\n")
	want := resultstest.Suite + " sync: checks not made: what the requests wrote: not recomputable: line 3: a CHECK"
	if len(lines) != 6 || lines[4] != "" || lines[5] != want {
		t.Errorf("markdown: want the table, a blank line and %q:\n%s", want, md.String())
	}
	var js bytes.Buffer
	if err := RenderJSON(&js, td); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Rows []struct {
			Unverified bool     `json:"unverified"`
			NotChecked []string `json:"not_checked"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if r := got.Rows[0]; !r.Unverified || len(r.NotChecked) != 1 || got.Rows[1].NotChecked != nil {
		t.Errorf("json rows %+v", got.Rows)
	}
	var sum bytes.Buffer
	Summary(&sum, notCheckedReport(), SummaryOptions{})
	for _, want := range []string{
		"sync: UNVERIFIED: a check was not made: what the requests wrote;",
		`sync: check "what the requests wrote" not made: not recomputable: line 3: a CHECK`,
	} {
		if !strings.Contains(sum.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, sum.String())
		}
	}
}

// The summary's error and retry lines read as counts by class, the most first, not as a map.
func TestClassCounts(t *testing.T) {
	got := classCounts(map[string]int64{"57P01": 2, "request_timeout": 9, "conn_closed": 2})
	if want := "request_timeout 9, 57P01 2, conn_closed 2"; got != want {
		t.Errorf("classCounts: %q, want %q", got, want)
	}
}

package engine

import (
	"io"

	"github.com/hotspotkit/hotspotkit/testkit"
	"github.com/hotspotkit/hotspotkit/testkit/internal/runner/plan"
)

// The hooks below are for the package's tests, which are all in package engine_test: a file of
// package engine among them would have go test compile the engine, and the packages between
// it and its tests (cli, suitetest), a second time with it.

// SetAfterInvocation makes every Execute call f with the metrics endpoint's URL once its
// report is written, before the endpoint closes; restore undoes it.
func SetAfterInvocation(f func(metricsURL string)) (restore func()) {
	afterInvocation = f
	return func() { afterInvocation = nil }
}

// ExecuteChecked is Execute without the metrics endpoint, and returns as well the plan as the
// invocation left it and a copy of it made from the same arguments: a plan that is read-only
// once made comes out equal to its copy.
func ExecuteChecked(s testkit.Suite, args []string, stdout, stderr io.Writer) (code int, after, made plan.Plan) {
	p, err := plan.Parse(s, args, io.Discard)
	if err != nil {
		return ExitUsage, plan.Plan{}, plan.Plan{}
	}
	copied, err := plan.Parse(s, args, io.Discard)
	if err != nil {
		return ExitUsage, plan.Plan{}, plan.Plan{}
	}
	e := newEngine(s, p, stderr)
	defer e.listenForSignals()()
	code = e.execute(stdout)
	return code, *p, *copied
}

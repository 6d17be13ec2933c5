package engine

import (
	"slices"

	"github.com/hotspotkit/hotspotkit/results"
	"github.com/hotspotkit/hotspotkit/testkit"
)

// hotSets is how the applied requests of a run spread over its hot key sets, for a suite whose
// requests each write the set Config.HotSet picks (Info.HotSets): the share of them the
// hottest set took, beside the share the distribution gives it. Nil for any other suite, and
// when the run's applied requests are not known or none was applied (or c has no
// distribution over its hot keys, as the plan always gives it).
func hotSets(info testkit.Info, c testkit.Config, applied testkit.Result) *results.HotSets {
	if !info.HotSets || applied == nil || c.HotKeys < 1 || c.HotKeyDist.Keys() != c.HotKeys {
		return nil
	}
	perSet := make([]int64, c.HotKeys)
	var total int64
	for i := range applied.Len() {
		if applied.Applied(i) {
			perSet[c.HotSet(i)]++
			total++
		}
	}
	if total == 0 {
		return nil
	}
	return &results.HotSets{Requests: total, HottestShare: float64(slices.Max(perSet)) / float64(total),
		ExpectedHottestShare: c.HotKeyDist.HottestShare()}
}

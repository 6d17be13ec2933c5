package testkit

// SetAfterInvocation makes every Execute call f with the metrics endpoint's URL once its
// report is written, before the endpoint closes; restore undoes it.
func SetAfterInvocation(f func(metricsURL string)) (restore func()) {
	afterInvocation = f
	return func() { afterInvocation = nil }
}

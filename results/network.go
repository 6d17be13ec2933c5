package results

// Network is what a report says of the round trips between the service and its servers:
// measured by a probe over the same path as the load (SELECT 1 to PostgreSQL, PING to Redis,
// a few dozen times a second while the run went on), with or without an added delay, so a
// run against a remote server says what its network was. A run's covers the run; the
// environment's every run of the invocation.
type Network struct {
	Postgres *NetworkPath `json:"postgres,omitempty"`
	// Redis is present when the run used the Redis queue backend.
	Redis *NetworkPath `json:"redis,omitempty"`
}

// NetworkPath is one server's path.
type NetworkPath struct {
	// Proxied is true when the service reached the server through the in-process delaying
	// proxy (--db-rtt or --redis-rtt, given even at 0, --rtt-levels, a network fault), which
	// added ConfiguredRTTMs, spread over ± JitterMs.
	Proxied         bool    `json:"proxied"`
	ConfiguredRTTMs float64 `json:"configured_rtt_ms"`
	JitterMs        float64 `json:"jitter_ms,omitempty"`
	// RTTMs is the probe's round trip over the service's path; Probes counts the probes that
	// answered, ProbeErrors those that failed (a fault struck the path). RTTHistogram is the
	// HDR histogram behind RTTMs (version 10), which baseline merge joins over processes.
	RTTMs        Latency `json:"rtt_ms"`
	RTTHistogram string  `json:"rtt_histogram,omitempty"`
	Probes       int64   `json:"probes"`
	ProbeErrors  int64   `json:"probe_errors,omitempty"`
	// DirectRTTMs is the same probe over a direct connection while the path is proxied: the
	// difference is what the proxy added; DirectRTTHistogram the histogram behind it.
	DirectRTTMs        *Latency `json:"direct_rtt_ms,omitempty"`
	DirectRTTHistogram string   `json:"direct_rtt_histogram,omitempty"`
}

// FaultOutcome is how the requests of a run with a timed fault came through it.
type FaultOutcome struct {
	// Succeeded, Failed and Retried count requests (warm-up included); FailedByClass and
	// RetriesByClass split the failures and the retries by error class.
	Succeeded      int64            `json:"succeeded"`
	Failed         int64            `json:"failed"`
	Retried        int64            `json:"retried"`
	FailedByClass  map[string]int64 `json:"failed_by_class,omitempty"`
	RetriesByClass map[string]int64 `json:"retries_by_class,omitempty"`
	// LongestRequestMs is how long the worst request took, failed or not (with retries, from
	// its first try).
	LongestRequestMs float64 `json:"longest_request_ms"`
	// EndedBy names what ended the requests that hung: a timeout (statement_timeout,
	// lock_timeout, pool_acquire, deadline), the connection (reset, closed), or "fault
	// window" when none failed: they waited the fault out.
	EndedBy []string `json:"ended_by"`
}

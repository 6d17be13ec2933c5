package results

// Advice is what --advise found (version 18): given a workload, the load to hold and
// objectives, the cheapest configuration of the remedy space that held them, every run behind
// it verified; the evidence (every configuration tried or ruled out, and why); the winner and
// the runner-up confirmed by repeats judged with the A/B verdict's statistics; and the
// headroom, the highest load the winner held on a ramp, with what broke first above it. Its
// runs are the report's Runs, referred to by index; the search that chose them is described in
// docs/advisor.md.
type Advice struct {
	// Objectives are what a configuration must hold.
	Objectives Objectives `json:"objectives"`
	// Rate is the open loop's offered rate every trial held (0: a closed loop), and
	// Concurrency the closed loop's workers (or the open loop's cap on requests in flight).
	Rate        float64 `json:"rate,omitempty"`
	Concurrency int     `json:"concurrency"`
	// Modes and Space are what was searched: the modes, in the order given, and the values of
	// each axis stepped (by axis name: slots, max_connections, flush_batch_size,
	// flush_interval_ms). An axis a mode has no use for (a queue's batch for sync) is left out
	// of its configurations' positions.
	Modes []string           `json:"modes"`
	Space map[string][]Value `json:"space,omitempty"`
	// Order is the order of cost the configurations were ranked in, in words (CostOrder).
	Order string `json:"order"`
	// LengthsMs are the trial lengths of the search's rungs: the screening trial first, the
	// full length (--duration) last; confirmation and headroom run at the full length.
	LengthsMs []float64 `json:"lengths_ms"`
	// BudgetMs is --advise-budget; UsedMs the time the invocation took until the advice was
	// written, its set-up (server, calibration) included.
	BudgetMs float64 `json:"budget_ms"`
	UsedMs   float64 `json:"used_ms"`
	// Outcome is AdviceAnswer, AdviceNoneHolds, AdviceCannotDecide or AdviceStopped.
	Outcome string `json:"outcome"`
	// Configurations are every configuration of the space, in the order of cost: each with
	// its trials, or why none was run.
	Configurations []Configuration `json:"configurations"`
	// Answer is the cheapest configuration that held (AdviceAnswer), RunnerUp the next one
	// that held, Closest the configuration that came nearest to holding when none did
	// (AdviceNoneHolds).
	Answer   *Choice `json:"answer,omitempty"`
	RunnerUp *Choice `json:"runner_up,omitempty"`
	Closest  *Choice `json:"closest,omitempty"`
	// Confirmation is the winner's and the runner-up's repeats, interleaved, and the verdict
	// on each figure (absent when the search ended before it).
	Confirmation *Confirmation `json:"confirmation,omitempty"`
	// Headroom is the ramp of the winner's load (absent without an answer).
	Headroom *Headroom `json:"headroom,omitempty"`
	// Next is what the search would have run next when the budget ran out (AdviceCannotDecide).
	Next []Proposal `json:"next,omitempty"`
	// Notes say, in words, what a reader should know of this search: a rule it relied on where
	// that may not hold, a budget that cut a phase short.
	Notes []string `json:"notes,omitempty"`
}

// The outcomes of an advice.
const (
	// AdviceAnswer: a configuration held every objective at the full length, verified.
	AdviceAnswer = "answer"
	// AdviceNoneHolds: every configuration of the space was tried or ruled out, and none held.
	AdviceNoneHolds = "none_holds"
	// AdviceCannotDecide: the budget ran out before a configuration held at the full length
	// with every cheaper one ruled out, or before the winner's confirmation.
	AdviceCannotDecide = "cannot_decide"
	// AdviceStopped: the invocation ended early (a signal, a broken run).
	AdviceStopped = "stopped"
)

// Objectives are what a configuration of an advice must hold: a request p99 (--slo-p99-ms),
// a persist lag p99 for the modes that defer their writes (--slo-lag-p99-ms), and a ceiling on
// the database's sessions (--max-server-sessions, against pool.max_server_sessions); 0: not
// an objective. Every run must also be verified, have no failed request, and in an open loop
// send at least RateHeldFraction of its arrivals.
type Objectives struct {
	P99Ms             float64 `json:"slo_p99_ms,omitempty"`
	LagP99Ms          float64 `json:"slo_lag_p99_ms,omitempty"`
	MaxServerSessions int     `json:"max_server_sessions,omitempty"`
}

// Configuration is one point of an advice's space: a mode and its value on each axis of the
// space it uses.
type Configuration struct {
	Mode string   `json:"mode"`
	At   Position `json:"at,omitempty"`
	// Status is ConfigHeld, ConfigFailed, ConfigPruned, ConfigUnfinished or ConfigUntried.
	Status string `json:"status"`
	// Trials are its runs, in the order they ran.
	Trials []Trial `json:"trials,omitempty"`
	// Why says why it was ruled out, in words: the objective its last trial missed and by how
	// much, the rule that pruned it (naming the configuration whose trial showed it), or that the
	// search never reached it.
	Why string `json:"why,omitempty"`
	// PrunedBy is the index among Configurations of the configuration whose trial pruned it
	// (with Status ConfigPruned).
	PrunedBy *int `json:"pruned_by,omitempty"`
}

// The statuses of a configuration.
const (
	ConfigHeld   = "held"   // held every objective at the full length, every trial verified
	ConfigFailed = "failed" // a trial missed an objective (Why, and its trial's Misses, say which)
	ConfigPruned = "pruned" // never run past where a rule showed it cannot win (Why)
	// ConfigUnfinished held (or nearly held) a shorter trial, and the search ended before its
	// full length; ConfigUntried was never run. Cheaper ones held, or the budget ran out (Why).
	ConfigUnfinished = "unfinished"
	ConfigUntried    = "untried"
)

// Trial is one run of a configuration in an advice.
type Trial struct {
	// Run is the run's index in the report's Runs.
	Run int `json:"run"`
	// Phase is PhaseScreen, PhaseRung, PhaseConfirm or PhaseHeadroom.
	Phase    string  `json:"phase"`
	LengthMs float64 `json:"length_ms"`
	// Held says the run held every objective; Misses are those it missed (none when it held).
	Held   bool   `json:"held"`
	Misses []Miss `json:"misses,omitempty"`
}

// The phases of an advice's trials.
const (
	PhaseScreen   = "screen"   // the shortest trial, every configuration reached
	PhaseRung     = "rung"     // a longer trial of a configuration that held a shorter one
	PhaseConfirm  = "confirm"  // a repeat of the winner or the runner-up, interleaved
	PhaseHeadroom = "headroom" // a step of the winner's ramp
)

// Miss is one objective a run (or a configuration's runs) missed: the figure found and the
// limit. Ratio is Value over Limit (Limit over Value for the share of arrivals sent), above 1;
// 0 where no ratio says it: a run not verified, failed requests, a figure not measured.
type Miss struct {
	Objective string  `json:"objective"`
	Limit     float64 `json:"limit"`
	Value     float64 `json:"value"`
	Ratio     float64 `json:"ratio,omitempty"`
	// NotMeasured: the run has no such figure (an outbox's lag, sessions the monitor did not
	// read), so it cannot be shown to hold.
	NotMeasured bool `json:"not_measured,omitempty"`
}

// The objectives a Miss names: the metrics they judge, and two of their own.
const (
	ObjectiveP99         = MetricP99Ms
	ObjectiveLagP99      = MetricPersistLagP99Ms
	ObjectiveSessions    = MetricServerSessions
	ObjectiveRateHeld    = MetricSentShare
	ObjectiveVerified    = "verified"        // Value 0, Limit 1: the run was not verified
	ObjectiveNoFailures  = "failed_requests" // Value the failed requests, Limit 0
	ObjectiveQueueIntact = "queue_dropped"   // Value the records a full queue dropped, Limit 0
)

// Choice is a configuration an advice names (the answer, the runner-up, the closest): its
// index among Configurations, the runs at the full length it is judged on, the medians of
// their figures, and what it missed (the closest's misses).
type Choice struct {
	Configuration int                `json:"configuration"`
	Mode          string             `json:"mode"`
	At            Position           `json:"at,omitempty"`
	Runs          []int              `json:"runs"`
	Figures       map[string]float64 `json:"figures"`
	Misses        []Miss             `json:"misses,omitempty"`
}

// Confirmation is the winner (A) and the runner-up (B) repeated at the full length, interleaved
// (A B A B ...), each side's runs judged figure by figure with the A/B verdict's statistics
// (package results/verdict: a Mann-Whitney U test, a Hodges-Lehmann ratio B/A and its
// distribution-free interval, against a 5% minimum effect).
type Confirmation struct {
	// Winner and RunnerUp are each side's runs at the full length (its search trial first).
	Winner   []int `json:"winner"`
	RunnerUp []int `json:"runner_up,omitempty"`
	// Judgements are the verdicts on the figures both sides have (absent without a runner-up).
	Judgements []Judgement `json:"judgements,omitempty"`
	// WithinNoise says the two sides are not told apart on any objective's figure (every
	// verdict same or inconclusive): either holds, and the advice names both.
	WithinNoise bool `json:"within_noise"`
	// CheaperBy says what puts the winner before the runner-up in the order of cost: less
	// change to the service, fewer slots, a smaller pool, less WAL per request or less lag (the
	// last two by the verdicts); "" when nothing told them apart (the first in the order given
	// is named).
	CheaperBy string `json:"cheaper_by,omitempty"`
	// Swapped says the runner-up of the search became the winner: equal in the order of cost
	// but for a measured figure (WAL per request, then lag), on which the repeats found it
	// better, or the search's winner missed an objective over its repeats.
	Swapped bool `json:"swapped,omitempty"`
}

// Judgement is the verdict on one figure of a confirmation: B (the runner-up) against A (the
// winner).
type Judgement struct {
	Metric  string  `json:"metric"`
	MedianA float64 `json:"median_a"`
	MedianB float64 `json:"median_b"`
	// Ratio is the estimate of B/A and Lo, Hi its 95% interval (meaningful with HasRatio, the
	// interval with Bounded); P the test's p-value; Verdict better, worse, same or
	// inconclusive, for B.
	Ratio    float64 `json:"ratio,omitempty"`
	Lo       float64 `json:"lo,omitempty"`
	Hi       float64 `json:"hi,omitempty"`
	HasRatio bool    `json:"has_ratio"`
	Bounded  bool    `json:"bounded"`
	P        float64 `json:"p"`
	Verdict  string  `json:"verdict"`
}

// Headroom is the winner's load ramped until a step missed an objective: Axis is rate (an open
// loop) or concurrency (a closed loop), each step a run at the full length.
type Headroom struct {
	Axis  string         `json:"axis"`
	Steps []HeadroomStep `json:"steps"`
	// Held is the highest load that held (the knee; absent when the first step failed);
	// Failed the lowest that did not (absent when none failed: the ramp ended first).
	Held   *Value `json:"held,omitempty"`
	Failed *Value `json:"failed,omitempty"`
	// Breaks is what broke first at Failed (BreaksRowLock, BreaksPool, ...), and BreaksDetail
	// says it with its figures.
	Breaks       string `json:"breaks,omitempty"`
	BreaksDetail string `json:"breaks_detail,omitempty"`
	// Complete is false when the ramp ended before a step failed (its last step, or the budget).
	Complete bool `json:"complete"`
}

// HeadroomStep is one step of the ramp.
type HeadroomStep struct {
	Value Value `json:"value"`
	Run   int   `json:"run"`
	Held  bool  `json:"held"`
	// Full is a run of the knee at the search's full length; the other steps are screenings
	// (LengthMs long; absent in reports before the screened ramp, whose steps were all full).
	// Only a full-length step that held moves the knee (Headroom.Held).
	Full     bool    `json:"full,omitempty"`
	LengthMs float64 `json:"length_ms,omitempty"`
	Misses   []Miss  `json:"misses,omitempty"`
}

// What breaks first at the headroom's failing step.
const (
	BreaksRowLock    = "row_lock"    // sessions queued on a hot row's lock
	BreaksPool       = "pool"        // requests waited for one of the pool's connections
	BreaksPooler     = "pooler"      // clients waited in the pooler for a server connection
	BreaksPersistLag = "persist_lag" // the queue's workers fell behind
	BreaksClient     = "client"      // the arrivals waited for a free worker (--concurrency), or were not sent
	BreaksSessions   = "sessions"    // the database's sessions rose above the ceiling
	BreaksVerified   = "verification"
	BreaksUnclear    = "unclear" // no one cause stands out; the detail gives the figures
)

// Proposal is a trial the search would run: a configuration, its phase and length.
type Proposal struct {
	Mode     string   `json:"mode"`
	At       Position `json:"at,omitempty"`
	Phase    string   `json:"phase"`
	LengthMs float64  `json:"length_ms"`
}

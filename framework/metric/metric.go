// Package metric is the one catalogue of benchci's figures: each metric's
// name, unit, better direction and statistics, and the keys ("ttft.p99",
// "output_throughput") by which suites, SLOs, tolerances, the gate, reports
// and baselines name them. Everything that names a figure checks the name
// here, so a typo is an error where it was written, never a silent default.
//
// The package imports nothing of benchci's: results files, suites and the
// recorder all depend on it, and it on none of them.
package metric

import (
	"fmt"
	"slices"
	"strings"

	"github.com/benchci/benchci/internal/didyoumean"
)

// Better says which direction of change is good.
type Better string

// Directions.
const (
	Lower  Better = "lower"
	Higher Better = "higher"
)

// Kind groups metrics by how they are measured, which decides how a change
// in them is tested.
type Kind int

// Kinds.
const (
	// Latency metrics are distributions recorded per request (or per chunk
	// gap) into a histogram of the same name, in milliseconds; they are
	// read through a statistic (p99, mean, ...).
	Latency Kind = iota
	// Throughput metrics are counts over the measured window, per second.
	Throughput
	// Fraction metrics are shares of requests (0..1).
	Fraction
	// Cost metrics are dollars, derived from throughput and hardware cost.
	Cost
	// Search metrics describe a whole sweep (a capacity search), not a point.
	Search
	// Ratio metrics are other per-point ratios, compared by relative band.
	Ratio
)

// Scope says what one sample of a metric is, which decides a statistic's
// sample size and what a results file may hold of it.
type Scope int

// Scopes.
const (
	// PerRequest metrics have one value per answered request.
	PerRequest Scope = iota
	// PerGap metrics are sampled many times within each request (ITL: every
	// chunk gap). Samples of one request move together (a slow batch slows
	// all its gaps), so a statistic's sample size is the number of
	// requests, not of samples.
	PerGap
	// PerPoint metrics are one figure per load point (counts over its window).
	PerPoint
	// PerSearch metrics are one figure per sweep.
	PerSearch
)

// Test names how the gate decides whether a change outside the tolerance
// band is more than noise, when a point has too few trials for a rank test
// (with enough trials every figure gets Mann-Whitney U over the trials).
type Test int

// Tests.
const (
	// BandOnly: no single-trial test; outside the band is a change.
	BandOnly Test = iota
	// QuantileInterval: distribution-free 99% intervals of the percentile,
	// read from the two sides' histograms, must not overlap.
	QuantileInterval
	// PoissonRates: completions over the two windows, as two Poisson rates.
	PoissonRates
	// TwoProportions: a share of checked answers, as two binomial proportions.
	TwoProportions
)

// APIs is a set of request APIs (suite.api) a metric is measured for.
type APIs uint8

// The request APIs.
const (
	Chat APIs = 1 << iota
	Completions
	Embeddings
	// Generation is the streamed APIs, whose answers are tokens.
	Generation = Chat | Completions
	// AnyAPI is every API.
	AnyAPI = Generation | Embeddings
)

// Has reports whether the set holds the API a suite names ("chat",
// "completions", "embeddings").
func (a APIs) Has(api string) bool {
	switch api {
	case "chat":
		return a&Chat != 0
	case "completions":
		return a&Completions != 0
	case "embeddings":
		return a&Embeddings != 0
	}
	return false
}

// Def defines one metric: what it is and how every part of benchci treats
// it. A new metric is a new entry here; what reads it from a point is
// result.Point.Value's table, which a test keeps complete.
type Def struct {
	Name   string
	Kind   Kind
	Unit   string
	Better Better
	// Doc says what is measured, in a line.
	Doc string
	// APIs are the request APIs it is measured for.
	APIs APIs
	// Scope is what one sample is.
	Scope Scope
	// Test is how the gate tests a change in it with a single trial.
	Test Test
	// SLO is set when suites may assert on it.
	SLO bool
	// Goodput is set when it can be a per-request goodput criterion.
	Goodput bool
	// Only names the condition under which it is recorded at all ("" for
	// always): the report table lists the unconditional ones.
	Only string
}

// Conditions of Def.Only.
const (
	OnlyRetries = "with a retry policy"
	OnlyTools   = "with tool calls (workload.structured)"
	OnlyGoodput = "with per-request SLOs (goodput)"
	OnlyCost    = "with cost inputs"
	OnlyPower   = "with power telemetry"
	OnlySearch  = "in a capacity search"
)

// Latency histogram names, which are also the metrics' names.
const (
	TTFT       = "ttft"
	TTFTAnswer = "ttft_answer"
	TPOT       = "tpot"
	ITL        = "itl"
	E2E        = "e2e"
	TTFTSched  = "ttft_sched"
	E2ESched   = "e2e_sched"
	Lag        = "sched_lag"
	// TTFTUser and E2EUser run from a request's first attempt: what a user
	// of a retrying client feels (recorded when the suite retries).
	TTFTUser = "ttft_user"
	E2EUser  = "e2e_user"
)

// Scalar metric names.
const (
	ErrorRate         = "error_rate"
	RequestThroughput = "request_throughput"
	OutputThroughput  = "output_throughput"
	TotalThroughput   = "total_throughput"
	Goodput           = "goodput"
	CostPerMOutput    = "cost"
	// EnergyPerOutputToken is measured power over output throughput.
	EnergyPerOutputToken = "energy_per_output_token"
	Capacity             = "capacity"
	// RetryAmplification is attempts per request: the load the server
	// really saw, relative to the load offered.
	RetryAmplification = "retry_amplification"
	// StructuredCorrect is the share of structured answers that matched
	// their schema (workload.structured).
	StructuredCorrect = "structured_correct_rate"
	// TTFTTool is send to the first tool-call delta.
	TTFTTool = "ttft_tool"
)

var defs = []Def{
	{Name: TTFT, Kind: Latency, Unit: "ms", Better: Lower, APIs: Generation, Scope: PerRequest, Test: QuantileInterval, SLO: true, Goodput: true, Doc: "request send to the first chunk with output (answer or reasoning)"},
	{Name: TTFTAnswer, Kind: Latency, Unit: "ms", Better: Lower, APIs: Generation, Scope: PerRequest, Test: QuantileInterval, SLO: true, Doc: "request send to the first chunk with answer content"},
	{Name: TPOT, Kind: Latency, Unit: "ms", Better: Lower, APIs: Generation, Scope: PerRequest, Test: QuantileInterval, SLO: true, Goodput: true, Doc: "(E2E - TTFT) / (output tokens - 1), per request"},
	{Name: ITL, Kind: Latency, Unit: "ms", Better: Lower, APIs: Generation, Scope: PerGap, Test: QuantileInterval, SLO: true, Doc: "gap between consecutive output chunks; chunks that came in one socket read share its time since the read before evenly"},
	{Name: E2E, Kind: Latency, Unit: "ms", Better: Lower, APIs: AnyAPI, Scope: PerRequest, Test: QuantileInterval, SLO: true, Goodput: true, Doc: "request send to the last byte of the stream"},
	{Name: TTFTSched, Kind: Latency, Unit: "ms", Better: Lower, APIs: Generation, Scope: PerRequest, Test: QuantileInterval, SLO: true, Doc: "intended send to the first output chunk (coordinated omission)"},
	{Name: E2ESched, Kind: Latency, Unit: "ms", Better: Lower, APIs: AnyAPI, Scope: PerRequest, Test: QuantileInterval, SLO: true, Doc: "intended send to the last byte"},
	{Name: TTFTUser, Kind: Latency, Unit: "ms", Better: Lower, APIs: Generation, Scope: PerRequest, Test: QuantileInterval, SLO: true, Goodput: true, Only: OnlyRetries, Doc: "first attempt's send to the first output chunk of the attempt that answered, backoffs included"},
	{Name: E2EUser, Kind: Latency, Unit: "ms", Better: Lower, APIs: AnyAPI, Scope: PerRequest, Test: QuantileInterval, SLO: true, Goodput: true, Only: OnlyRetries, Doc: "first attempt's send to the last byte of the attempt that answered, backoffs included"},
	{Name: Lag, Kind: Latency, Unit: "ms", Better: Lower, APIs: AnyAPI, Scope: PerRequest, Test: QuantileInterval, Doc: "intended send to actual send: the client's own lateness"},
	{Name: TTFTTool, Kind: Latency, Unit: "ms", Better: Lower, APIs: Chat, Scope: PerRequest, Test: QuantileInterval, SLO: true, Only: OnlyTools, Doc: "request send to the first tool-call delta"},
	{Name: RequestThroughput, Kind: Throughput, Unit: "req/s", Better: Higher, APIs: AnyAPI, Scope: PerPoint, Test: PoissonRates, SLO: true, Doc: "requests completed inside the measured window, per second"},
	{Name: OutputThroughput, Kind: Throughput, Unit: "tok/s", Better: Higher, APIs: Generation, Scope: PerPoint, Test: PoissonRates, SLO: true, Doc: "output tokens streamed inside the measured window, per second"},
	{Name: TotalThroughput, Kind: Throughput, Unit: "tok/s", Better: Higher, APIs: AnyAPI, Scope: PerPoint, Test: PoissonRates, SLO: true, Doc: "prompt and output tokens inside the measured window, per second"},
	{Name: Goodput, Kind: Throughput, Unit: "req/s", Better: Higher, APIs: Generation, Scope: PerPoint, Test: PoissonRates, SLO: true, Only: OnlyGoodput, Doc: "requests per second that met every per-request SLO (DistServe)"},
	{Name: ErrorRate, Kind: Fraction, Unit: "fraction", Better: Lower, APIs: AnyAPI, Scope: PerPoint, Test: BandOnly, SLO: true, Doc: "failed requests over requests sent"},
	{Name: StructuredCorrect, Kind: Fraction, Unit: "fraction", Better: Higher, APIs: Chat, Scope: PerPoint, Test: TwoProportions, SLO: true, Only: OnlyTools, Doc: "structured answers whose tool-call arguments or JSON text parse and match the schema, over those checked"},
	{Name: RetryAmplification, Kind: Ratio, Unit: "attempts/request", Better: Lower, APIs: AnyAPI, Scope: PerPoint, Test: BandOnly, SLO: true, Only: OnlyRetries, Doc: "attempts sent per measured request: 1 without retries"},
	{Name: CostPerMOutput, Kind: Cost, Unit: "$/1M out", Better: Lower, APIs: Generation, Scope: PerPoint, Test: BandOnly, Only: OnlyCost, Doc: "dollars per million output tokens at the point's throughput"},
	{Name: EnergyPerOutputToken, Kind: Ratio, Unit: "J/token", Better: Lower, APIs: Generation, Scope: PerPoint, Test: BandOnly, SLO: true, Only: OnlyPower, Doc: "GPU power measured by telemetry (the first endpoint serving it) over output throughput: joules per output token"},
	{Name: Capacity, Kind: Search, Unit: "req/s", Better: Higher, APIs: AnyAPI, Scope: PerSearch, Test: BandOnly, Only: OnlySearch, Doc: "highest rate at which every SLO held, from a capacity search"},
}

// Stats are the statistics of a latency metric, in report order.
var Stats = []string{"min", "mean", "p50", "p90", "p95", "p99", "p99.9", "max"}

// Lookup returns the named metric's definition.
func Lookup(name string) (Def, bool) {
	i := slices.IndexFunc(defs, func(d Def) bool { return d.Name == name })
	if i < 0 {
		return Def{}, false
	}
	return defs[i], true
}

// All returns every metric, in report order.
func All() []Def { return slices.Clone(defs) }

// Names returns the names of the metrics for which keep is true (all when
// keep is nil), in report order.
func Names(keep func(Def) bool) []string {
	var out []string
	for _, d := range defs {
		if keep == nil || keep(d) {
			out = append(out, d.Name)
		}
	}
	return out
}

// Quantile returns the percentile a statistic names (99 for "p99") and
// whether it is one.
func Quantile(stat string) (float64, bool) {
	switch stat {
	case "p50":
		return 50, true
	case "p90":
		return 90, true
	case "p95":
		return 95, true
	case "p99":
		return 99, true
	case "p99.9":
		return 99.9, true
	}
	return 0, false
}

// Key names one figure: a latency metric with a statistic ("ttft.p99") or
// a scalar metric alone ("output_throughput").
type Key struct {
	Metric string
	Stat   string
}

// K is shorthand for a Key.
func K(metric, stat string) Key { return Key{Metric: metric, Stat: stat} }

func (k Key) String() string {
	if k.Stat == "" {
		return k.Metric
	}
	return k.Metric + "." + k.Stat
}

// Def returns the key's metric definition; the key must be valid.
func (k Key) Def() Def {
	d, ok := Lookup(k.Metric)
	if !ok {
		panic(fmt.Sprintf("metric: unknown metric %q", k.Metric))
	}
	return d
}

// Check reports whether k names a figure the catalogue has: a known metric,
// with a statistic exactly when it is a latency.
func (k Key) Check() error {
	d, ok := Lookup(k.Metric)
	if !ok {
		return fmt.Errorf("unknown metric %q%s", k.Metric, didyoumean.Hint(k.Metric, Names(nil)))
	}
	switch {
	case d.Kind == Latency && k.Stat == "":
		return fmt.Errorf("%s needs a statistic (%s)", k.Metric, strings.Join(Stats, ", "))
	case d.Kind == Latency && !slices.Contains(Stats, k.Stat):
		return fmt.Errorf("unknown statistic %q of %s%s", k.Stat, k.Metric, didyoumean.Hint(k.Stat, Stats))
	case d.Kind != Latency && k.Stat != "":
		return fmt.Errorf("%s has no statistic; drop %q", k.Metric, k.Stat)
	}
	return nil
}

// ParseKey parses and checks a key such as "ttft.p99" or "error_rate".
// A misspelling gets a did-you-mean over every valid key, so 'ttfb.p99'
// and 'tpot_p95' point at what was meant.
func ParseKey(s string) (Key, error) {
	m, stat, _ := strings.Cut(s, ".")
	k := Key{Metric: m, Stat: stat}
	if d, ok := Lookup(m); ok && d.Kind == Latency && stat == "" {
		// A latency named alone lacks only its statistic: say so and list
		// them, rather than guess one ("ttft.max").
		return Key{}, fmt.Errorf("unknown figure %q: %w", s, k.Check())
	}
	if err := k.Check(); err != nil {
		if best, ok := didyoumean.Closest(s, allKeys()); ok {
			return Key{}, fmt.Errorf("unknown figure %q (did you mean %q?)", s, best)
		}
		return Key{}, fmt.Errorf("unknown figure %q: %w", s, err)
	}
	return k, nil
}

// Keys parses keys written in Go source ("ttft.p99"), panicking on one the
// catalogue lacks: for package-level lists, so that a misspelt or retired
// figure fails every test of the package that lists it instead of
// silently naming nothing.
func Keys(names ...string) []Key {
	out := make([]Key, len(names))
	for i, s := range names {
		k, err := ParseKey(s)
		if err != nil {
			panic("metric: " + err.Error())
		}
		out[i] = k
	}
	return out
}

// allKeys lists every valid key, for suggestions.
func allKeys() []string {
	var out []string
	for _, d := range defs {
		if d.Kind != Latency {
			out = append(out, d.Name)
			continue
		}
		for _, s := range Stats {
			out = append(out, d.Name+"."+s)
		}
	}
	return out
}

// Gated are the figures the gate compares with a baseline, in report
// order. Throughput is never judged without the latency it cost, so both
// kinds are always present.
var Gated = []Key{
	K(TTFT, "p50"), K(TTFT, "p90"), K(TTFT, "p99"),
	K(TPOT, "p50"), K(TPOT, "p99"),
	K(ITL, "p50"), K(ITL, "p99"),
	K(E2E, "p50"), K(E2E, "p99"),
	K(RequestThroughput, ""), K(OutputThroughput, ""), K(Goodput, ""),
	K(ErrorRate, ""), K(CostPerMOutput, ""), K(EnergyPerOutputToken, ""),
	K(TTFTUser, "p99"), K(E2EUser, "p99"), K(RetryAmplification, ""),
	K(StructuredCorrect, ""),
}

// GatedSearch are the figures of a whole sweep the gate compares.
var GatedSearch = []Key{K(Capacity, "")}

// ParseTolerance checks a tolerance key: "default", a gated figure
// ("ttft.p99"), or a latency metric alone ("ttft"), whose band applies to
// all its gated statistics. A band on a figure the gate never compares
// would silently do nothing, so it is an error too.
func ParseTolerance(s string) (Key, error) {
	if s == "default" {
		return Key{}, nil
	}
	if d, ok := Lookup(s); ok && d.Kind == Latency && slices.ContainsFunc(Gated, func(k Key) bool { return k.Metric == s }) {
		return Key{Metric: s}, nil
	}
	gated := append(slices.Clone(Gated), GatedSearch...)
	names := make([]string, len(gated))
	for i, g := range gated {
		names[i] = g.String()
	}
	k, err := ParseKey(s)
	if err != nil {
		return Key{}, fmt.Errorf("unknown tolerance key %q%s", s, didyoumean.Hint(s, append([]string{"default"}, names...)))
	}
	if !slices.Contains(gated, k) {
		return Key{}, fmt.Errorf("%s is not compared by the gate, so a band on it would do nothing (compared: %s)", s, strings.Join(names, ", "))
	}
	return k, nil
}

// MaxValue bounds any figure benchci records or is asked to compare one
// with: 10^12 is 31 years in milliseconds, and a trillion tokens a
// second. Results files refuse a figure past it, and suites a threshold.
const MaxValue = 1e12

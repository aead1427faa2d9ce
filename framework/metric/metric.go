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

// Def defines one metric.
type Def struct {
	Name   string
	Kind   Kind
	Unit   string
	Better Better
	// Doc says what is measured, in a line.
	Doc string
	// SLO is set when suites may assert on it.
	SLO bool
	// PerRequest is set when it can be a per-request goodput criterion.
	PerRequest bool
	// ManyPerRequest is set for a latency sampled many times within each
	// request (ITL: every chunk gap). Samples of one request move together
	// (a slow batch slows all its gaps), so a statistic's sample size is
	// the number of requests, not of samples.
	ManyPerRequest bool
}

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
	{Name: TTFT, Kind: Latency, Unit: "ms", Better: Lower, SLO: true, PerRequest: true, Doc: "request send to the first chunk with output (answer or reasoning)"},
	{Name: TTFTAnswer, Kind: Latency, Unit: "ms", Better: Lower, SLO: true, Doc: "request send to the first chunk with answer content"},
	{Name: TPOT, Kind: Latency, Unit: "ms", Better: Lower, SLO: true, PerRequest: true, Doc: "(E2E - TTFT) / (output tokens - 1), per request"},
	{Name: ITL, Kind: Latency, Unit: "ms", Better: Lower, SLO: true, ManyPerRequest: true, Doc: "gap between consecutive output chunks"},
	{Name: E2E, Kind: Latency, Unit: "ms", Better: Lower, SLO: true, PerRequest: true, Doc: "request send to the last byte of the stream"},
	{Name: TTFTSched, Kind: Latency, Unit: "ms", Better: Lower, SLO: true, Doc: "intended send to the first output chunk (coordinated omission)"},
	{Name: E2ESched, Kind: Latency, Unit: "ms", Better: Lower, SLO: true, Doc: "intended send to the last byte"},
	{Name: TTFTUser, Kind: Latency, Unit: "ms", Better: Lower, SLO: true, PerRequest: true, Doc: "first attempt's send to the first output chunk of the attempt that answered, backoffs included"},
	{Name: E2EUser, Kind: Latency, Unit: "ms", Better: Lower, SLO: true, PerRequest: true, Doc: "first attempt's send to the last byte of the attempt that answered, backoffs included"},
	{Name: Lag, Kind: Latency, Unit: "ms", Better: Lower, Doc: "intended send to actual send: the client's own lateness"},
	{Name: TTFTTool, Kind: Latency, Unit: "ms", Better: Lower, SLO: true, Doc: "request send to the first tool-call delta (workload.structured tool calls)"},
	{Name: RequestThroughput, Kind: Throughput, Unit: "req/s", Better: Higher, SLO: true, Doc: "requests completed inside the measured window, per second"},
	{Name: OutputThroughput, Kind: Throughput, Unit: "tok/s", Better: Higher, SLO: true, Doc: "output tokens streamed inside the measured window, per second"},
	{Name: TotalThroughput, Kind: Throughput, Unit: "tok/s", Better: Higher, SLO: true, Doc: "prompt and output tokens inside the measured window, per second"},
	{Name: Goodput, Kind: Throughput, Unit: "req/s", Better: Higher, SLO: true, Doc: "requests per second that met every per-request SLO (DistServe)"},
	{Name: ErrorRate, Kind: Fraction, Unit: "fraction", Better: Lower, SLO: true, Doc: "failed requests over requests sent"},
	{Name: StructuredCorrect, Kind: Fraction, Unit: "fraction", Better: Higher, SLO: true, Doc: "structured answers whose tool-call arguments or JSON text parse and match the schema, over those checked"},
	{Name: RetryAmplification, Kind: Ratio, Unit: "attempts/request", Better: Lower, SLO: true, Doc: "attempts sent per measured request: 1 without retries"},
	{Name: CostPerMOutput, Kind: Cost, Unit: "$/1M out", Better: Lower, Doc: "dollars per million output tokens at the point's throughput"},
	{Name: EnergyPerOutputToken, Kind: Ratio, Unit: "J/token", Better: Lower, SLO: true, Doc: "GPU power measured by telemetry (the first endpoint serving it) over output throughput: joules per output token"},
	{Name: Capacity, Kind: Search, Unit: "req/s", Better: Higher, Doc: "highest rate at which every SLO held, from a capacity search"},
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
	if err := k.Check(); err != nil {
		if best, ok := didyoumean.Closest(s, allKeys()); ok {
			return Key{}, fmt.Errorf("unknown figure %q (did you mean %q?)", s, best)
		}
		return Key{}, fmt.Errorf("unknown figure %q: %w", s, err)
	}
	return k, nil
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

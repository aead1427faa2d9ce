// Package variants compares runs of several configurations (variants) on
// one workload: per variant its curve, capacity under the SLOs and cost
// there; across variants who has the highest capacity and the lowest
// $/1M tokens, and whether the difference is real by the gate's own
// statistics, or a tie; and the Pareto frontier of throughput against
// tail latency over every point of every variant.
//
// It reads results files only, so a shoot-out run by one suite and runs
// of different configs on different days compare the same way, as long as
// they were sent the same requests (one workload hash).
package variants

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/internal/errjoin"
	"github.com/benchci/benchci/internal/slo"
	"github.com/benchci/benchci/internal/stats"
)

// Schema names the JSON form of a Report.
const Schema = "benchci.variants/v1"

// Entry is one variant's run.
type Entry struct {
	Name string
	File *result.File
	// Path is where the results file is, when it was read from one.
	Path string
}

// Report is the comparison of the variants.
type Report struct {
	Schema       string `json:"schema"`
	Suite        string `json:"suite"`
	WorkloadHash string `json:"workload_hash"`
	// Order is how the variants shared the machine, when one suite ran
	// them ("sequential" or "interleaved"); empty for separate runs.
	Order    string    `json:"order,omitempty"`
	Variants []Variant `json:"variants"`
	// Verdicts are the answers across variants, one per set of SLOs the
	// variants were judged by (one, when a suite ran them).
	Verdicts []Verdict `json:"verdicts"`
	// Frontiers are the Pareto frontiers over every point of every variant.
	Frontiers []Frontier `json:"frontiers"`
	// Incomplete names the variants whose run failed or was stopped.
	Incomplete []string `json:"incomplete,omitempty"`
	// Method says how the verdicts were reached.
	Method string `json:"method"`
	// Virtual is set when the runs were replayed in virtual time on the
	// simulator (run --virtual); virtual and measured runs are never
	// compared together.
	Virtual bool `json:"virtual,omitempty"`
}

// Variant is one variant's figures.
type Variant struct {
	Name     string `json:"name"`
	Path     string `json:"path,omitempty"`
	Target   string `json:"target"`
	Complete bool   `json:"complete"`
	Error    string `json:"error,omitempty"`
	// SLOs are the variant's SLOs, as written ("ttft p99 < 500ms").
	SLOs []string `json:"slos,omitempty"`
	// Capacity is the highest rate at which every SLO held, in requests/s
	// (nil without SLOs or without open-loop points); At is its point.
	Capacity *Capacity `json:"capacity,omitempty"`
	// Peak is the point of highest output throughput; Knee the last point
	// before throughput stopped rising, as the run found it.
	Peak *Figures `json:"peak,omitempty"`
	Knee string   `json:"knee,omitempty"`
	// SLOFailures are the run's failed SLO verdicts (those that gate it),
	// as "ttft p99 < 500ms @ rate=8: 612 ms"; empty when all held.
	SLOFailures []string `json:"slo_failures,omitempty"`
	// SLOInconclusive counts the run's SLO verdicts that were neither
	// given nor failed: their points did not measure the server.
	SLOInconclusive int `json:"slo_inconclusive,omitempty"`
	// Curve is every point, medians over trials, in sweep order.
	Curve []Figures `json:"curve"`
	slos  []suite.SLO
}

// Capacity is a variant's capacity under its SLOs.
type Capacity struct {
	Rate float64 `json:"rate"`
	// Failing is the lowest rate above Rate that failed (0: none did).
	Failing float64 `json:"failing,omitempty"`
	// Bound: "bracketed" (between Rate and Failing), "below-min" (the
	// lowest rate failed; Rate is 0), "at-least-max" (no rate failed).
	Bound string `json:"bound"`
	// Source: "search" (a capacity search) or "sweep" (the highest
	// passing rate of a rate sweep).
	Source string   `json:"source"`
	At     *Figures `json:"at,omitempty"`
}

// Figures are one point's figures, medians over its trials.
type Figures struct {
	Point string `json:"point"`
	// Offered is the point's rate (requests/s) or concurrency.
	Offered     float64 `json:"offered"`
	OpenLoop    bool    `json:"open_loop"`
	RequestsPS  float64 `json:"request_throughput"`
	OutputTokPS float64 `json:"output_throughput"`
	TTFTP99Ms   float64 `json:"ttft_p99_ms"`
	TPOTP99Ms   float64 `json:"tpot_p99_ms"`
	// USDPerMOutput and USDPerMTotal are 0 without cost inputs.
	USDPerMOutput float64 `json:"usd_per_m_output_tokens,omitempty"`
	USDPerMTotal  float64 `json:"usd_per_m_total_tokens,omitempty"`
	USDPerHour    float64 `json:"usd_per_hour,omitempty"`
	// Completed counts the answers inside the windows; Seconds the windows.
	Completed int64   `json:"completed"`
	Seconds   float64 `json:"seconds"`
	// Pass is set when every SLO held here.
	Pass bool `json:"pass"`
	// Saturated is set when a trial was stopped early because the
	// server's queue grew without bound: its throughput is what was
	// finished before the stop, not what the server sustains.
	Saturated bool `json:"saturated,omitempty"`
	// trials are the point's trials, for the tests.
	trials []*result.Point
}

// Verdict answers "which variant" for one question and one SLO set.
type Verdict struct {
	// Question: "capacity" (highest rate meeting the SLOs), "cost" (lowest
	// $/1M output tokens at capacity) or "throughput" (highest peak output
	// throughput, when there are no SLOs).
	Question string   `json:"question"`
	SLOs     []string `json:"slos,omitempty"`
	// Best is the variant that is better than every other beyond noise;
	// empty when some are tied with it. Tied lists the leaders the
	// statistics cannot separate (Best's rivals included).
	Best string   `json:"best,omitempty"`
	Tied []string `json:"tied,omitempty"`
	// Standings rank every variant that has the figure, best first.
	Standings []Standing `json:"standings"`
	// Answer says it in a sentence.
	Answer string `json:"answer"`
}

// Standing is one variant's place for one question.
type Standing struct {
	Variant string  `json:"variant"`
	Value   float64 `json:"value"`
	Unit    string  `json:"unit"`
	// VsLeader is (value - leader's) / leader's (stats.RelDelta, the leader
	// the reference); 0 for the leader.
	VsLeader float64 `json:"vs_leader"`
	// Real is set when the gap to the leader is beyond noise; Test says
	// how that was judged.
	Real bool   `json:"real"`
	Test string `json:"test,omitempty"`
}

// Frontier is the Pareto frontier of output throughput (higher is
// better) against a tail latency (lower is better).
type Frontier struct {
	Latency string          `json:"latency"`
	Points  []FrontierPoint `json:"points"`
}

// FrontierPoint is a point no other point beats on both figures.
type FrontierPoint struct {
	Variant     string  `json:"variant"`
	Point       string  `json:"point"`
	OutputTokPS float64 `json:"output_throughput"`
	LatencyMs   float64 `json:"latency_ms"`
}

// method is the Report's Method.
const method = "Capacity is the highest rate at which every SLO held (a capacity search's result, or a rate sweep's highest passing rate). " +
	"A variant's capacity is below the leader's for real only if, at a rate both measured where the leader passed and it failed, " +
	"a failed SLO's figure differs by the gate's test (99% percentile intervals that do not overlap; the Poisson test for throughputs; Mann-Whitney U with 4+ trials); otherwise it is a tie. " +
	"Cost at capacity is real when the 99% Poisson intervals of the two costs do not overlap; peak throughput uses the Poisson test on completions."

// Compare compares the entries, which must share one workload hash.
func Compare(entries []Entry) (*Report, error) {
	if len(entries) < 2 {
		return nil, fmt.Errorf("compare variants: need at least 2 runs, got %d", len(entries))
	}
	r := &Report{Schema: Schema, Method: method, WorkloadHash: entries[0].File.Suite.WorkloadHash}
	seen := map[string]bool{}
	var errs []error
	for _, e := range entries {
		f := e.File
		if seen[e.Name] {
			errs = append(errs, fmt.Errorf("two runs are named %q", e.Name))
		}
		seen[e.Name] = true
		if f.Virtual != entries[0].File.Virtual {
			errs = append(errs, fmt.Errorf("%s and %s: one was replayed in virtual time (simulated clock), the other measured: their figures cannot be compared", e.Name, entries[0].Name))
		}
		if h := f.Suite.WorkloadHash; h != r.WorkloadHash {
			errs = append(errs, fmt.Errorf("%s was sent another workload (hash %.12s, %s has %.12s): its figures cannot be compared with the others'",
				e.Name, h, entries[0].Name, r.WorkloadHash))
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("compare variants: %w", errjoin.Join(errs...))
	}
	r.Suite, r.Order, r.Virtual = baseName(entries[0].File), entries[0].File.Suite.Order, entries[0].File.Virtual
	for _, e := range entries {
		if baseName(e.File) != r.Suite {
			r.Suite = "" // runs of several suites: no one name
		}
		if e.File.Suite.Order != r.Order {
			r.Order = ""
		}
	}
	groups := map[string][]int{}
	var keys []string
	for i, e := range entries {
		v, slos, err := summarize(e)
		if err != nil {
			return nil, err
		}
		r.Variants = append(r.Variants, v)
		if !v.Complete {
			r.Incomplete = append(r.Incomplete, v.Name)
		}
		k := sloKey(slos)
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], i)
	}
	for _, k := range keys {
		r.Verdicts = append(r.Verdicts, verdicts(r.Variants, groups[k])...)
	}
	r.Frontiers = []Frontier{frontier(r.Variants, metric.K(metric.TTFT, "p99").String(), func(f Figures) float64 { return f.TTFTP99Ms }),
		frontier(r.Variants, metric.K(metric.TPOT, "p99").String(), func(f Figures) float64 { return f.TPOTP99Ms })}
	return r, nil
}

// baseName is the suite a run belongs to: a variant's suite without the
// variant.
func baseName(f *result.File) string {
	if f.Suite.Variant != "" {
		return strings.TrimSuffix(f.Suite.Name, suite.VariantSep+f.Suite.Variant)
	}
	return f.Suite.Name
}

func sloKey(slos []suite.SLO) string {
	b, _ := json.Marshal(slos)
	return string(b)
}

// summarize reads one run: its curve, each point's SLO verdicts, its
// capacity and its peak.
func summarize(e Entry) (Variant, []suite.SLO, error) {
	f := e.File
	v := Variant{Name: e.Name, Path: e.Path, Target: f.TargetLabel(), Complete: !f.Incomplete, Error: f.Error, Curve: []Figures{}}
	s, err := suite.Decode(f.Suite.Definition)
	if err != nil {
		return v, nil, fmt.Errorf("%s: the suite recorded in the results: %w", e.Name, err)
	}
	v.slos = s.SLOs
	if f.Knee != nil {
		v.Knee = f.Knee.Point
	}
	for _, o := range f.SLOs {
		if o.Inconclusive {
			v.SLOInconclusive++
		}
		if !o.Pass && !o.Inconclusive {
			fail := o.Name
			if o.Point != "" {
				fail += fmt.Sprintf(" @ %s: %.4g %s", o.Point, o.Measured, o.Unit)
			}
			v.SLOFailures = append(v.SLOFailures, fail)
		}
	}
	for _, o := range s.SLOs {
		v.SLOs = append(v.SLOs, slo.Name(o))
	}
	var order []string
	byLabel := map[string][]*result.Point{}
	for i := range f.Points {
		p := &f.Points[i]
		if p.Incomplete || !p.Valid() {
			continue // cut short by Ctrl-C, or measured the machine, not the server
		}
		if _, ok := byLabel[p.Label]; !ok {
			order = append(order, p.Label)
		}
		byLabel[p.Label] = append(byLabel[p.Label], p)
	}
	for _, label := range order {
		v.Curve = append(v.Curve, figures(label, byLabel[label], s.SLOs))
	}
	for i := range v.Curve {
		// A saturated probe's throughput is what it finished before its
		// stop, not a peak the configuration sustains.
		if c := &v.Curve[i]; c.OutputTokPS > 0 && !c.Saturated && (v.Peak == nil || c.OutputTokPS > v.Peak.OutputTokPS) {
			v.Peak = c
		}
	}
	if len(s.SLOs) > 0 {
		v.Capacity = capacity(f, v.Curve)
	}
	return v, s.SLOs, nil
}

// figures are a point's medians over its trials, and whether every SLO
// held in every trial.
func figures(label string, ps []*result.Point, slos []suite.SLO) Figures {
	p0 := ps[0]
	f := Figures{Point: label, OpenLoop: p0.Mode == result.ModeRate, trials: ps, Pass: true}
	f.Offered = p0.Rate
	if !f.OpenLoop {
		f.Offered = float64(p0.Concurrency)
	}
	med := func(k metric.Key) float64 {
		var vs []float64
		for _, p := range ps {
			if x, missing := p.Value(k); missing == "" && !math.IsNaN(x) {
				vs = append(vs, x)
			}
		}
		if len(vs) == 0 {
			return 0
		}
		return stats.Median(vs)
	}
	f.RequestsPS = med(metric.K(metric.RequestThroughput, ""))
	f.OutputTokPS = med(metric.K(metric.OutputThroughput, ""))
	f.TTFTP99Ms = med(metric.K(metric.TTFT, "p99"))
	f.TPOTP99Ms = med(metric.K(metric.TPOT, "p99"))
	var outs, tots []float64
	for _, p := range ps {
		f.Completed += int64(math.Round(p.Throughput.Requests * p.Window.Seconds))
		f.Seconds += p.Window.Seconds
		if p.Cost != nil && p.Cost.PerMOutput > 0 {
			outs, tots = append(outs, p.Cost.PerMOutput), append(tots, p.Cost.PerMTotal)
			f.USDPerHour = p.Cost.USDPerHour
		}
	}
	if len(outs) > 0 {
		f.USDPerMOutput, f.USDPerMTotal = stats.Median(outs), stats.Median(tots)
	}
	for _, p := range ps {
		for _, v := range slo.Evaluate(slos, []result.Point{*p}) {
			if v.Point == label && !v.Pass {
				f.Pass = false
			}
		}
		if p.Requests.Sent > 0 && p.Requests.Completed == 0 {
			f.Pass = false // the sanity gate: nothing answered
		}
		if p.Schedule.Saturation != "" {
			f.Saturated = true
		}
	}
	return f
}

// capacity is a capacity search's result, or else the highest rate of an
// open-loop sweep below which every rate passed.
func capacity(f *result.File, curve []Figures) *Capacity {
	at := func(rate float64) *Figures {
		for i := range curve {
			if curve[i].OpenLoop && curve[i].Offered == rate {
				return &curve[i]
			}
		}
		return nil
	}
	if c := f.Capacity; c != nil {
		out := &Capacity{Rate: c.Rate, Failing: c.Failing, Bound: c.Bound, Source: "search"}
		if c.Rate > 0 {
			out.At = at(c.Rate)
		}
		return out
	}
	var open []Figures
	for _, c := range curve {
		if c.OpenLoop && c.Offered > 0 {
			open = append(open, c)
		}
	}
	if len(open) == 0 {
		return nil
	}
	slices.SortFunc(open, func(a, b Figures) int { return cmp.Compare(a.Offered, b.Offered) })
	out := &Capacity{Source: "sweep", Bound: "at-least-max"}
	for _, c := range open {
		if !c.Pass {
			out.Failing = c.Offered
			out.Bound = "bracketed"
			break
		}
		out.Rate = c.Offered
	}
	if out.Rate == 0 {
		out.Bound = "below-min"
	} else {
		out.At = at(out.Rate)
	}
	return out
}

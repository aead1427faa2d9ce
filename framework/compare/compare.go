package compare

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/perf/benchmath"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/stats"
)

// Verdict is the judgement of one figure.
type Verdict string

// Verdicts. Noise is a change outside the band that the statistics cannot
// tell from run-to-run variation; it does not fail the gate.
const (
	Pass        Verdict = "pass"
	Regression  Verdict = "regression"
	Improvement Verdict = "improvement"
	Noise       Verdict = "noise"
	Missing     Verdict = "missing" // in the baseline, not in the candidate
	New         Verdict = "new"     // in the candidate, not in the baseline
	// Inconclusive: no trial of the point on one side measured the server
	// (result.Validity): its figures judge nothing. Test holds the evidence.
	Inconclusive Verdict = "inconclusive"
)

// DefaultBand applies when the suite gives no tolerance for a metric.
var DefaultBand = metric.Band{Rel: 0.10}

// DefaultErrorRateBand is in absolute percentage points: a relative band on
// an error rate near zero would flag 0.1% -> 0.2% as +100%.
const DefaultErrorRateBand = 0.01

// MinTrialsForUTest is the number of trials per side from which the
// Mann-Whitney U test is used: with fewer, no difference can reach p < 0.05.
const MinTrialsForUTest = 4

// Row is one figure at one point.
type Row struct {
	Point  string        `json:"point"`
	Metric string        `json:"metric"`
	Unit   string        `json:"unit"`
	Better metric.Better `json:"better"`
	Base   float64       `json:"baseline"`
	Cand   float64       `json:"candidate"`
	// Delta is (candidate - baseline) / baseline; nil when the baseline is 0.
	Delta   *float64 `json:"delta,omitempty"`
	Band    string   `json:"band"`
	Verdict Verdict  `json:"verdict"`
	// Test says how significance was judged.
	Test string `json:"test,omitempty"`
}

// Report is the comparison of one suite.
type Report struct {
	Suite string `json:"suite"`
	// Comparable is false when the two runs did not send the same workload;
	// Refusal then explains, and there are no rows.
	Comparable bool   `json:"comparable"`
	Refusal    string `json:"refusal,omitempty"`
	// NoBaseline is set when the suite has no baseline yet: only its SLOs
	// are gated.
	NoBaseline bool `json:"no_baseline,omitempty"`
	// TargetChanged notes that baseline and candidate ran on different
	// targets, which is usually the point of the change under test.
	TargetChanged string `json:"target_changed,omitempty"`
	// RequestsDiffer says how the two runs' requests differed beyond the
	// suite, such as ignore_eos dropped for an engine that does not take it.
	RequestsDiffer string `json:"requests_differ,omitempty"`
	// DefinitionsDiffer says which figures the two sides' benchci
	// versions define differently (result.FiguresChanges).
	DefinitionsDiffer string `json:"definitions_differ,omitempty"`
	// NotGated lists the tolerance keys the suite turned off ('off'):
	// their figures are shown in the run's table, never judged here.
	NotGated  []string     `json:"not_gated,omitempty"`
	Rows      []Row        `json:"rows"`
	SLOs      []result.SLO `json:"slos"`
	Baseline  Side         `json:"baseline"`
	Candidate Side         `json:"candidate"`
	// Method describes the statistics used, for the report's reader.
	Method string `json:"method"`
	// Policy is how this change's rules (tolerances, SLOs, trials, point
	// lengths, rates, goodput, sanity) differ from the base's, which the
	// gate judged by; nil when the base's rules were not known.
	Policy *Policy `json:"policy,omitempty"`
	// Config lists what the change under test changed in the serving
	// config, base → candidate ("launch --max-num-seqs: 256 → 128"); an
	// empty list is the same config, a rerun; nil: not looked at.
	Config *Config `json:"config,omitempty"`
	// Gone says why a suite with a baseline was not run: this change
	// deleted or renamed it (see SuiteGone).
	Gone string `json:"gone,omitempty"`
}

// Policy is a suite's rules under review: those that the change loosens
// fail the gate unless the loosening was approved.
type Policy struct {
	// Reference says where the base's rules were read: "suites/x.jsonnet
	// at origin/main and baselines/x.json as recorded".
	Reference string `json:"reference"`
	// Looser and Stricter are the changed rules, "field: base → this
	// change".
	Looser   []string `json:"looser,omitempty"`
	Stricter []string `json:"stricter,omitempty"`
	// Approved names the approval of a loosening: the baseline re-recorded
	// in the same change, which the owners of baselines/ review.
	Approved string `json:"approved,omitempty"`
}

// Config is what changed in the serving config between the two sides.
type Config struct {
	Changes []string `json:"changes"`
}

// Blocks reports whether the policy fails the gate: loosened, unapproved.
func (p *Policy) Blocks() bool { return p != nil && len(p.Looser) > 0 && p.Approved == "" }

// Refused is the report of a candidate that could not be compared (its
// baseline unreadable, say): why says so, and the gate fails on it.
func Refused(cand *result.File, why string) *Report {
	return &Report{Suite: cand.Suite.Name, Refusal: why, SLOs: cand.SLOs, Candidate: side(cand), Method: method}
}

// SuiteGone is the report of a suite that has a baseline but is no longer
// run: deleted, or renamed so that its baseline no longer finds it. Every
// point of the baseline is missing, so the gate fails until the baseline
// goes too (a deletion the owners of baselines/ review).
func SuiteGone(base *result.File, why string) *Report {
	r := &Report{Suite: base.Suite.Name, Comparable: true, Baseline: side(base), Method: method, Gone: why,
		Candidate: Side{Suite: base.Suite.Name, Target: "(not run)", Complete: true}}
	for _, label := range labels(base.Points, nil) {
		r.Rows = append(r.Rows, Row{Point: label, Metric: "*", Verdict: Missing, Test: "the suite is gone"})
	}
	if len(r.Rows) == 0 {
		r.Rows = append(r.Rows, Row{Point: "*", Metric: "*", Verdict: Missing, Test: "the suite is gone"})
	}
	return r
}

// Side describes one of the compared runs.
type Side struct {
	// Suite is the suite's name: two suites named apart that sent the
	// same requests (one workload hash) compare.
	Suite   string    `json:"suite"`
	Tool    string    `json:"tool"`
	Started time.Time `json:"started"`
	// Target labels the side for people: the simulator's profile, or the
	// engine, its version and URL.
	Target   string `json:"target"`
	Engine   string `json:"engine,omitempty"`
	URL      string `json:"url,omitempty"`
	Model    string `json:"model,omitempty"`
	Trials   int    `json:"trials"`
	Complete bool   `json:"complete"`
	// Error is why an incomplete side's run ended (a launched server that
	// died, a stop): the news of its report.
	Error string `json:"error,omitempty"`
	// Virtual: the side was replayed in virtual time on the simulator
	// (run --virtual), not measured.
	Virtual bool `json:"virtual,omitempty"`
}

// Count returns how many rows have the verdict.
func (r *Report) Count(v Verdict) int {
	n := 0
	for _, row := range r.Rows {
		if row.Verdict == v {
			n++
		}
	}
	return n
}

// SLOFailures counts failed SLO verdicts (an inconclusive one did not fail).
func (r *Report) SLOFailures() int {
	n := 0
	for _, s := range r.SLOs {
		if !s.Pass && !s.Inconclusive {
			n++
		}
	}
	return n
}

// SLOInconclusive counts the SLOs at a point that no valid trial judged:
// each of its verdicts there is inconclusive.
func (r *Report) SLOInconclusive() int {
	type key struct{ name, point string }
	judged := map[key]bool{}
	var order []key
	for _, s := range r.SLOs {
		k := key{s.Name, s.Point}
		if _, seen := judged[k]; !seen {
			order = append(order, k)
		}
		judged[k] = judged[k] || !s.Inconclusive
	}
	n := 0
	for _, k := range order {
		if !judged[k] {
			n++
		}
	}
	return n
}

// Inconclusive reports whether part of the verdict could not be given:
// a point, or an SLO, that no valid trial measured. A gate that did not
// fail but is inconclusive has not passed either.
func (r *Report) Inconclusive() bool {
	return r.Count(Inconclusive) > 0 || r.SLOInconclusive() > 0
}

// Failed reports whether the gate fails: an incomplete candidate run, a
// regression, an SLO failure, a point that disappeared, or runs that
// cannot be compared.
func (r *Report) Failed() bool {
	if !r.Candidate.Complete || r.Policy.Blocks() {
		return true // a run that failed or was stopped proves nothing; nor does a gate that loosened itself
	}
	if r.NoBaseline {
		return r.SLOFailures() > 0
	}
	return !r.Comparable || r.Count(Regression) > 0 || r.Count(Missing) > 0 || r.SLOFailures() > 0
}

// WithoutBaseline reports on a candidate that has nothing to be compared
// with: its SLOs still gate.
//
// Its rows are the candidate's gated figures, each New (the median over
// trials, as a comparison would take), so a first report shows what was
// measured rather than nothing.
func WithoutBaseline(cand *result.File) *Report {
	r := &Report{Suite: cand.Suite.Name, NoBaseline: true, SLOs: cand.SLOs, Candidate: side(cand), Method: method}
	if c := cand.Capacity; c != nil && c.Bound == result.CapacityInconclusive {
		r.Rows = append(r.Rows, Row{Point: "search", Metric: metric.Capacity, Verdict: Inconclusive, Test: c.Why})
	}
	cp := byLabel(cand.Points)
	for _, label := range labels(nil, cand.Points) {
		c, why := valid(cp[label])
		if len(c) == 0 {
			r.Rows = append(r.Rows, Row{Point: label, Metric: "*", Verdict: Inconclusive, Test: "no trial measured the server: " + why})
			continue
		}
		for _, m := range Metrics {
			if v := values(m, c); len(v) > 0 {
				r.Rows = append(r.Rows, Row{Point: label, Metric: m.Key, Unit: m.Unit, Better: m.Better, Cand: stats.Median(v), Verdict: New})
			}
		}
	}
	return r
}

// Ranked returns the rows that fail the gate, worst first: points that
// disappeared, then regressions by how far they moved the wrong way
// (relative change; a rise from zero counts as the largest).
func (r *Report) Ranked() []Row {
	var out []Row
	for _, row := range r.Rows {
		if row.Verdict == Regression || row.Verdict == Missing {
			out = append(out, row)
		}
	}
	severity := func(row Row) float64 {
		if row.Verdict == Missing || row.Delta == nil {
			return math.Inf(1)
		}
		return math.Abs(*row.Delta)
	}
	sort.SliceStable(out, func(i, j int) bool { return severity(out[i]) > severity(out[j]) })
	return out
}

// Method text for reports.
const method = "A change inside the tolerance band passes. Outside it, significance decides between a regression/improvement and noise: " +
	"with ≥4 trials per side, a Mann-Whitney U test on per-trial values (α=0.05, as benchstat); " +
	"with fewer, for latency percentiles, non-overlapping exact distribution-free 99% confidence intervals of the percentile (binomial order statistics over the recorded histograms; a tail percentile of too few requests has no upper bound and cannot be judged significant); " +
	"for throughputs, a conditional binomial test of two Poisson rates on the completions in each window (p < 0.01); " +
	"other figures with fewer trials are judged by the band alone."

// Gate compares cand with base under the tolerances cand's own suite
// declares (stored with its results), as the gate does: a pull request that
// loosens a band is judged by the band it proposes, and says so in the
// baseline edits it shows.
func Gate(base, cand *result.File) (*Report, error) {
	tol, err := cand.Suite.Tolerance()
	if err != nil {
		return nil, err
	}
	r, err := Compare(base, cand, tol)
	if err != nil {
		return nil, fmt.Errorf("compare %s: %w", cand.Suite.Name, err)
	}
	return r, nil
}

// Compare judges cand against base using the candidate suite's tolerances.
// SLOs are the candidate's own verdicts, gated whatever the baseline says.
func Compare(base, cand *result.File, tolerance map[string]string) (*Report, error) {
	r := &Report{Suite: cand.Suite.Name, SLOs: cand.SLOs, Method: method,
		Baseline: side(base), Candidate: side(cand)}
	if r.Refusal = refusal(base, cand); r.Refusal != "" {
		return r, nil
	}
	r.Comparable = true
	r.RequestsDiffer = requestsDiffer(base, cand)
	r.DefinitionsDiffer = definitionsDiffer(base.Figures, cand.Figures)
	if r.Baseline.Target != r.Candidate.Target {
		r.TargetChanged = fmt.Sprintf("%s -> %s", r.Baseline.Target, r.Candidate.Target)
	}
	bands, err := parseBands(tolerance)
	if err != nil {
		return nil, err
	}
	for k, b := range bands {
		if b.Off {
			r.NotGated = append(r.NotGated, k)
		}
	}
	slices.Sort(r.NotGated)
	if row, ok := capacityRow(base.Capacity, cand.Capacity, bands); ok {
		r.Rows = append(r.Rows, row)
	}
	// Unique prompts imply almost no prefix-cache hits; shared prefixes,
	// conversations and datasets imply hits of their own.
	unique := base.Suite.PromptsKind() == "synthetic" && cand.Suite.PromptsKind() == "synthetic"
	bp, cp := byLabel(base.Points), byLabel(cand.Points)
	for _, label := range labels(base.Points, cand.Points) {
		b, c := bp[label], cp[label]
		switch {
		case len(c) == 0:
			r.Rows = append(r.Rows, Row{Point: label, Metric: "*", Verdict: Missing})
			continue
		case len(b) == 0:
			r.Rows = append(r.Rows, Row{Point: label, Metric: "*", Verdict: New})
			continue
		}
		// Only trials that measured the server are judged; a side with
		// none makes the point inconclusive, with the evidence.
		var why string
		if b, why = valid(b); len(b) == 0 {
			r.Rows = append(r.Rows, Row{Point: label, Metric: "*", Verdict: Inconclusive, Test: "the baseline's trials did not measure the server: " + why})
			continue
		}
		if c, why = valid(c); len(c) == 0 {
			r.Rows = append(r.Rows, Row{Point: label, Metric: "*", Verdict: Inconclusive, Test: "no trial measured the server: " + why})
			continue
		}
		if why := warmCache(unique, b, c); why != "" {
			r.Rows = append(r.Rows, Row{Point: label, Metric: "*", Verdict: Inconclusive, Test: why})
			continue
		}
		// A point that answered nothing has no figure to judge: without
		// this row it would pass by having nothing to fail (a trace whose
		// timestamps put every request past the window).
		if completed(b) > 0 && completed(c) == 0 {
			r.Rows = append(r.Rows, Row{Point: label, Metric: "*", Verdict: Missing,
				Test: fmt.Sprintf("the baseline answered %d requests here, this run none (%d sent)", completed(b), sent(c))})
			continue
		}
		wait := cpuWaits(b, c)
		for _, m := range Metrics {
			if row, ok := judge(label, m, b, c, bands); ok {
				r.Rows = append(r.Rows, wait.judged(m, row, bands))
			}
		}
		// Each model of a mix is judged on its own requests too: a change
		// that slows one adapter shows even when the mix hides it.
		for _, name := range modelNames(b, c) {
			bm, cm := modelPoints(b, name), modelPoints(c, name)
			for _, m := range Metrics {
				if m.def.Kind == metric.Cost {
					continue // the cost is the deployment's, not a model's
				}
				if row, ok := judge(label+" ["+name+"]", m, bm, cm, bands); ok {
					r.Rows = append(r.Rows, wait.judged(m, row, bands))
				}
			}
		}
	}
	return r, nil
}

// warmHitRate is the share of prompt tokens a server's prefix cache may
// serve a workload of unique prompts before the server is called warm:
// unique synthetic prompts share only the chat template and a few
// words, a few percent; a quarter means prompts an earlier run sent.
const warmHitRate = 0.25

// warmCache says why a point cannot be compared when a server's prefix
// cache served one side's unique prompts: a long-running server keeps
// the prompts of an earlier run of the same suite (they are identical by
// design), and TTFT then falls by whatever the cache saved, which is not
// the change under review. It reads the engine's own hit rate
// (server.prefix_cache_hit_rate, vLLM and SGLang) where both sides
// recorded one, for prompts that imply none (unique: synthetic on both
// sides).
func warmCache(unique bool, b, c []*result.Point) string {
	if !unique {
		return ""
	}
	rate := func(ps []*result.Point) (float64, bool) {
		var sum float64
		for _, p := range ps {
			v, ok := p.Server[metric.ServerPrefixCacheHitRate]
			if !ok {
				return 0, false
			}
			sum += v
		}
		return sum / float64(len(ps)), len(ps) > 0
	}
	bh, bok := rate(b)
	ch, cok := rate(c)
	if !bok || !cok {
		return ""
	}
	var warm []string
	for _, s := range []struct {
		side string
		hit  float64
	}{{"the baseline's", bh}, {"this run's", ch}} {
		if s.hit > warmHitRate {
			warm = append(warm, fmt.Sprintf("%s server served %.0f%% of its prompt tokens from its prefix cache", s.side, 100*s.hit))
		}
	}
	if len(warm) == 0 || math.Abs(ch-bh) <= warmHitRate/2 {
		return ""
	}
	return "not comparable: cache state differs: " + strings.Join(warm, "; ") + fmt.Sprintf(" (%.0f%% against %.0f%%), where its unique prompts imply almost none: a server kept warm by an earlier run; reset its cache before each point (sweep: { reset_prefix_cache: true }), salt the prompts per run (prompts: { salt: 'run' }) or restart it", 100*ch, 100*bh)
}

// sent counts the points' measured requests (completed counts their
// answers).
func sent(ps []*result.Point) int {
	n := 0
	for _, p := range ps {
		n += p.Requests.Sent
	}
	return n
}

// valid returns the trials that measured the server and, when there are
// none, the evidence of the last one that did not (with its reruns).
func valid(ps []*result.Point) ([]*result.Point, string) {
	var out []*result.Point
	var why string
	for _, p := range ps {
		if p.Valid() {
			out = append(out, p)
			continue
		}
		why = Evidence(p)
	}
	return out, why
}

// Evidence says why a trial did not measure the server, with what its
// discarded attempts showed: "sent 3.4 of 6.0 req/s scheduled; ... (trial
// 1, after 2 reruns)".
func Evidence(p *result.Point) string {
	if p.Validity == nil || len(p.Validity.Invalid) == 0 {
		return ""
	}
	s := strings.Join(p.Validity.Invalid, "; ")
	if n := len(p.Validity.Reruns); n > 0 {
		return fmt.Sprintf("%s (trial %d, after %d reruns)", s, p.Trial, n)
	}
	return fmt.Sprintf("%s (trial %d)", s, p.Trial)
}

// modelNames lists the models of a mix measured on both sides.
func modelNames(base, cand []*result.Point) []string {
	seen := map[string]int{}
	for _, side := range [][]*result.Point{base, cand} {
		names := map[string]bool{}
		for _, p := range side {
			for n := range p.Models {
				names[n] = true
			}
		}
		for n := range names {
			seen[n]++
		}
	}
	var out []string
	for n, k := range seen {
		if k == 2 {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// modelPoints are a point's trials seen through one model's figures.
func modelPoints(ps []*result.Point, name string) []*result.Point {
	var out []*result.Point
	for _, p := range ps {
		if m := p.Models[name]; m != nil {
			q := *p
			q.Measured = *m
			q.Cost = nil
			out = append(out, &q)
		}
	}
	return out
}

// refusal says why base and cand cannot be compared ("" when they can):
// other requests, other clocks (virtual or measured), the simulator
// against a server, an incomplete baseline, or a shard.
func refusal(base, cand *result.File) string {
	switch {
	case base.Suite.Name != cand.Suite.Name && (base.Suite.WorkloadHash != cand.Suite.WorkloadHash || base.Suite.WorkloadHash == ""):
		return fmt.Sprintf("baseline is of suite %q, candidate of %q, and they sent different requests (workload hash %.12s, %.12s)",
			base.Suite.Name, cand.Suite.Name, base.Suite.WorkloadHash, cand.Suite.WorkloadHash)
	case base.Suite.WorkloadHash != cand.Suite.WorkloadHash:
		return fmt.Sprintf("the suite's workload changed since the baseline (workload hash %.12s, now %.12s): "+
			"the two runs did not send the same requests, so their figures cannot be compared. "+
			"If the change is intended, update the baseline in the same pull request: benchci baseline update results/%s.json",
			base.Suite.WorkloadHash, cand.Suite.WorkloadHash, cand.Suite.Name)
	case base.Virtual != cand.Virtual:
		// Refused, not merely not gated: a gate that passed because it
		// had nothing to judge would read as a pass. The two clocks
		// measure different things (a replay has no client, HTTP or
		// machine in its latencies), so every difference between them
		// would be the mode's, not the change's.
		return fmt.Sprintf("the %s is a virtual-time replay (simulated clock) and the %s was measured: their figures cannot be compared. "+
			"Compare virtual runs with virtual runs, measured with measured", virtualSide(base, cand), measuredSide(base, cand))
	case Simulated(base) != Simulated(cand):
		// A simulated figure is the twin's, with an interval of tens of
		// percent around a real server's: judged against a measurement,
		// every verdict would be the twin's error, not the change's.
		sim, real := "baseline", "candidate"
		if Simulated(cand) {
			sim, real = real, sim
		}
		return fmt.Sprintf("the %s ran on benchci's simulator and the %s measured a server: a simulated figure is not a measurement, and their difference is the simulator's error. "+
			"Record a baseline on the server (benchci baseline update)", sim, real)
	case base.Incomplete:
		return "the baseline is an incomplete run; record a complete one"
	case cand.Shard != nil || base.Shard != nil:
		// One shard sent 1/N of the load: judged as the whole run, its
		// throughput would be a regression and its latency a flattery.
		sh, which := cand.Shard, "candidate"
		if sh == nil {
			sh, which = base.Shard, "baseline"
		}
		return fmt.Sprintf("the %s is shard %d of %d, which sent 1/%d of the load: merge the shards first (benchci merge)", which, sh.Index, sh.Count, sh.Count)
	}
	return ""
}

// Simulated reports whether f's figures are benchci's simulator's: a sim
// target (in real or virtual time), or a url or launched target serving
// benchci sim, as its engine was recognized.
func Simulated(f *result.File) bool {
	return f.Target.Kind == "sim" || f.Engine != nil && f.Engine.Name == SimEngine
}

// SimEngine is the engine name benchci's simulator reports.
const SimEngine = "benchci-sim"

func virtualSide(base, _ *result.File) string {
	if base.Virtual {
		return "baseline"
	}
	return "candidate"
}

func measuredSide(base, _ *result.File) string {
	if base.Virtual {
		return "candidate"
	}
	return "baseline"
}

func side(f *result.File) Side {
	trials := 0
	for _, p := range f.Points {
		trials = max(trials, p.Trial)
	}
	sd := Side{Suite: f.Suite.Name, Tool: f.Tool.Version, Started: f.Started, Trials: trials, Complete: !f.Incomplete, Error: f.Error, URL: f.Target.URL, Model: f.Target.Model, Virtual: f.Virtual}
	if e := f.Engine; e != nil && e.Name != "unknown" {
		sd.Engine = e.Name + " " + cmp.Or(e.Version, "(version unknown)")
	}
	sd.Target = f.TargetLabel()
	return sd
}

// requestsDiffer says how two runs' requests differed beyond the suite
// (what the engines' profiles decided), or "" when they did not or a side
// did not record it.
func requestsDiffer(base, cand *result.File) string {
	b, c := base.Sent, cand.Sent
	if b == nil || c == nil || *b == *c {
		return ""
	}
	var d []string
	side := func(v bool) string {
		if v {
			return "the baseline only"
		}
		return "the candidate only"
	}
	if b.IgnoreEOS != c.IgnoreEOS {
		d = append(d, "ignore_eos was sent by "+side(b.IgnoreEOS)+" (output lengths may differ)")
	}
	if b.ContinuousUsage != c.ContinuousUsage {
		d = append(d, "usage on every chunk was asked by "+side(b.ContinuousUsage))
	}
	return "the two sides did not send identical requests: " + strings.Join(d, "; ")
}

// band returns the tolerance for m: its own key, then its metric, then
// "default".
func band(m Metric, bands map[string]metric.Band) (metric.Band, string) {
	for _, k := range []string{m.Key, m.base(), "default"} {
		if b, ok := bands[k]; ok {
			return b, k
		}
	}
	return DefaultBand, "default"
}

func parseBands(tol map[string]string) (map[string]metric.Band, error) {
	out := make(map[string]metric.Band, len(tol))
	for k, v := range tol {
		// A key the gate never reads would leave its figure on the default
		// band without a word: refused, as validate refuses it in a suite.
		if _, err := metric.ParseTolerance(k); err != nil {
			return nil, fmt.Errorf("tolerance: %w", err)
		}
		b, err := metric.ParseBand(v)
		if err != nil {
			return nil, fmt.Errorf("tolerance %s: %w", k, err)
		}
		if b.Off && k == "default" {
			// As validate refuses it: a gate of nothing would pass
			// anything, and a results file is not trusted to say so.
			return nil, fmt.Errorf("tolerance default: 'off' would gate nothing")
		}
		out[k] = b
	}
	return out, nil
}

func judge(label string, m Metric, base, cand []*result.Point, bands map[string]metric.Band) (Row, bool) {
	bv, cv := values(m, base), values(m, cand)
	if len(bv) == 0 || len(cv) == 0 {
		return Row{}, false // the figure does not exist here (no cost declared, no successes)
	}
	if b, _ := band(m, bands); b.Off {
		return Row{}, false // the suite leaves it out of the gate (Report.NotGated)
	}
	row := Row{Point: label, Metric: m.Key, Unit: m.Unit, Better: m.Better, Base: stats.Median(bv), Cand: stats.Median(cv)}
	if d, ok := stats.RelDelta(row.Cand, row.Base); ok { // reference: the baseline
		row.Delta = &d
	}

	inside := false
	if m.def.Kind == metric.Fraction {
		// A relative band on a share near zero would flag 0.1% -> 0.2% as
		// +100%: shares get bands in percentage points.
		limit := DefaultErrorRateBand
		if b, ok := bands[m.Key]; ok {
			limit = b.Rel // "2%" means two percentage points here
		}
		row.Band = fmt.Sprintf("±%g pp", limit*100)
		inside = math.Abs(row.Cand-row.Base) <= limit
	} else {
		b, _ := band(m, bands)
		row.Band = bandString(b)
		inside = withinBand(b, m.Unit, row.Base, row.Cand)
	}
	if inside {
		row.Verdict = Pass
		return row, true
	}

	significant := true
	switch {
	case len(bv) >= MinTrialsForUTest && len(cv) >= MinTrialsForUTest:
		c := benchmath.AssumeNothing.Compare(benchmath.NewSample(bv, &benchmath.DefaultThresholds), benchmath.NewSample(cv, &benchmath.DefaultThresholds))
		significant = c.P < c.Alpha
		row.Test = fmt.Sprintf("Mann-Whitney U p=%.3f n=%d+%d", c.P, c.N1, c.N2)
	case m.def.Test == metric.QuantileInterval && m.quantile > 0:
		bh, ch := merged(m.hist, base), merged(m.hist, cand)
		if bh == nil || ch == nil {
			row.Test = "band only (no histogram)"
			break
		}
		bn, cn := bh.TotalCount(), ch.TotalCount()
		unit := ""
		if m.perRequest {
			bn, cn = min(bn, completed(base)), min(cn, completed(cand))
			unit = " requests"
		}
		blo, bhi := quantileCI(bh, m.quantile, bn)
		clo, chi := quantileCI(ch, m.quantile, cn)
		significant = chi < blo || clo > bhi
		row.Test = fmt.Sprintf("99%% CI %s vs %s (n=%d, %d%s)", ciString(blo, bhi), ciString(clo, chi), bn, cn, unit)
		if !significant && (math.IsInf(bhi, 1) || math.IsInf(chi, 1)) {
			row.Test += fmt.Sprintf("; too few requests to bound a p%g: run longer or use trials", m.quantile)
		}
	case m.def.Test == metric.TwoProportions:
		// A share of answers that were right: two binomial proportions,
		// so that sampling noise on a few hundred answers is not called a
		// regression however the band is set.
		bk, bn := structuredCounts(base)
		ck, cn := structuredCounts(cand)
		pv := stats.TwoProportionsP(float64(bk), float64(bn), float64(ck), float64(cn))
		significant = pv < ciAlpha
		row.Test = fmt.Sprintf("two proportions p=%.3g (%d/%d vs %d/%d correct)", pv, bk, bn, ck, cn)
	case m.def.Test == metric.PoissonRates:
		// A throughput is a count over a window. Under "same rate", the
		// baseline's share of all completions is binomial with p = its share
		// of the time: a conditional test of two Poisson rates. Output
		// tokens come in per-request clumps, so requests are the counts
		// for both throughputs.
		bn, bw := counts(base)
		cn, cw := counts(cand)
		pv := stats.PoissonRatesP(float64(bn), bw, float64(cn), cw)
		significant = pv < ciAlpha
		row.Test = fmt.Sprintf("Poisson rates p=%.3g (%d vs %d completions)", pv, bn, cn)
	default:
		row.Test = fmt.Sprintf("band only (%d vs %d trials; need %d each for a test)", len(bv), len(cv), MinTrialsForUTest)
	}
	worse := (row.Cand > row.Base) == (m.Better == metric.Lower)
	switch {
	case !significant:
		row.Verdict = Noise
	case worse:
		row.Verdict = Regression
	default:
		row.Verdict = Improvement
	}
	return row, true
}

// withinBand reports whether cand is inside band b of base.
func withinBand(b metric.Band, unit string, base, cand float64) bool {
	diff := math.Abs(cand - base)
	return (base != 0 && diff <= b.Rel*math.Abs(base)) ||
		(b.Abs > 0 && unit == "ms" && diff <= float64(b.Abs)/float64(time.Millisecond)) ||
		diff == 0
}

func ciString(lo, hi float64) string {
	if math.IsInf(hi, 1) {
		return "≥" + plain(lo)
	}
	return plain(lo) + "–" + plain(hi)
}

// plain prints three significant digits as people read them: 1140, not
// 1.14e+03.
func plain(v float64) string {
	if math.Abs(v) >= 999.5 {
		return strconv.FormatFloat(math.Round(v), 'f', -1, 64)
	}
	// Three significant digits, written out: 'g' would give 1.23e-05.
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
	return strconv.FormatFloat(r, 'f', -1, 64)
}

func bandString(b metric.Band) string {
	switch {
	case b.Rel > 0 && b.Abs > 0:
		return fmt.Sprintf("±%g%% or ±%v", b.Rel*100, b.Abs)
	case b.Abs > 0:
		return fmt.Sprintf("±%v", b.Abs)
	}
	return fmt.Sprintf("±%g%%", b.Rel*100)
}

func values(m Metric, ps []*result.Point) []float64 {
	var out []float64
	for _, p := range ps {
		if v, ok := m.value(p); ok && !math.IsNaN(v) {
			out = append(out, v)
		}
	}
	return out
}

// merged merges a histogram over trials; nil when a trial lacks it, one
// cannot be decoded, or it is empty.
func merged(name string, ps []*result.Point) *hdrhistogram.Histogram {
	for _, p := range ps {
		if _, ok := p.Histograms[name]; !ok {
			return nil
		}
	}
	h, err := result.MergeHistograms(name, ps)
	if err != nil || h == nil || h.TotalCount() == 0 {
		return nil
	}
	return h
}

// completed is the answers behind ps, the unit of a per-request interval.
func completed(ps []*result.Point) int64 {
	var n int64
	for _, p := range ps {
		n += int64(p.Requests.Completed)
	}
	return n
}

func byLabel(ps []result.Point) map[string][]*result.Point {
	m := map[string][]*result.Point{}
	for i := range ps {
		m[ps[i].Label] = append(m[ps[i].Label], &ps[i])
	}
	return m
}

// labels lists point labels in sweep order: the baseline's, then new ones.
func labels(base, cand []result.Point) []string {
	var out []string
	seen := map[string]bool{}
	for _, ps := range [][]result.Point{base, cand} {
		for _, p := range ps {
			if !seen[p.Label] {
				seen[p.Label] = true
				out = append(out, p.Label)
			}
		}
	}
	return out
}

// capacityRow compares two capacity searches. A capacity is a bracket, not
// a sample, so only the band judges it; a search that hit its bounds on
// either side is reported as a change of bound.
func capacityRow(base, cand *result.Capacity, bands map[string]metric.Band) (Row, bool) {
	if base == nil || cand == nil {
		return Row{}, false
	}
	m := metricOf(metric.K(metric.Capacity, ""))
	b, _ := band(m, bands)
	if b.Off {
		return Row{}, false // the suite leaves it out of the gate (Report.NotGated)
	}
	for _, c := range []*result.Capacity{base, cand} {
		if c.Bound == result.CapacityInconclusive {
			return Row{Point: "search", Metric: m.Key, Unit: m.Unit, Better: m.Better, Base: base.Rate, Cand: cand.Rate, Verdict: Inconclusive, Test: c.Why}, true
		}
	}
	row := Row{Point: "search", Metric: m.Key, Unit: m.Unit, Better: m.Better, Base: base.Rate, Cand: cand.Rate, Test: "band only (a search result)"}
	row.Band = bandString(b)
	if d, ok := stats.RelDelta(cand.Rate, base.Rate); ok { // reference: the baseline's capacity
		row.Delta = &d
	}
	switch {
	case base.Rate == cand.Rate || (base.Rate > 0 && math.Abs(cand.Rate-base.Rate) <= b.Rel*base.Rate):
		row.Verdict = Pass
	case cand.Rate < base.Rate:
		row.Verdict = Regression
	default:
		row.Verdict = Improvement
	}
	return row, true
}

// counts returns completed requests and window seconds summed over trials.
func counts(ps []*result.Point) (int64, float64) {
	var n int64
	var w float64
	for _, p := range ps {
		n += int64(math.Round(p.Throughput.Requests * p.Window.Seconds))
		w += p.Window.Seconds
	}
	return n, w
}

// structuredCounts sums the checked and correct structured answers of a
// point's trials.
func structuredCounts(ps []*result.Point) (correct, checked int64) {
	for _, p := range ps {
		if st := p.Structured; st != nil {
			correct += int64(st.Correct)
			checked += int64(st.Checked)
		}
	}
	return correct, checked
}

// Differ tests whether figure k of one point differs between two sets of
// trials (a and b) with no tolerance band, so that only the statistics
// decide: Regression when b is worse, Improvement when better, Noise when
// the test cannot tell, Pass when equal. Shares (error rates) keep their
// default band of percentage points, having no test. ok is false when a
// side lacks the figure.
func Differ(k metric.Key, a, b []*result.Point) (Row, bool) {
	return judge("", metricOf(k), a, b, map[string]metric.Band{"default": {}})
}

// definitionsDiffer says which figures were defined otherwise between the
// versions of the two sides' definitions: "" when they agree.
func definitionsDiffer(b, c int) string {
	lo, hi := max(min(b, c), 0), max(b, c)
	var changes []string
	if hi > result.Figures {
		// From a later benchci (or a file that says so): its changes are
		// not known here, and a hostile number must not drive the loop.
		changes = append(changes, fmt.Sprintf("definitions version %d, newer than this benchci's %d", hi, result.Figures))
		hi = result.Figures
	}
	for v := lo + 1; v <= hi; v++ {
		if ch, ok := result.FiguresChanges[v]; ok {
			changes = append(changes, ch)
		}
	}
	if len(changes) == 0 {
		return ""
	}
	older := "the baseline"
	if c < b {
		older = "this run"
	}
	return fmt.Sprintf("%s was measured by a benchci that defined some figures otherwise (since then: %s): a move in those figures may be the definitions', not the server's; record the baseline again with one version", older, strings.Join(changes, "; "))
}

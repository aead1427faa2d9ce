package simfit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"gonum.org/v1/gonum/optimize"

	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/sim"
)

// Param is one parameter of the twin the fit moves: a per-step overhead, a
// per-token or per-sequence cost, or an efficiency of a card's peak.
type Param struct {
	Name string
	// Duration marks a time (printed as one); otherwise a fraction.
	Duration bool
	// Min and Max bound the value (an efficiency: sim.MinEfficiency to
	// 1, as Derive accepts); 0 for none.
	Min, Max float64
	get      func(sim.Profile) float64
	set      func(*sim.Profile, float64)
}

// Get reads the parameter's value from a profile.
func (q Param) Get(p sim.Profile) float64 { return q.get(p) }

func durParam(name string, f func(*sim.Profile) *time.Duration) Param {
	return Param{Name: name, Duration: true,
		get: func(p sim.Profile) float64 { return float64(*f(&p)) },
		set: func(p *sim.Profile, v float64) { *f(p) = time.Duration(math.Round(v)) }}
}

// specParam moves a field of a derived profile's spec, on a copy: the
// profile given is not changed.
func specParam(name string, max float64, dur bool, f func(*sim.Spec) *float64, d func(*sim.Spec) *time.Duration) Param {
	p := Param{Name: name, Max: max, Duration: dur}
	if f != nil {
		p.Min = sim.MinEfficiency // every fraction of a spec is an efficiency
	}
	p.get = func(p sim.Profile) float64 {
		s := *p.Spec
		if d != nil {
			return float64(*d(&s))
		}
		return *f(&s)
	}
	p.set = func(pr *sim.Profile, v float64) {
		s := *pr.Spec
		if d != nil {
			*d(&s) = time.Duration(math.Round(v))
		} else {
			*f(&s) = v
		}
		pr.Spec = &s
	}
	return p
}

// The parameters of each kind of profile. A constant profile prices a
// step as step_base + decode_per_seq x decodes + prefill_per_token x
// prompt tokens: each identifies from a different figure (idle ITL, the
// rise of TPOT with load, TTFT with prompt length). attend_ns_per_pair,
// asked for, adds its attention (TTFT rising faster than the prompt, or
// with other requests' contexts where the profile is unified_kv). A profile derived
// from cards prices it by the roofline: memory_efficiency sets decode
// steps (weights and KV streamed), compute_efficiency long prefills,
// step_overhead the fixed cost of every step. seq_overhead, a few
// microseconds per sequence, is a percent of a step and left out unless
// asked for: client figures barely move with it.
var (
	constantParams = []Param{
		durParam("step_base", func(p *sim.Profile) *time.Duration { return &p.StepBase }),
		durParam("decode_per_seq", func(p *sim.Profile) *time.Duration { return &p.DecodePerSeq }),
		durParam("prefill_per_token", func(p *sim.Profile) *time.Duration { return &p.PrefillPerToken }),
		{Name: "attend_ns_per_pair", Max: result.MaxAttendNsPerPair,
			get: func(p sim.Profile) float64 { return p.AttendNsPerPair },
			set: func(p *sim.Profile, v float64) { p.AttendNsPerPair = v }},
	}
	specParams = []Param{
		specParam("memory_efficiency", 1, false, func(s *sim.Spec) *float64 { return &s.MemoryEfficiency }, nil),
		specParam("compute_efficiency", 1, false, func(s *sim.Spec) *float64 { return &s.ComputeEfficiency }, nil),
		specParam("step_overhead", 0, true, nil, func(s *sim.Spec) *time.Duration { return &s.StepOverhead }),
		specParam("seq_overhead", 0, true, nil, func(s *sim.Spec) *time.Duration { return &s.SeqOverhead }),
	}
	defaultSpecParams = []string{"memory_efficiency", "compute_efficiency", "step_overhead"}
)

// Seed gives the named parameters that the profile sets to 0, and that
// have a starting point, that start (the fit scales a value, and cannot
// scale nothing): attend_ns_per_pair starts where attending to a
// 100-token context costs what computing one prompt token does (the fit
// may move it twenty times either way: a large model's attention to a
// long context, or a tiny one's to a short).
func Seed(p sim.Profile, names []string) sim.Profile {
	if p.Spec == nil && slices.Contains(names, "attend_ns_per_pair") && p.AttendNsPerPair == 0 {
		p.AttendNsPerPair = math.Min(result.MaxAttendNsPerPair, float64(p.PrefillPerToken)/100)
	}
	return p
}

// ParamsFor returns the named parameters of the profile's kind, or its
// default set when names is empty.
func ParamsFor(p sim.Profile, names []string) ([]Param, error) {
	all, def := constantParams, []string{"step_base", "decode_per_seq", "prefill_per_token"}
	if p.Spec != nil {
		all, def = specParams, defaultSpecParams
	}
	if len(names) == 0 {
		names = def
	}
	var out []Param
	for _, n := range names {
		i := slices.IndexFunc(all, func(q Param) bool { return q.Name == n })
		if i < 0 {
			known := make([]string, len(all))
			for j, q := range all {
				known[j] = q.Name
			}
			return nil, fmt.Errorf("profile %s has no parameter %q to fit (its are: %s)", p.Name, n, strings.Join(known, ", "))
		}
		if slices.ContainsFunc(out, func(q Param) bool { return q.Name == n }) {
			return nil, fmt.Errorf("parameter %q named twice", n)
		}
		if all[i].get(p) <= 0 {
			return nil, fmt.Errorf("profile %s has %s 0: the fit scales it, and cannot scale nothing", p.Name, n)
		}
		out = append(out, all[i])
	}
	return out, nil
}

// Options tune a fit.
type Options struct {
	// MaxEvals bounds the loss evaluations of one fit (each replays every
	// point); 0 is 300 per parameter plus 300.
	MaxEvals int
	// Workers replay points in parallel; 0 is GOMAXPROCS.
	Workers int
	// MaxFolds bounds a held-out check's refits; 0 is MaxFolds.
	MaxFolds int
}

// Prediction is the figures of a point the twin predicts.
type Prediction map[string]float64

// Predict replays a point on a profile and computes its figures as a
// client does, the network's round trip included (nil when no request
// finished).
func Predict(p sim.Profile, pt Point, seed uint64) Prediction {
	var ttft, e2e, tpot []time.Duration
	var sum, window time.Duration
	tokens := 0
	for rep := range max(pt.Repeats, 1) {
		res := sim.Simulate(p, pt.run(seed<<8|uint64(rep)))
		for _, s := range res.Samples {
			ttft = append(ttft, s.TTFT+pt.Network)
			e2e = append(e2e, s.E2E+pt.Network)
			sum += s.TTFT
			if s.Output > 1 {
				tpot = append(tpot, s.TPOT())
			}
		}
		window += res.Window
		tokens += res.OutputTokens
	}
	if len(ttft) == 0 {
		return nil
	}
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	out := Prediction{FigTTFT: ms(sim.Quantile(ttft, 0.5)), FigE2E: ms(sim.Quantile(e2e, 0.5)),
		FigServerTTFT: ms(sum / time.Duration(len(ttft)))}
	if window > 0 {
		out[FigThroughput] = float64(tokens) / window.Seconds()
	}
	if len(tpot) > 0 {
		out[FigTPOT] = ms(sim.Quantile(tpot, 0.5))
	}
	return out
}

// lossScale is where the loss turns from squared to linear in the log
// ratio (soft L1): a point off by more than about 25% (past the knee,
// where queueing amplifies every error) pulls on the fit no harder than
// in proportion, so it cannot drag the points below the knee with it.
const lossScale = 0.25

// missingRatio stands for the log ratio of a figure the twin could not
// predict (no request finished): far off, but finite.
var missingRatio = math.Log(1000)

func residuals(pts []Point, preds []Prediction, fn func(pt Point, fig string, r float64)) {
	for i, pt := range pts {
		for _, fig := range figNames(pt.Measured) {
			r := missingRatio
			if v := preds[i][fig]; v > 0 {
				r = math.Log(v / pt.Measured[fig])
			}
			fn(pt, fig, r)
		}
	}
}

func figNames(m map[string]float64) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// Loss is the mean soft-L1 loss of the log ratios predicted/measured,
// each weighed by (MinNoise / its figure's noise)^2: a median of few or
// scattered requests counts less than a tight one.
func Loss(pts []Point, preds []Prediction) float64 {
	sum, n := 0.0, 0
	residuals(pts, preds, func(pt Point, fig string, r float64) {
		w := 1.0
		if noise := pt.Noise[fig]; noise > MinNoise {
			w = (MinNoise / noise) * (MinNoise / noise)
		}
		sum += w * 2 * lossScale * lossScale * (math.Sqrt(1+(r/lossScale)*(r/lossScale)) - 1)
		n++
	})
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// predictAll replays the points in parallel; each point's seed is its own
// (Point.seed), so the figures do not depend on the order or the workers.
func predictAll(ctx context.Context, p sim.Profile, pts []Point, workers int) []Prediction {
	out := make([]Prediction, len(pts))
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(workers, len(pts)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if ctx.Err() != nil {
					continue // stopped: the points left are not replayed
				}
				out[i] = Predict(p, pts[i], pts[i].seed)
			}
		}()
	}
	for i := range pts {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// Fitted is a fit's answer.
type Fitted struct {
	Base    sim.Profile
	Profile sim.Profile
	Params  []Param
	// Values are the fitted parameters; Scales each over the base's.
	Values, Scales []float64
	Loss           float64
	Evals          int
	// Predictions are the fitted twin's, point by point (in-sample).
	Predictions []Prediction
}

// maxLogScale bounds how far the fit moves a parameter from the base:
// e^3, twenty times either way.
const maxLogScale = 3.0

// apply sets the parameters at log-scales x over the base, clamped to
// their bounds; the penalty is how far x asked beyond them.
func apply(base sim.Profile, params []Param, x []float64) (sim.Profile, float64) {
	p := base
	penalty := 0.0
	for j, q := range params {
		lx := x[j]
		if math.IsNaN(lx) {
			lx = maxLogScale
		}
		if c := math.Max(-maxLogScale, math.Min(maxLogScale, lx)); c != lx {
			penalty += (c - lx) * (c - lx)
			lx = c
		}
		v := q.get(base) * math.Exp(lx)
		if q.Max > 0 && v > q.Max {
			over := math.Log(v / q.Max)
			penalty += over * over
			v = q.Max
		}
		if q.Min > 0 && v < q.Min {
			under := math.Log(q.Min / v)
			penalty += under * under
			v = q.Min
		}
		q.set(&p, v)
	}
	return p, 10 * penalty
}

// Fit finds the parameters that make the base profile predict the points
// best: Nelder-Mead over log-scales of the base's values, from the base,
// restarted from its answer with fresh, smaller simplexes (a simplex can
// collapse early on a loss that steps as requests change places in the
// batch). It is deterministic: same points, same answer, whatever the
// workers. It stops when ctx is done, within a point's replay, with an
// error that wraps ctx's.
func Fit(ctx context.Context, base sim.Profile, params []Param, pts []Point, opts Options) (*Fitted, error) {
	if len(pts) == 0 {
		return nil, errors.New("no points to fit")
	}
	if len(params) == 0 {
		return nil, errors.New("no parameters to fit")
	}
	maxEvals := opts.MaxEvals
	if maxEvals <= 0 {
		maxEvals = 300 * (len(params) + 1)
	}
	evals := 0
	f := func(x []float64) float64 {
		evals++
		if ctx.Err() != nil {
			return math.Inf(1) // stopped: Status ends the search
		}
		p, penalty := apply(base, params, x)
		return Loss(pts, predictAll(ctx, p, pts, opts.Workers)) + penalty
	}
	// The optimizer asks before each step whether to go on.
	status := func() (optimize.Status, error) {
		if err := ctx.Err(); err != nil {
			return optimize.Failure, err
		}
		return optimize.NotTerminated, nil
	}
	x := make([]float64, len(params))
	best := f(x)
	for _, size := range []float64{0.3, 0.1, 0.03} {
		left := maxEvals - evals
		if left < 2*(len(params)+1) {
			break
		}
		res, err := optimize.Minimize(optimize.Problem{Func: f, Status: status}, x,
			&optimize.Settings{FuncEvaluations: left, Converger: &optimize.FunctionConverge{Absolute: 1e-7, Relative: 1e-6, Iterations: 15 * len(params)}},
			&optimize.NelderMead{SimplexSize: size})
		if ctx.Err() != nil {
			return nil, fmt.Errorf("the fit stopped after %d of at most %d replays of its %d point(s): %w", evals, maxEvals, len(pts), ctx.Err())
		}
		if res == nil {
			return nil, fmt.Errorf("optimize: %w", err)
		}
		if res.F < best {
			best, x = res.F, slices.Clone(res.X)
		}
	}
	p, _ := apply(base, params, x)
	out := &Fitted{Base: base, Profile: p, Params: params, Loss: best, Evals: evals, Predictions: predictAll(ctx, p, pts, opts.Workers)}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("the fit stopped replaying its answer: %w", ctx.Err())
	}
	for _, q := range params {
		out.Values = append(out.Values, q.get(p))
		out.Scales = append(out.Scales, q.get(p)/q.get(base))
	}
	out.Loss = Loss(pts, out.Predictions)
	return out, nil
}

// MaxPoints is the most points a fit replays: each is replayed for every
// one of the optimizer's evaluations (some 1,200 for three parameters),
// and a point at load takes up to half a second.
const MaxPoints = 200

// Sample keeps at most max of the points (MaxPoints when max is 0),
// evenly spaced in their order and the first among them, so every file
// and every load keeps its share: the same points give the same sample.
// It reports whether it left any out.
func Sample(pts []Point, max int) ([]Point, bool) {
	if max <= 0 {
		max = MaxPoints
	}
	if len(pts) <= max {
		return pts, false
	}
	out := make([]Point, max)
	for i := range out {
		out[i] = pts[i*len(pts)/max]
	}
	return out, true
}

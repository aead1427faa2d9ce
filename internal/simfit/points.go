// Package simfit fits the embedded simulator (package sim) to a user's own
// measured runs: it replays each measured load point on the engine in
// virtual time under candidate efficiencies and overheads, and keeps the
// ones whose predicted figures (TTFT, TPOT, end-to-end latency, output
// throughput) come closest to the measured ones. Its held-out error, each
// point predicted by a fit that never saw it, says how far the fitted twin
// can be trusted on a point that was not measured. The fitted parameters
// are written as a profile file a suite can name, and, for profiles
// derived from cards, kept as efficiencies of the card's peaks so they
// carry over to another GPU, tensor-parallel degree or dtype.
package simfit

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/sim"
	"github.com/benchci/benchci/internal/untrusted"
)

// Figure names, as the tables print them.
const (
	FigTTFT       = "ttft_p50"
	FigTPOT       = "tpot_p50"
	FigE2E        = "e2e_p50"
	FigThroughput = "output_tok_s"
	// FigServerTTFT is the server's own mean TTFT (vLLM's
	// time_to_first_token histogram), where its metrics were read.
	FigServerTTFT = "server_ttft_mean"
)

// Point is one measured load point, as the fit replays it.
type Point struct {
	// Name says where it came from: the file (when there are several),
	// the label and the trial.
	Name        string
	Mode        string
	Concurrency int
	Rate        float64
	// Warmup and Requests are the requests simulated: the point's own,
	// bounded (see MaxRequests).
	Warmup, Requests int
	// Repeats is how many times the point is replayed, each with its own
	// arrivals and lengths, its requests pooled.
	Repeats int
	// load is the load the suite asked for (its concurrency or rate, not
	// the rate its trial happened to send at): what tells two trials of
	// one condition from two conditions.
	load float64
	// Network is the client's round trip to the server, which the
	// client's latencies include and the engine's do not: added to the
	// predicted TTFT and end-to-end latency, and the delay before a
	// closed-loop client's next request reaches the engine.
	Network time.Duration
	// Measured figures by name (Fig*), in milliseconds or tokens/s; a
	// figure absent was not measured.
	Measured map[string]float64
	// Noise is each figure's relative standard error, at least MinNoise:
	// the fit weighs a figure by how precisely it was measured.
	Noise  map[string]float64
	prompt lengths
	output lengths
	// seed is the point's own, for its replays: fixed when the points
	// are read, so a point replays the same in every fold of a fit.
	seed uint64
	// inFlight is the requests the point kept in flight on average, and
	// after the most an earlier point of its run did (see AfterHigherLoad).
	inFlight, after float64
}

// MaxRequests bounds the measured requests and warm-up a point replays
// (a closed loop replays at least ten rounds of its clients): medians and
// throughput settle well before, and the fit replays every point
// hundreds of times.
const MaxRequests = 400

// MinNoise is the least relative error a figure is taken to have: the
// replay's own, and the twin's as a model of a real engine.
const MinNoise = 0.02

// MinReplay is the fewest measured requests a point's replays make.
const MinReplay = 200

// MinCompleted is the fewest answers a point needs to be fitted: below,
// its medians are noise.
const MinCompleted = 8

// lengths holds a measured distribution of request lengths: 64
// quantiles of its histogram (or its mean alone).
type lengths struct {
	q    []int
	mean float64
}

// stratified draws lengths from the quantiles in shuffled rounds, each
// quantile once a round: the replay's lengths then follow the measured
// distribution closely even over a few hundred requests, where drawing
// each at random would leave its medians a few percent to luck, a bias
// the fit would chase.
type stratified struct {
	l    lengths
	perm []int
}

func (s *stratified) draw(r *rand.Rand) int {
	if len(s.l.q) == 0 {
		return int(math.Round(s.l.mean))
	}
	if len(s.perm) == 0 {
		s.perm = r.Perm(len(s.l.q))
	}
	i := s.perm[0]
	s.perm = s.perm[1:]
	return s.l.q[i]
}

const lengthQuantiles = 64

// maxTokensPerRequest bounds a length read from a file: above any
// model's context, so a forged histogram cannot make the fit allocate.
const maxTokensPerRequest = 1 << 21

func readLengths(m *result.Measured, hist string, s result.Summary) (lengths, error) {
	l := lengths{mean: s.Mean}
	if !(s.Mean >= 1 && s.Mean <= maxTokensPerRequest) {
		return l, fmt.Errorf("mean %s of %v is not a token count", hist, s.Mean)
	}
	enc, ok := m.Histograms[hist]
	if !ok {
		return l, nil // the mean stands for every request
	}
	h, err := result.DecodeHistogram(enc)
	if err != nil {
		return l, fmt.Errorf("%s histogram: %w", hist, err)
	}
	if h.TotalCount() == 0 {
		return l, nil
	}
	for i := range lengthQuantiles {
		v := h.ValueAtQuantile(100 * (float64(i) + 0.5) / lengthQuantiles)
		if v < 1 || v > maxTokensPerRequest {
			return l, fmt.Errorf("%s histogram holds %d tokens", hist, v)
		}
		l.q = append(l.q, int(v))
	}
	return l, nil
}

// Skipped is a point left out of the fit, and why.
type Skipped struct {
	Name, Why string
}

// Points reads the load points of results files (already read and
// verified by result.Read) that the fit can replay. A point is skipped,
// with the reason, when its trial was invalid, it measured too few
// answers, was stopped early for saturation, failed requests, or its
// figures are missing. network,
// when not negative, is the client's round trip to the server; negative
// reads it from each file (see Network).
func Points(files []*result.File, names []string, network time.Duration) ([]Point, []Skipped, error) {
	var out []Point
	var skipped []Skipped
	for fi, f := range files {
		net := network
		if net < 0 {
			net = Network(f)
		}
		highest := 0.0 // in flight, over the points before
		for i := range f.Points {
			rp := &f.Points[i]
			before, now := highest, inFlight(rp)
			highest = max(before, now)
			name := untrusted.Text(rp.Label)
			if len(files) > 1 {
				name = untrusted.Text(filepath.Base(names[fi])) + ":" + name
			}
			if rp.Trial > 1 {
				name += fmt.Sprintf("#%d", rp.Trial)
			}
			p, why, err := point(rp)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: point %s: %w", names[fi], name, err)
			}
			if why != "" {
				skipped = append(skipped, Skipped{name, why})
				continue
			}
			p.Name, p.Network = name, net
			p.seed = uint64(len(out) + 1)
			p.inFlight, p.after = now, before
			out = append(out, p)
		}
	}
	return out, skipped, nil
}

// AfterHigherLoad names the points an earlier point of their results
// file kept more requests in flight than they did, of at most slots. A
// server with one KV cache for all requests (llama.cpp, Ollama: a
// unified_kv profile, slots its parallel requests) keeps a finished
// request's context in its slot until another request takes it, so such
// a point was measured with contexts the earlier load left behind, in
// every step's attention; the fit replays each point from an empty
// cache, and cannot tell. A results file is taken for one server's run
// (a launch target's; a URL's server may have served more before), and
// what it does not record (a capacity search's probes) is not seen.
func AfterHigherLoad(pts []Point, slots int) []string {
	var names []string
	n := float64(slots)
	for _, p := range pts {
		if min(p.after, n) > min(p.inFlight, n) {
			names = append(names, p.Name)
		}
	}
	return names
}

// maxNetwork bounds the round trip read from a file.
const maxNetwork = time.Second

// Network reads the client's round trip to the server from a results
// file: the overhead (the client's mean TTFT minus the server's) of its
// point of least load. Past the knee the two means cover different
// requests and the difference grows; at the least load they agree within
// the network, and where the client's mean came out below the server's
// (no overhead recorded) the network is lost in the noise: 0.
func Network(f *result.File) time.Duration {
	var least *result.Point
	load := func(p *result.Point) float64 {
		if p.Mode == result.ModeConcurrency {
			return float64(p.Concurrency)
		}
		if p.Rate == 0 {
			return math.Inf(1) // every request at once
		}
		return p.Rate
	}
	for i := range f.Points {
		if p := &f.Points[i]; least == nil || load(p) < load(least) {
			least = p
		}
	}
	if least == nil || least.Overhead == nil || !(least.Overhead.TTFTMeanMs > 0) {
		return 0
	}
	return min(time.Duration(least.Overhead.TTFTMeanMs*1e6), maxNetwork)
}

// inFlight is the requests a point kept in flight on average: a closed
// loop's clients, an open loop's rate times its mean latency (Little's
// law), every request of a burst (a rate of 0).
func inFlight(rp *result.Point) float64 {
	switch {
	case rp.Mode == result.ModeConcurrency:
		return float64(rp.Concurrency)
	case rp.Rate == 0:
		return float64(rp.Requests.Sent)
	}
	e2e := rp.Latency[metric.E2E]
	return max(0, rp.Rate*e2e.Mean/1000)
}

// minTurnaround is the least turnaround a closed-loop client is given:
// over any network at all, loopback included, its next request misses
// the step that starts as its answer ends.
const minTurnaround = 50 * time.Microsecond

func point(rp *result.Point) (Point, string, error) {
	p := Point{Mode: rp.Mode, Concurrency: rp.Concurrency, Rate: rp.Rate, Measured: map[string]float64{}, Noise: map[string]float64{}}
	p.load = rp.Rate
	if rp.Mode == result.ModeConcurrency {
		p.load = float64(rp.Concurrency)
	}
	switch {
	case rp.Incomplete:
		return p, "incomplete (the run was stopped)", nil
	case rp.Validity != nil && len(rp.Validity.Invalid) > 0:
		// A trial benchci discarded measured the machine it ran on: its
		// figures hold the stalls, which no twin of the server should learn.
		return p, "benchci marked the trial invalid: " + untrusted.Clip(untrusted.Text(rp.Validity.Invalid[0]), 160), nil
	case rp.Schedule.Saturation != "":
		return p, "stopped early for saturation: its queue grew without bound", nil
	case rp.Schedule.ClientSaturated:
		return p, "the client, not the server, limited the load", nil
	case rp.Requests.Completed < MinCompleted:
		return p, fmt.Sprintf("%d answers, fewer than %d", rp.Requests.Completed, MinCompleted), nil
	case rp.Requests.Failed > 0:
		return p, fmt.Sprintf("%d requests failed: the simulator serves every one", rp.Requests.Failed), nil
	case len(rp.Models) > 0:
		return p, "a mix of models: the simulator serves one", nil
	case rp.Tokens.Prompt.Count == 0 || rp.Tokens.Output.Count == 0:
		return p, "no prompt or output token counts", nil
	}
	switch rp.Mode {
	case result.ModeConcurrency:
		if rp.Concurrency < 1 || rp.Concurrency > 1<<16 {
			return p, "", fmt.Errorf("concurrency %d", rp.Concurrency)
		}
	case result.ModeRate:
		if !(rp.Rate >= 0 && rp.Rate <= 1e6) {
			return p, "", fmt.Errorf("rate %v", rp.Rate)
		}
		// The rate the client sent at, not the one asked: a short point's
		// Poisson draw can fall a quarter short of its target, and the
		// replay should offer what the server was offered.
		if r := rp.Schedule.SendRate; rp.Rate > 0 && r > 0 && r <= 1e6 {
			p.Rate = r
		}
	default:
		return p, fmt.Sprintf("mode %q is not one the fit replays", untrusted.Text(rp.Mode)), nil
	}
	var err error
	if p.prompt, err = readLengths(&rp.Measured, result.PromptTokensHistogram, rp.Tokens.Prompt); err != nil {
		return p, "", err
	}
	if p.output, err = readLengths(&rp.Measured, result.OutputTokensHistogram, rp.Tokens.Output); err != nil {
		return p, "", err
	}
	p.Requests = min(rp.Requests.Completed, MaxRequests)
	p.Warmup = min(rp.Requests.Warmup, MaxRequests)
	if c := rp.Concurrency; rp.Mode == result.ModeConcurrency {
		// A closed loop needs two rounds of every client to lose the
		// lockstep of their first requests, and eight more to measure
		// a steady state: clients that start together finish together.
		p.Warmup = max(p.Warmup, 2*c)
		p.Requests = max(p.Requests, 8*c)
	}
	// The client's latencies include the network and the client, which
	// the twin does not model: on loopback or a LAN a fraction of a
	// millisecond. (The point's overhead, client minus server TTFT means,
	// is not subtracted: past the knee the two means cover different
	// requests and it reads as tens of milliseconds.)
	// A median's standard error is about 1.25 standard deviations over
	// the root of the count; a mean's one.
	se := func(s result.Summary, of, k float64) float64 {
		return k * s.Stddev / (of * math.Sqrt(float64(s.Count)))
	}
	lat := func(name, fig string) {
		if s, ok := rp.Latency[name]; ok && s.Count > 0 && s.P50 > 0 {
			p.Measured[fig] = s.P50
			p.Noise[fig] = se(s, s.P50, 1.25)
		}
	}
	lat(metric.TTFT, FigTTFT)
	lat(metric.E2E, FigE2E)
	lat(metric.TPOT, FigTPOT)
	if v := rp.Throughput.OutputTokens; v > 0 {
		p.Measured[FigThroughput] = v
	}
	if v, ok := rp.Server["server_ttft_mean_s"]; ok && v > 0 && v < 3600 {
		p.Measured[FigServerTTFT] = 1000 * v
		if s, ok := rp.Latency[metric.TTFT]; ok && s.Count > 0 && s.Mean > 0 {
			p.Noise[FigServerTTFT] = se(s, s.Mean, 1)
		}
	}
	for fig := range p.Measured {
		if n := p.Noise[fig]; !(n >= MinNoise) { // NaN too
			p.Noise[fig] = MinNoise
		}
	}
	for fig, v := range p.Measured {
		if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
			delete(p.Measured, fig)
		}
	}
	if len(p.Measured) == 0 {
		return p, "no latency or throughput figures", nil
	}
	// A short point drew few of its lengths, and its medians would be
	// the replay's luck: it is replayed as often as it takes to make
	// MinReplay requests, each time the same span of load (a longer one
	// would change what a queue past the knee grows to).
	p.Repeats = (MinReplay + p.Requests - 1) / p.Requests
	perRequest := p.prompt.mean + p.output.mean
	if work := float64(p.Repeats*(p.Warmup+p.Requests)) * perRequest; work > MaxReplayTokens {
		// Fewer requests, down to one round of each client measured
		// after one of warm-up; beyond that the point is too large.
		scale := MaxReplayTokens / work
		p.Warmup = max(int(float64(p.Warmup)*scale), p.Concurrency)
		p.Requests = max(int(float64(p.Requests)*scale), p.Concurrency, 1)
		p.Repeats = 1
		if work := float64(p.Warmup+p.Requests) * perRequest; work > MaxReplayTokens {
			return p, fmt.Sprintf("its replay would compute %.0f million tokens, more than the %d million a point may: the fit replays every point hundreds of times", work/1e6, MaxReplayTokens/1_000_000), nil
		}
	}
	return p, "", nil
}

// MaxReplayTokens bounds the tokens one replay of a point computes (a
// closed loop of 256 clients replays 2,560 requests, 3 million tokens
// at 1,000 in and 200 out), so that a file cannot make the fit run for
// days.
const MaxReplayTokens = 20_000_000

// run is the virtual-time replay of the point.
func (p Point) run(seed uint64) sim.Run {
	in, out := &stratified{l: p.prompt}, &stratified{l: p.output}
	r := sim.Run{Warmup: p.Warmup, Requests: p.Requests, Seed: seed, Turnaround: max(p.Network, minTurnaround),
		Lengths: func(r *rand.Rand) (int, int) { return in.draw(r), out.draw(r) }}
	if p.Mode == result.ModeConcurrency {
		r.Concurrency = p.Concurrency
	} else {
		r.Rate = p.Rate
	}
	return r
}

// Distinct counts the points' distinct conditions: a load the suite
// asked for (its mode and concurrency or rate) with a workload (prompt
// and output lengths' means within a tenth of each other). Trials of one
// condition count once, though each sent at its own rate and drew its own
// lengths: they measure the same thing again, and pin no further
// parameter.
func Distinct(pts []Point) int { return count(Conditions(pts)) }

// count is how many conditions Conditions' numbering holds.
func count(cond []int) int {
	n := 0
	for _, c := range cond {
		n = max(n, c+1)
	}
	return n
}

// Conditions numbers each point's condition (see Distinct), from 0, in
// the order the conditions first appear. A point joins the first
// condition whose first point is near it, so lengths that drift by a
// tenth at a time can split or join conditions by their order; trials
// of one suite, the case it is for, draw the same lengths.
func Conditions(pts []Point) []int {
	near := func(a, b float64) bool { return math.Abs(a-b) <= 0.1*max(a, b) }
	var conds []Point
	of := make([]int, len(pts))
	for i, p := range pts {
		c := slices.IndexFunc(conds, func(q Point) bool {
			return q.Mode == p.Mode && q.load == p.load && near(q.prompt.mean, p.prompt.mean) && near(q.output.mean, p.output.mean)
		})
		if c < 0 {
			c = len(conds)
			conds = append(conds, p)
		}
		of[i] = c
	}
	return of
}

// Pinned refuses a fit of more parameters than its points can pin. Each
// parameter moves the figures differently as the load or the lengths
// change (a step's fixed cost against its per-sequence cost, decode
// against prefill), so it takes a condition of its own: at one load, two
// of them trade against each other, and the optimizer settles anywhere
// on that ridge with a small loss and a twin that is wrong off it.
func Pinned(params []Param, pts []Point) error {
	if n := Distinct(pts); n < len(params) {
		names := make([]string, len(params))
		for i, p := range params {
			names[i] = p.Name
		}
		return fmt.Errorf("%d parameters (%s) need at least %d points of distinct loads or lengths to pin them, and the fit has %d: measure more points (a sweep of %d rates or concurrencies), or fit fewer with --params",
			len(params), strings.Join(names, ", "), len(params), n, len(params))
	}
	return nil
}

// Queued says of each point whether its requests waited in a queue, as
// measured or as the twin predicted: its TTFT median or the server's mean
// TTFT (the tail a median hides), or the predicted TTFT median, is
// QueueFactor or more times the least measured of the points with
// prompts of like length (within a quarter). preds, when not nil, are
// the twin's predictions, one a point. Below that, a point is below the
// knee on both sides, where a twin's miss is its structure's, not a
// queue's luck: a note must not blame the knee for it.
func Queued(pts []Point, preds []Prediction) []bool {
	least := func(p Point, fig string) float64 {
		l := math.Inf(1)
		for _, q := range pts {
			if v, ok := q.Measured[fig]; ok && math.Abs(q.prompt.mean-p.prompt.mean) <= 0.25*p.prompt.mean {
				l = min(l, v)
			}
		}
		return l
	}
	out := make([]bool, len(pts))
	for i, p := range pts {
		waited := func(fig string, v float64) bool { return v > 0 && v >= QueueFactor*least(p, fig) }
		out[i] = waited(FigTTFT, p.Measured[FigTTFT]) || waited(FigServerTTFT, p.Measured[FigServerTTFT])
		if preds != nil && preds[i] != nil {
			out[i] = out[i] || waited(FigTTFT, preds[i][FigTTFT])
		}
	}
	return out
}

// QueueFactor is how far above the least load's a TTFT median must be to
// say a queue held it: prefill alone grows with the batch it joins, by
// less than that below the knee.
const QueueFactor = 3

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/report"
	"github.com/benchci/benchci/internal/sim"
	"github.com/benchci/benchci/internal/simfit"
	"github.com/benchci/benchci/internal/untrusted"
)

// simFitOptions are fit's flags.
type simFitOptions struct {
	profile, out              string
	params                    []string
	maxSeqs, maxTokens, folds int
	maxChunk                  int
	unifiedKV                 bool
	network, timeout          time.Duration
	format                    *formatFlag
}

func simFitCmd() *cobra.Command {
	var o simFitOptions
	cmd := &cobra.Command{
		Use:   "fit RESULT...",
		Short: "Fit the simulator to your own measured runs, and say how well it predicts a point it did not see",
		Long:  simFitLong,
		Example: `  benchci sim fit results/chat.json --profile llama-3-8b@h100-sxm --out fitted.json
  benchci sim fit results/*.json --profile llama-3-70b@h100-sxm-tp4-fp8 --max-num-seqs 128
  benchci sim fit results/chat.json --params memory_efficiency,step_overhead,seq_overhead
  benchci sim fit results/ollama-*.json --profile tiny --max-batched-tokens 2048 --max-prefill-chunk 512 --unified-kv --params step_base,decode_per_seq,prefill_per_token,attend_ns_per_pair
  benchci sim fit results/sim-run.json --folds 0 --format json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSimFit(cmd, o, args)
		},
	}
	o.register(cmd)
	return cmd
}

func (o *simFitOptions) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.profile, "profile", "", "the profile to start from: a built-in name, model@gpu[-tpN][-fp8][-kvfp8], or file:PATH (a fitted profile); default: the simulator profile the results were measured on")
	cmd.Flags().StringSliceVar(&o.params, "params", nil, "the parameters to fit (default: memory_efficiency,compute_efficiency,step_overhead for a profile from cards; step_base,decode_per_seq,prefill_per_token for a constant one)")
	cmd.Flags().IntVar(&o.maxSeqs, "max-num-seqs", 0, "the server's max_num_seqs (default: the profile's)")
	cmd.Flags().IntVar(&o.maxTokens, "max-batched-tokens", 0, "the server's max_num_batched_tokens (default: the profile's)")
	cmd.Flags().IntVar(&o.maxChunk, "max-prefill-chunk", 0, "the most prompt tokens one request prefills in a step, below --max-batched-tokens (vLLM's --long-prefill-token-threshold; Ollama's batch size, 512: Ollama gives each request its own batch, so set --max-batched-tokens to 512 x OLLAMA_NUM_PARALLEL)")
	cmd.Flags().BoolVar(&o.unifiedKV, "unified-kv", false, "the server's KV cache is one for all requests, each token attending to every cached one, and finished requests' contexts kept in their slots until a request takes them (llama.cpp, Ollama): with attend_ns_per_pair in --params, other requests' contexts slow a prefill (constant profiles)")
	cmd.Flags().IntVar(&o.folds, "folds", simfit.MaxFolds, "held-out folds: each refits without a share of the conditions (loads and lengths, with their trials) and predicts their points (0: no held-out check)")
	cmd.Flags().StringVar(&o.out, "out", "", "write the fitted profile to this file")
	// No default shown: 0 is a round trip too, so unset is told by Changed.
	cmd.Flags().DurationVar(&o.network, "network", 0, "the client's round trip to the server, which the client's latencies hold and the engine's do not (default: each file's overhead at its least load, else 0)")
	cmd.Flags().DurationVar(&o.timeout, "timeout", 10*time.Minute, fmt.Sprintf("stop the fit and its held-out check after this long (at most %s)", maxFitTimeout))
	o.format = addFormat(cmd)
}

// check refuses flag values beyond their bounds, and marks an unset
// --network (-1: each file's own overhead).
func (o *simFitOptions) check(cmd *cobra.Command) error {
	if !cmd.Flags().Changed("network") {
		o.network = -1
	} else if o.network < 0 {
		return &exitError{exitUsage, errors.New("--network must not be negative")}
	}
	if o.timeout <= 0 || o.timeout > maxFitTimeout {
		return &exitError{exitUsage, fmt.Errorf("--timeout must be more than 0 and at most %s", maxFitTimeout)}
	}
	if o.folds < 0 || o.folds == 1 {
		// One fold holds every point out, and leaves none to fit.
		return &exitError{exitUsage, errors.New("--folds must be 0 (no held-out check) or 2 or more")}
	}
	return nil
}

// runSimFit reads the results, fits, checks the fit on held-out points,
// prints both and writes the fitted profile.
func runSimFit(cmd *cobra.Command, o simFitOptions, args []string) error {
	if err := o.check(cmd); err != nil {
		return err
	}
	in, err := readFitInput(cmd, o, args)
	if err != nil {
		return err
	}
	fitted, val, err := fitAndValidate(cmd.Context(), o, in)
	if err != nil {
		return err
	}
	out := newOutput(cmd, o.format)
	if err := out.print(simFitDoc(fitted, val, in.pts)); err != nil {
		return err
	}
	w := out.say()
	printFitNotes(w, o, in, fitted, val)
	if o.out != "" {
		if err := writeFitted(w, o.out, in, fitted, val, args); err != nil {
			return err
		}
	}
	return out.flush()
}

// fitInput is what a fit replays: the profile it starts from, the
// parameters it moves, the points it matches and those it left out.
type fitInput struct {
	base    sim.Profile
	params  []simfit.Param
	pts     []simfit.Point
	skipped []simfit.Skipped
	// suiteDirs are the directories, found here, of the suites the
	// results were measured with: where a suite would name the profile
	// from.
	suiteDirs []string
}

// readFitInput reads the results files and the points to fit from them;
// above simfit.MaxPoints, an evenly spaced sample, with a note.
func readFitInput(cmd *cobra.Command, o simFitOptions, args []string) (fitInput, error) {
	var in fitInput
	files := make([]*result.File, len(args))
	for i, a := range args {
		f, err := result.Read(a)
		if err != nil {
			return in, &exitError{exitUsage, err}
		}
		files[i] = f
	}
	base, err := fitBase(o.profile, files, o.maxSeqs, o.maxTokens)
	if err != nil {
		return in, &exitError{exitUsage, err}
	}
	if o.maxChunk < 0 || o.maxChunk > maxSimBatchedTokens {
		return in, &exitError{exitUsage, fmt.Errorf("--max-prefill-chunk %d: want 0 to %d", o.maxChunk, maxSimBatchedTokens)}
	}
	if o.maxChunk > 0 {
		if base.NoChunkedPrefill {
			return in, &exitError{exitUsage, fmt.Errorf("--max-prefill-chunk %d: %s prefills a prompt whole (its engine's default, or chunked_prefill off), so no chunk caps it", o.maxChunk, base.Name)}
		}
		base.MaxPrefillChunk = o.maxChunk
	}
	if o.unifiedKV {
		if base.Spec != nil {
			return in, &exitError{exitUsage, fmt.Errorf("--unified-kv is a constant profile's: %s, from cards, prices attention from the model", base.Name)}
		}
		base.UnifiedKV = true
	}
	base = simfit.Seed(base, o.params)
	ps, err := simfit.ParamsFor(base, o.params)
	if err != nil {
		return in, &exitError{exitUsage, fmt.Errorf("--params: %w", err)}
	}
	pts, skipped, err := simfit.Points(files, args, o.network)
	if err != nil {
		return in, &exitError{exitUsage, err}
	}
	if len(pts) == 0 {
		return in, &exitError{exitUsage, fmt.Errorf("no point of %s can be fitted%s", strings.Join(args, ", "), skippedLines(skipped))}
	}
	if kept, cut := simfit.Sample(pts, 0); cut {
		fmt.Fprintf(cmd.ErrOrStderr(), "note: %d points are more than the %d a fit replays: fitting %d of them, evenly spaced in file order (the first, then about every %.3gth)\n",
			len(pts), simfit.MaxPoints, len(kept), float64(len(pts))/float64(len(kept)))
		pts = kept
	}
	// After the sample: the points fitted are the ones that must pin.
	if err := simfit.Pinned(ps, pts); err != nil {
		if len(skipped) > 0 {
			err = fmt.Errorf("%w\nleft out:%s", err, skippedLines(skipped))
		}
		return in, &exitError{exitUsage, err}
	}
	in = fitInput{base: base, params: ps, pts: pts, skipped: skipped}
	if o.out != "" {
		in.suiteDirs = suiteDirs(files)
	}
	return in, nil
}

// fitAndValidate fits, then checks the fit on held-out folds (none with
// --folds 0 or one condition), both within --timeout.
func fitAndValidate(ctx context.Context, o simFitOptions, in fitInput) (*simfit.Fitted, *simfit.Validation, error) {
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	stopped := func(err error) error {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("--timeout %s: %w; fit fewer points or parameters, or --folds 0, or raise --timeout", o.timeout, err)
		}
		return err
	}
	fitted, err := simfit.Fit(ctx, in.base, in.params, in.pts, simfit.Options{})
	if err != nil {
		return nil, nil, stopped(err)
	}
	var val *simfit.Validation
	if o.folds > 0 && simfit.Distinct(in.pts) >= 2 {
		if val, err = simfit.CrossValidate(ctx, in.base, in.params, in.pts, simfit.Options{MaxFolds: o.folds}); err != nil {
			return nil, nil, stopped(err)
		}
	}
	return fitted, val, nil
}

// printFitNotes says below the tables what to make of them: the points
// far off, those left out, and a missing held-out check.
func printFitNotes(w io.Writer, o simFitOptions, in fitInput, fitted *simfit.Fitted, val *simfit.Validation) {
	queued, below := farPoints(fitted, val, in.pts)
	isAre := func(s []string) string { return map[bool]string{true: "is", false: "are"}[len(s) == 1] }
	if len(queued) > 0 {
		fmt.Fprintf(w, "\nnote: %s %s off by more than 25%% where requests queued, measured or predicted (a TTFT %d times or more the least load's): near or past the knee a queue's wait turns on which arrivals came, which no twin predicts; the fit weighs such errors linearly, so they pull no harder than in proportion\n",
			strings.Join(queued, ", "), isAre(queued), simfit.QueueFactor)
	}
	if len(below) > 0 {
		fmt.Fprintf(w, "\nnote: %s %s off by more than 25%% below the knee (no queue measured or predicted: TTFTs within %d times the least load's): not a queue's luck but what the twin does not model of this server; fit the parameters that move these figures (--params), and expect what-ifs near them to miss as much\n",
			strings.Join(below, ", "), isAre(below), simfit.QueueFactor)
	}
	if after := simfit.AfterHigherLoad(in.pts, in.base.MaxNumSeqs); len(after) > 0 && in.base.UnifiedKV {
		fmt.Fprintf(w, "\nnote: %s came after a point of %s results file that kept more requests in flight: the server's one cache (--unified-kv) still held the contexts those requests left in their slots, which the fit's replay, from an empty cache, does not; measure such a point in a run of its own, or sweep the load upward\n",
			strings.Join(after, ", "), map[bool]string{true: "its", false: "their"}[len(after) == 1])
	}
	if len(in.skipped) > 0 {
		fmt.Fprintf(w, "\nleft out:%s\n", skippedLines(in.skipped))
	}
	if val != nil && simfit.Distinct(in.pts) == len(in.params) {
		fmt.Fprintf(w, "\nnote: %d parameters on as many conditions: a held-out fit, without one of them, cannot pin them all, so the held-out error above is that of fits the points left loose; measure one load more\n", len(in.params))
	}
	if val == nil {
		fmt.Fprintf(w, "\nno held-out check (%s): the in-sample error above flatters the twin\n",
			map[bool]string{true: "--folds 0", false: "one load and length, nothing to hold out"}[o.folds == 0])
	}
}

// writeFitted writes the fitted profile to path and says how a suite
// names it.
func writeFitted(w io.Writer, path string, in fitInput, fitted *simfit.Fitted, val *simfit.Validation, args []string) error {
	pf, err := simfit.NewFile(fitted, val, args, len(in.pts))
	if err != nil {
		return err
	}
	if err := simfit.Write(path, pf); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nwrote %s; %s\n", path, namedAs(path, in))
	if iv := pf.Fit.Interval; iv != nil {
		fmt.Fprintf(w, "a run on it prints a %.0f%% interval beside its figures, from the held-out points: a real latency within ×%.2f–%.2f of the twin's, a throughput within ×%.2f–%.2f\n",
			100*iv.Level, iv.Latency[0], iv.Latency[1], iv.Throughput[0], iv.Throughput[1])
	}
	return nil
}

// suiteDirs are the distinct directories of the results' suites that
// exist from here, in file order. A suite's path is recorded as its run
// named it, from where it ran, and comes from a file that may be
// hostile: only a local path (relative, not climbing out with ..) to a
// .jsonnet file is looked at, so that no file can make this command
// probe, or print, a path outside the directory it runs in.
func suiteDirs(files []*result.File) []string {
	var dirs []string
	for _, f := range files {
		p := f.Suite.Path
		if !filepath.IsLocal(p) || !strings.HasSuffix(p, ".jsonnet") || !untrusted.Safe(p) {
			continue
		}
		if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
			continue
		}
		if d := filepath.Dir(p); !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// namedAs says how a suite names the profile written at path: relative
// to the suite's own directory, as the suite loader resolves it, from
// each suite the results came from that is found here.
func namedAs(path string, in fitInput) string {
	name := func(rel string) string {
		what := "b.target.sim('file:" + rel + "')"
		if in.base.Spec != nil {
			what += fmt.Sprintf(", or on other cards b.target.simSpec('%s', '%s', fitted='%s')", in.base.Spec.Model.Name, in.base.Spec.GPU.Name, rel)
		}
		return what
	}
	var from []string
	for _, d := range in.suiteDirs {
		if rel, err := relPath(d, path); err == nil {
			from = append(from, fmt.Sprintf("a suite in %s names it as %s", d, name(filepath.ToSlash(rel))))
		}
	}
	if len(from) == 0 {
		return fmt.Sprintf("a suite names it as %s, with the path from the suite's own directory (%s is from here)", name(filepath.ToSlash(path)), path)
	}
	return strings.Join(from, "; ")
}

// relPath is target's path from the directory dir, both from here.
func relPath(dir, target string) (string, error) {
	a, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	b, err := filepath.Abs(target)
	if err != nil {
		return "", err
	}
	return filepath.Rel(a, b)
}

// simFitLong is fit's help, apart from simFitCmd for its length.
var simFitLong = `fit makes the simulator a planning twin of a server you measured: it
replays every load point of the results files on the simulator's engine, in
virtual time (the same scheduler, KV cache and step costs as 'benchci sim',
on a simulated clock), and moves the profile's parameters until the
replayed points' TTFT, TPOT and end-to-end medians and output throughput
come closest to the measured ones. Each point replays its own workload: its
concurrency (a closed loop) or the rate it was sent at (Poisson arrivals),
and prompt and output lengths drawn from its token histograms (the server's
prompt count, chat template included). Where the results hold the server's
own mean TTFT (vLLM's metrics), it is fitted too. The client's latencies hold
the network's round trip, the twin's do not: it is added to the replay, and
delays a closed-loop client's next request past the step under way (--network;
by default each file's overhead, client minus server TTFT, at its least load).

The parameters depend on the profile the fit starts from (--profile, or the
simulator profile the results were measured on):
  - a profile derived from cards (model@gpu[-tpN][-fp8]): memory_efficiency
    (decode steps: weights and KV cache streamed), compute_efficiency (long
    prefills) and step_overhead (every step's fixed cost); seq_overhead on
    request. These are shares of the card's peaks, so they carry over: the
    file written can price another GPU, tensor-parallel degree or dtype.
  - a constant profile: step_base, decode_per_seq and prefill_per_token.
Name the same engine knobs the server ran (--max-num-seqs,
--max-batched-tokens): they shape the batches, not the fit.

The loss is the mean soft-L1 of log(predicted/measured) over every figure of
every point (squared up to about 25% off, linear beyond, so one point past
the knee cannot drag the others), each figure weighed by how precisely it was
measured (its standard error, at least 2%). The optimizer is Nelder-Mead over
the parameters' log-scales from the base profile, restarted from its answer
with smaller simplexes; it is deterministic. Points of trials benchci
marked invalid (they measured the machine, not the server), that failed
requests, were stopped for saturation or measured fewer than 8 answers are
left out, and listed. A fit needs at least as many points of distinct loads
or lengths as parameters, and refuses fewer: at one load two parameters
trade against each other, and the loss says nothing. A fit of a few points takes seconds; the held-out check one
fit per fold. Above ` + fmt.Sprint(simfit.MaxPoints) + ` points, evenly spaced ones are fitted (the first,
then about every Nth in file order), and a note says how many; the fit and
its check stop at --timeout (10m by default, at most 2h).

The answer leads: the held-out error, the median |predicted - measured| /
measured of each point's figures predicted by a fit that did not see the
point, nor its trials (the points of its load with prompt and output
lengths within 10%, held out together: one such condition out at a time
up to --folds conditions, --folds folds beyond; --folds 0 skips it). It
is the error to expect of a what-if near the points measured; the
in-sample error beside it flatters the twin. A parameter whose fitted
value moves a lot from fold to fold is not pinned by the points: measure
where it matters (long contexts at load tell bandwidth from fixed overhead,
long prompts compute).

--out writes the fitted profile: a suite names it as
b.target.sim('file:fitted.json') (its knobs overridable as for any profile),
or, for a what-if on other cards, as b.target.simSpec('llama-3-8b', 'h200',
tp=2, weights='fp8', max_num_seqs=512, fitted='fitted.json'): the cards
there, the fitted efficiencies. Paths are relative to the suite.`

// maxFitTimeout bounds --timeout: a fit that needs longer has too many
// points or parameters.
const maxFitTimeout = 2 * time.Hour

// fitBase is the profile the fit starts from: the one named, else the
// one the results were measured on, with the server's knobs.
func fitBase(name string, files []*result.File, maxSeqs, maxTokens int) (sim.Profile, error) {
	if name == "" {
		for _, f := range files {
			if f.Target.Sim == nil {
				return sim.Profile{}, errors.New("the results were not measured on the simulator: name the profile to start from, --profile model@gpu[-tpN][-fp8] with the cards of the model and GPUs that served them")
			}
			if name != "" && name != f.Target.Sim.Name {
				return sim.Profile{}, fmt.Errorf("the results were measured on simulator profiles %s and %s: name the one to start from with --profile", untrusted.Text(name), untrusted.Text(f.Target.Sim.Name))
			}
			name = f.Target.Sim.Name
		}
		if strings.HasSuffix(name, "+overrides") {
			return sim.Profile{}, fmt.Errorf("the results were measured on %s, a profile the suite changed: name the one to start from with --profile (and the server's knobs with --max-num-seqs, --max-batched-tokens)", untrusted.Text(name))
		}
	}
	var p sim.Profile
	var err error
	if path, ok := strings.CutPrefix(name, "file:"); ok {
		p, err = simfit.ReadProfile(path)
	} else {
		p, err = sim.Resolve(name)
	}
	if err != nil {
		return p, fmt.Errorf("the profile to start from (--profile): %w", err)
	}
	if maxSeqs < 0 || maxTokens < 0 {
		return p, errors.New("--max-num-seqs and --max-batched-tokens must not be negative")
	}
	if p.Spec != nil && (maxSeqs > 0 || maxTokens > 0) {
		// The knobs change the memory left to the KV cache.
		k := p.Knobs()
		k.MaxNumSeqs, k.MaxBatchedTokens = orDefault(maxSeqs, p.MaxNumSeqs), orDefault(maxTokens, p.MaxBatchedTokens)
		d, err := sim.Derive(*p.Spec, k)
		if err != nil {
			return p, err
		}
		d.Name, d.TokensPerStep, d.ChatTemplateTokens, d.PrefixCaching, d.MaxPrefillChunk = p.Name, p.TokensPerStep, p.ChatTemplateTokens, p.PrefixCaching, p.MaxPrefillChunk
		return d, nil
	}
	p.MaxNumSeqs, p.MaxBatchedTokens = orDefault(maxSeqs, p.MaxNumSeqs), orDefault(maxTokens, p.MaxBatchedTokens)
	return p, nil
}

// orDefault is v, or def where v is unset.
func orDefault(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

func skippedLines(s []simfit.Skipped) string {
	var b strings.Builder
	for _, k := range s {
		fmt.Fprintf(&b, "\n  %s: %s", k.Name, k.Why)
	}
	return b.String()
}

// simFitDoc is the fit's report: the held-out error first (the answer),
// then the fitted parameters, then each point's figures measured and
// predicted, held out where there was a held-out check.
func simFitDoc(f *simfit.Fitted, v *simfit.Validation, pts []simfit.Point) report.Doc {
	inSample := simfit.InSample(pts, f.Predictions)
	head := &report.Table{Title: "how far the fitted twin is off", Columns: []report.Column{
		{Key: "check", Title: "check"}, {Key: "median_abs_error", Title: "median |error|", Right: true},
		{Key: "figures", Title: "figures", Right: true}, {Key: "meaning", Title: "meaning"}}}
	pct := func(e float64) report.Cell { return report.Number(e, fmt.Sprintf("%.1f%%", 100*e)) }
	if v != nil {
		head.Add(report.Text("held out"), pct(v.MedianAbsError), report.Number(float64(len(v.Rows)), fmt.Sprint(len(v.Rows))),
			report.Text(fmt.Sprintf("each point predicted by a fit without it or its trials (%d folds): expect this off a point not measured", v.Folds)))
	}
	head.Add(report.Text("in sample"), pct(medianAbs(inSample)), report.Number(float64(len(inSample)), fmt.Sprint(len(inSample))),
		report.Text("the points the fit saw: flatters the twin"))

	par := &report.Table{Title: fmt.Sprintf("fitted from %s to %d points, %d evaluations, loss %.3g", f.Base.Name, len(pts), f.Evals, f.Loss),
		Columns: []report.Column{{Key: "parameter", Title: "parameter"}, {Key: "base", Title: "base", Right: true},
			{Key: "fitted", Title: "fitted", Right: true}, {Key: "scale", Title: "x base", Right: true}, {Key: "folds", Title: "x base over the folds", Right: true}}}
	for j, q := range f.Params {
		spread := ""
		if v != nil {
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, s := range v.Scales {
				lo, hi = math.Min(lo, s[j]), math.Max(hi, s[j])
			}
			spread = fmt.Sprintf("%.3f to %.3f", lo, hi)
		}
		par.Add(report.Text(q.Name), paramCell(q, q.Get(f.Base)), paramCell(q, f.Values[j]),
			report.Number(f.Scales[j], fmt.Sprintf("%.3f", f.Scales[j])), report.Text(spread))
	}

	rows := inSample
	title := "each point, in sample (no held-out check)"
	if v != nil {
		rows = v.Rows
		title = "each point, held out: predicted by a fit that did not see it, nor its trials"
	}
	tab := &report.Table{Title: title, Columns: []report.Column{{Key: "point", Title: "point"}, {Key: "figure", Title: "figure"},
		{Key: "measured", Title: "measured", Right: true}, {Key: "predicted", Title: "predicted", Right: true}, {Key: "error", Title: "error", Right: true}}}
	for _, r := range rows {
		errCell := report.Number(r.Error, fmt.Sprintf("%+.1f%%", 100*r.Error))
		if math.IsInf(r.Error, 0) {
			errCell = report.Text("no answer")
		}
		tab.Add(report.Text(r.Point), report.Text(figureTitle(r.Figure)), figCell(r.Figure, r.Measured), figCell(r.Figure, r.Predicted), errCell)
	}
	return report.Doc{Tables: []*report.Table{head, par, tab}}
}

func figureTitle(fig string) string {
	if fig == simfit.FigThroughput {
		return fig + " (tok/s)"
	}
	return fig + " (ms)"
}

func figCell(fig string, v float64) report.Cell {
	if fig == simfit.FigThroughput {
		return report.Number(v, fmt.Sprintf("%.1f", v))
	}
	return report.Number(v, fmt.Sprintf("%.2f", v))
}

func paramCell(q simfit.Param, v float64) report.Cell {
	if q.Duration {
		if v >= float64(time.Millisecond) {
			return report.Number(v, fmt.Sprintf("%.3f ms", v/1e6))
		}
		return report.Number(v, fmt.Sprintf("%.2f µs", v/1e3))
	}
	return report.Number(v, fmt.Sprintf("%.3f", v))
}

// farPoints names the points with a figure off by more than 25%, held
// out where there was a held-out check.
func farPoints(f *simfit.Fitted, v *simfit.Validation, pts []simfit.Point) (queued, below []string) {
	rows := simfit.InSample(pts, f.Predictions)
	preds := f.Predictions
	if v != nil {
		rows = v.Rows
		// The twin's TTFT for each point as the held-out fit predicted it.
		at := map[string][]int{}
		for i, p := range pts {
			at[p.Name] = append(at[p.Name], i)
		}
		preds = make([]simfit.Prediction, len(pts))
		for _, r := range rows {
			for _, i := range at[r.Point] {
				if r.Figure == simfit.FigTTFT {
					preds[i] = simfit.Prediction{simfit.FigTTFT: r.Predicted}
				}
			}
		}
	}
	// Points are named by file and label, which two points can share:
	// a name waited if any of its points did.
	waited := map[string]bool{}
	for i, q := range simfit.Queued(pts, preds) {
		waited[pts[i].Name] = waited[pts[i].Name] || q
	}
	for _, r := range rows {
		if math.Abs(r.Error) <= 0.25 || slices.Contains(queued, r.Point) || slices.Contains(below, r.Point) {
			continue
		}
		if waited[r.Point] {
			queued = append(queued, r.Point)
		} else {
			below = append(below, r.Point)
		}
	}
	return queued, below
}

func medianAbs(rows []simfit.HeldOut) float64 {
	xs := make([]float64, len(rows))
	for i, r := range rows {
		xs[i] = math.Abs(r.Error)
	}
	return simfit.Median(xs)
}

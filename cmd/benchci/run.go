package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchci/benchci/framework/compare"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/suitefile"
	"github.com/benchci/benchci/internal/chart"
	"github.com/benchci/benchci/internal/errjoin"
	"github.com/benchci/benchci/internal/layout"
	"github.com/benchci/benchci/internal/loadgen"
	"github.com/benchci/benchci/internal/redact"
	"github.com/benchci/benchci/internal/report"
	"github.com/benchci/benchci/internal/requestlog"
	"github.com/benchci/benchci/internal/runner"
	"github.com/benchci/benchci/internal/safefile"
	"github.com/benchci/benchci/internal/variants"
)

type runOptions struct {
	suites     suiteFlags
	resultsDir string
	baselines  string
	progress   bool
	verbose    bool
	requests   bool
	gaps       bool
	timeout    time.Duration
	// reruns bounds how often an invalid trial is measured again.
	reruns int
	// shard, startAt and pointGap split one run over machines (run only).
	shard    loadgen.Shard
	startAt  time.Time
	pointGap time.Duration
	// out prints the reports in the command's --format (run, ci); nil: text.
	out *output
	// virtual replays the points in simulated time (run --virtual).
	virtual bool
	// salt is drawn once per command for suites whose prompts take a fresh
	// salt each run: every run of the command (variants, an A/B pair) then
	// sends the same text, as it would unsalted.
	salt string
}

// shardFlags are run's flags for splitting a run over machines.
type shardFlags struct{ shard, startAt string }

func (s *shardFlags) register(cmd *cobra.Command, o *runOptions) {
	cmd.Flags().StringVar(&s.shard, "shard", "", "run only shard I of N of every point (I/N, or N with I from $JOB_COMPLETION_INDEX); join the shards with benchci merge")
	cmd.Flags().StringVar(&s.startAt, "start-at", "", "with --shard, start the first point at this RFC 3339 time on every shard")
	cmd.Flags().DurationVar(&o.pointGap, "point-gap", runner.DefaultPointGap, "with --start-at, time left after each point's duration for its last requests before the next point")
}

// parse sets o's shard and start time from the flags.
func (s *shardFlags) parse(o *runOptions) error {
	if s.shard != "" {
		sh, err := parseShard(s.shard, os.Getenv("JOB_COMPLETION_INDEX"))
		if err != nil {
			return err
		}
		o.shard = sh
	}
	if s.startAt != "" {
		if o.shard.Count < 2 {
			return errors.New("--start-at aligns shards: give --shard too")
		}
		t, err := time.Parse(time.RFC3339, s.startAt)
		if err != nil {
			return fmt.Errorf("--start-at: want an RFC 3339 time such as 2026-12-03T10:00:00Z: %w", err)
		}
		o.startAt = t
	}
	return nil
}

// parseShard reads "I/N", or "N" with I from index (Kubernetes Indexed
// Jobs set JOB_COMPLETION_INDEX in every pod).
func parseShard(s, index string) (loadgen.Shard, error) {
	is, ns, found := strings.Cut(s, "/")
	if !found {
		is, ns = index, s
		if index == "" {
			return loadgen.Shard{}, fmt.Errorf("--shard %s: give I/N, or set JOB_COMPLETION_INDEX", s)
		}
	}
	i, err1 := strconv.Atoi(is)
	n, err2 := strconv.Atoi(ns)
	if err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return loadgen.Shard{}, fmt.Errorf("--shard %s (index %q): want I/N with 0 <= I < N", s, is)
	}
	return loadgen.Shard{Index: i, Count: n}, nil
}

// fileName is the name a run's files take under the results directory.
func fileName(suite string, sh loadgen.Shard) string { return layout.Name(suite, sh.Index, sh.Count) }

// maxPointGap bounds --point-gap: a gap is for a point's last answers,
// which no suite lets run for longer.
const maxPointGap = time.Hour

// check refuses flag values beyond their bounds, before anything runs.
func (o *runOptions) check() error {
	switch {
	case o.reruns > runner.MaxReruns:
		return fmt.Errorf("--reruns %d: at most %d (a machine that stalls that many trials in a row will not settle; the point is then inconclusive)", o.reruns, runner.MaxReruns)
	case o.pointGap < 0 || o.pointGap > maxPointGap:
		return fmt.Errorf("--point-gap %v: want 0 to %v", o.pointGap, maxPointGap)
	case o.timeout < 0:
		return fmt.Errorf("--timeout %v: want a duration of 0 (no limit) or more", o.timeout)
	}
	return nil
}

func (o *runOptions) register(cmd *cobra.Command) {
	o.suites.register(cmd)
	cmd.Flags().StringVar(&o.resultsDir, "results", layout.DefaultResults, "directory for results files")
	cmd.Flags().StringVar(&o.baselines, "baselines", layout.DefaultBaselines, "directory of baseline files")
	cmd.Flags().BoolVar(&o.progress, "progress", true, "show progress on stderr")
	cmd.Flags().BoolVarP(&o.verbose, "verbose", "v", false, "after the summary, list every compared figure")
	cmd.Flags().BoolVar(&o.requests, "requests", false, "write one JSON line per request to <results>/<suite>.requests.jsonl")
	cmd.Flags().BoolVar(&o.gaps, "request-gaps", false, "with --requests, add every chunk gap to each line")
	cmd.Flags().DurationVar(&o.timeout, "timeout", 0, "stop after this long overall, writing what was measured as incomplete (0: no limit)")
	cmd.Flags().IntVar(&o.reruns, "reruns", runner.DefaultReruns, fmt.Sprintf("measure a trial again, up to this many times (at most %d, and within the point's deadline), when it measured this machine rather than the server (a stall, a client behind its schedule); one still invalid makes its point inconclusive", runner.MaxReruns))
}

func runCmd() *cobra.Command {
	var o runOptions
	var sf shardFlags
	var format *formatFlag
	cmd := &cobra.Command{
		Use:   "run SUITE...",
		Short: "Run suites, write results/<suite>.json and print a table",
		Long: `run evaluates every suite first (so a typo in the last one fails before the
first one runs), then runs them in order: it starts the simulator or checks
the server, runs each sweep point with a progress line, prints a table,
writes results/<suite>.json, checks the SLOs, and compares with
baselines/<suite>.json when there is one.

Ctrl-C stops the run; what was measured is still written, marked incomplete.

With --shard I/N the run sends only its part of every point: arrival k of
each point's timeline (request k, closed loop) when k mod N is I, numbered as
on one machine, to results/<suite>.shard-I-of-N.json. N machines run the N
shards, aligned by --start-at; benchci merge joins them into the result one
machine would have measured, and that result is what is gated.

With --virtual the points are not measured: each is replayed on the embedded
simulator's engine in virtual time (a simulated clock), with the suite's own
requests, arrivals, sessions and windows, in seconds rather than minutes. It
is for planning a suite (which rates, how long, what capacity to expect):
the results are marked "virtual time (simulated clock)", never compared with
measured ones, and its client is perfect (no send lag, no HTTP cost, no
machine noise). Only sim targets can be virtual; a suite using what the
replay does not model (simulator faults, the fault proxy, telemetry,
retries, structured answers, embeddings, shards) is refused with the reason.`,
		Example: `  # Run a suite, write results/quickstart.json and print its table.
  benchci run suites/quickstart.jsonnet

  # Set a top-level argument of the suite; list every compared figure.
  benchci run -v --tla-str step_base=19.8ms suites/gate.jsonnet

  # Shard 0 of 4 of every point, the four machines starting together.
  benchci run --shard 0/4 --start-at 2026-12-03T10:00:00Z suites/quickstart.jsonnet

  # Plan a capacity search in seconds: every point in virtual time.
  benchci run --virtual suites/engine-shootout.jsonnet`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.out = newOutput(cmd, format)
			if err := sf.parse(&o); err != nil {
				return &exitError{exitUsage, err}
			}
			if err := o.check(); err != nil {
				return &exitError{exitUsage, err}
			}
			return runAndGate(cmd, o, args)
		},
	}
	o.register(cmd)
	sf.register(cmd, &o)
	cmd.Flags().BoolVar(&o.virtual, "virtual", false, "replay every point on the embedded simulator in virtual time (a simulated clock) instead of measuring it: seconds for minutes of load, for planning; sim targets only, results marked virtual and never compared with measured ones")
	format = addFormat(cmd)
	return cmd
}

// runAndGate runs the suites, compares each result with its baseline and
// returns the gate's exit code. A shard is not gated alone: its merge is.
func runAndGate(cmd *cobra.Command, o runOptions, paths []string) error {
	results, err := runAll(cmd, o, paths)
	if err != nil {
		_ = o.out.flush() // what was measured still prints
		return err
	}
	var reports []*compare.Report
	for _, f := range results {
		if sh := f.Shard; sh != nil {
			fmt.Fprintf(o.out.say(), "shard %d of %d of %s: not gated alone; gate the merged result (benchci merge %s -o %s)\n",
				sh.Index, sh.Count, f.Suite.Name, layout.Results(o.resultsDir).ShardPattern(f.Suite.Name, sh.Count), layout.Results(o.resultsDir).Result(f.Suite.Name))
			continue
		}
		r, err := o.compareRun(f)
		if err != nil {
			return err
		}
		if err := printComparison(o.out, r, o.verbose); err != nil {
			return err
		}
		reports = append(reports, r)
	}
	if err := o.out.flush(); err != nil {
		return err
	}
	return gateExit(reports)
}

// compareRun compares f with its baseline: a virtual run only with a
// virtual baseline, a simulated one only with a simulated baseline.
func (o runOptions) compareRun(f *result.File) (*compare.Report, error) {
	return compareRunByKind(o.baselines, f, o.out.say())
}

// runAll loads every suite, then runs each, writing its results and table.
// It returns the results of the suites that ran; nil with an error when the
// suites did not load. A suite that fails part-way still has its partial
// results written, and the error is returned with what ran.
func runAll(cmd *cobra.Command, o runOptions, paths []string) ([]*result.File, error) {
	o.salt = runSalt(o)
	loaded, err := loadSuites(cmd, o, paths)
	if err != nil {
		return nil, err
	}
	// A results directory that cannot be written fails now, not after an
	// hour of measuring.
	if err := probeDir(o.resultsDir); err != nil {
		return nil, &exitError{exitUsage, err}
	}
	ctx := cmd.Context()
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, o.timeout, fmt.Errorf("--timeout %v reached", o.timeout))
		defer cancel()
	}
	stderr := cmd.ErrOrStderr()
	for _, l := range loaded {
		// Said before the hour of measuring, not after a gate that could
		// not have failed.
		for _, w := range powerWarnings(l.Suite) {
			fmt.Fprintf(stderr, "warning: %s: %s\n", l.Suite.Name, w)
		}
	}
	return runLoaded(ctx, cmd, o, loaded)
}

// runSalt is the salt the command's runs share: the one given, else one
// aligned shards agree on, else a fresh one.
func runSalt(o runOptions) string {
	switch {
	case o.salt != "":
		return o.salt
	case o.shard.Count > 1 && !o.startAt.IsZero():
		// Aligned shards run on other machines: their one start time is
		// what they share, so they salt alike and send one run's text.
		return "shards starting " + o.startAt.UTC().Format(time.RFC3339Nano)
	}
	return runner.DrawSalt()
}

// loadSuites evaluates every suite before any runs, so that a typo in the
// last fails before the first is measured; with --virtual, a suite the
// replay cannot run is refused too.
func loadSuites(cmd *cobra.Command, o runOptions, paths []string) ([]*suitefile.File, error) {
	opts, err := o.suites.options()
	if err != nil {
		return nil, err
	}
	var loaded []*suitefile.File
	var loadErrs []error
	for _, p := range paths {
		l, err := loadSuite(cmd.Context(), p, opts)
		if err != nil {
			loadErrs = append(loadErrs, err)
			continue
		}
		loaded = append(loaded, l)
	}
	if len(loadErrs) > 0 {
		return nil, &exitError{exitUsage, errjoin.Join(loadErrs...)}
	}
	if o.virtual {
		if err := virtualRefusals(o, loaded); err != nil {
			return nil, err
		}
	}
	return loaded, nil
}

// virtualRefusals refuses, before anything runs and naming the file, the
// suites (or variants) that --virtual cannot replay.
func virtualRefusals(o runOptions, loaded []*suitefile.File) error {
	var errs []error
	for _, l := range loaded {
		for _, v := range l.Variants() {
			if err := runner.VirtualRefusal(v.Suite, runner.Options{Shard: o.shard, StartAt: o.startAt}); err != nil {
				name := l.Path
				if v.Name != "" {
					name += " (variant " + v.Name + ")"
				}
				errs = append(errs, fmt.Errorf("%s: %w", name, err))
			}
		}
	}
	if len(errs) > 0 {
		return &exitError{exitUsage, errjoin.Join(errs...)}
	}
	return nil
}

// runLoaded runs the loaded suites in turn, a suite with variants as each
// of its variants, and returns the results of those that ran.
func runLoaded(ctx context.Context, cmd *cobra.Command, o runOptions, loaded []*suitefile.File) ([]*result.File, error) {
	var results []*result.File
	for _, l := range loaded {
		if err := os.MkdirAll(o.resultsDir, 0o755); err != nil {
			return results, err
		}
		if len(l.Suite.Variants) > 0 {
			if o.shard.Count > 1 {
				return results, &exitError{exitUsage, fmt.Errorf("suite %s has variants: shard a suite with one target", l.Suite.Name)}
			}
			fs, err := runVariants(ctx, cmd, o, l)
			results = append(results, fs...)
			if err != nil {
				return results, err
			}
			continue
		}
		f, err := runOne(ctx, cmd, o, l)
		if f != nil {
			results = append(results, f)
		}
		if err != nil {
			return results, err
		}
	}
	return results, nil
}

// runOne runs one suite and writes its results, its table first.
func runOne(ctx context.Context, cmd *cobra.Command, o runOptions, l *suitefile.File) (*result.File, error) {
	ropts, closer, err := runOptionsFor(cmd, o, fileName(l.Suite.Name, o.shard))
	if err != nil {
		return nil, err
	}
	ropts.Shard, ropts.StartAt, ropts.PointGap = o.shard, o.startAt, o.pointGap
	limitMemory()
	f, runErr := runner.Run(ctx, runInput(l), ropts)
	if err := closer(); err != nil {
		runErr = errjoin.Join(runErr, fmt.Errorf("requests file: %w", err))
	}
	return f, writeRun(cmd, o, f, runErr)
}

// runOptionsFor makes the runner's options for a run named name
// ("<suite>" or "<suite>/<variant>"): progress, the server log and the
// per-request file, under the results directory. closer closes the latter.
func runOptionsFor(cmd *cobra.Command, o runOptions, name string) (runner.Options, func() error, error) {
	ropts := runner.Options{Version: Version, Reruns: o.reruns, Salt: o.salt, Virtual: o.virtual}
	if o.reruns <= 0 {
		ropts.Reruns = -1 // none
	}
	if o.progress {
		ropts.Observer = newProgress(cmd.ErrOrStderr(), name)
	}
	// Everything under the results directory is written through no link.
	if err := mkdirIn(o.resultsDir, filepath.Dir(filepath.Join(o.resultsDir, name))); err != nil {
		return ropts, nil, err
	}
	ropts.ServerLog = layout.Results(o.resultsDir).ServerLog(name)
	if err := noLinkIn(o.resultsDir, ropts.ServerLog); err != nil {
		return ropts, nil, err
	}
	os.Remove(ropts.ServerLog) // a fresh log per run; relaunches append to it
	if !o.requests {
		return ropts, func() error { return nil }, nil
	}
	rl, closer, err := openRequests(o.resultsDir, layout.Results(o.resultsDir).Requests(name), o.gaps)
	if err != nil {
		return ropts, nil, &exitError{exitUsage, err}
	}
	ropts.Requests = rl
	return ropts, closer, nil
}

// writeRun prints a run's table and writes its results file; runErr is
// the run's own error, returned (as a usage error) after the write.
func writeRun(cmd *cobra.Command, o runOptions, f *result.File, runErr error) error {
	pr := o.output(cmd)
	stdout := pr.say()
	var sh loadgen.Shard
	if f.Shard != nil {
		sh = loadgen.Shard{Index: f.Shard.Index, Count: f.Shard.Count}
	}
	name := fileName(f.Suite.Name, sh)
	out := layout.Results(o.resultsDir).Result(name)
	if _, err := os.Stat(out); err == nil && len(f.Points) == 0 && runErr != nil {
		// Nothing was measured (the target did not start): the record of
		// the failure would only overwrite the last run's results, which
		// may be the only copy of minutes of measurement. Where there are
		// none, it is written: a variants comparison reads it.
		fmt.Fprintf(cmd.ErrOrStderr(), "benchci: nothing was measured; %s is left as the last run wrote it\n", out)
		return &exitError{exitUsage, runErr}
	}
	// What was measured is printed first, so a failed write (a full
	// disk) still leaves the figures in the log.
	if err := pr.print(report.Points(f)); err != nil {
		return err
	}
	if err := result.WriteIn(o.resultsDir, out, f); err != nil {
		return &exitError{exitUsage, errjoin.Join(runErr, err)}
	}
	if o.requests {
		fmt.Fprintf(stdout, "requests: %s\n", layout.Results(o.resultsDir).Requests(name))
	}
	if dir, err := writeSlices(o.resultsDir, layout.Results(o.resultsDir).Slices(name), f); err != nil {
		// Pictures are derived from the results just written: a failure
		// to draw them loses nothing.
		fmt.Fprintf(cmd.ErrOrStderr(), "benchci: warning: %v\n", err)
	} else if dir != "" {
		fmt.Fprintf(stdout, "over time: %s/\n", dir)
	}
	fmt.Fprintf(stdout, "results: %s\n\n", out)
	if runErr != nil {
		return &exitError{exitUsage, runErr}
	}
	return nil
}

// runAndWrite runs variants in order and writes each one's results (and
// requests file): their files, each one's run error, and the errors of
// writing them. inTurn launches their servers in turn (one address).
func runAndWrite(ctx context.Context, cmd *cobra.Command, o runOptions, vs []suitefile.Variant, order string, inTurn bool) ([]*result.File, []error, []error) {
	closers := make([]func() error, len(vs))
	optErrs := make([]error, len(vs))
	limitMemory()
	files, runErrs := runner.RunVariants(ctx, runInputs(vs), order, Version, func(i int) runner.Options {
		ropts, closer, err := runOptionsFor(cmd, o, vs[i].Suite.RunName())
		closers[i], optErrs[i] = closer, err
		ropts.StopBetweenTurns = inTurn
		return ropts
	})
	var errs []error
	for i, f := range files {
		if closers[i] != nil {
			if err := closers[i](); err != nil {
				runErrs[i] = errjoin.Join(runErrs[i], fmt.Errorf("requests file: %w", err))
			}
		}
		if err := errjoin.Join(optErrs[i], writeRun(cmd, o, f, runErrs[i])); err != nil {
			errs = append(errs, err)
		}
	}
	return files, runErrs, errs
}

// runVariants runs a suite's variants, writes each one's results as
// results/<suite>/<variant>.json, then compares them: the table on
// stdout, results/<suite>.variants.json and .md, and SVG charts in
// results/<suite>/. A failed variant is named, and the others' figures
// are kept and compared.
func runVariants(ctx context.Context, cmd *cobra.Command, o runOptions, l *suitefile.File) ([]*result.File, error) {
	vs := l.Variants()
	files, runErrs, errs := runAndWrite(ctx, cmd, o, vs, l.Suite.Order, false)
	if err := writeVariants(cmd, o, l.Suite.Name, files); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		var failed []string
		for i, e := range runErrs {
			if e != nil {
				failed = append(failed, vs[i].Name)
			}
		}
		return files, &exitError{exitUsage, fmt.Errorf("suite %s: variants %s failed or did not finish; the others' results are written and compared: %w",
			l.Suite.Name, strings.Join(failed, ", "), errjoin.Join(errs...))}
	}
	return files, nil
}

// writeSlices draws every point's figures over time into dir (inside
// root, the results directory), one SVG per point (and trial), and
// returns dir, or "" when no point has slices.
func writeSlices(root, dir string, f *result.File) (string, error) {
	wrote := false
	for _, p := range f.Points {
		if p.Slices == nil || len(p.Slices.Slices) == 0 {
			continue
		}
		if !wrote {
			if err := mkdirIn(root, dir); err != nil {
				return "", err
			}
			wrote = true
		}
		name := p.Label
		if p.Trial > 1 {
			name += fmt.Sprintf(".trial%d", p.Trial)
		}
		title := fmt.Sprintf("%s %s over time", f.Suite.Name, name)
		if err := chart.Slices(filepath.Join(dir, name+".svg"), title, p.Slices); err != nil {
			return "", err
		}
	}
	if !wrote {
		return "", nil
	}
	return dir, nil
}

// writeVariants compares a suite's variants and writes the comparison.
func writeVariants(cmd *cobra.Command, o runOptions, suiteName string, files []*result.File) error {
	var entries []variants.Entry
	for _, f := range files {
		entries = append(entries, variants.Entry{Name: f.Suite.Variant, File: f, Path: layout.Results(o.resultsDir).Result(f.Suite.Name)})
	}
	r, err := variants.Compare(entries)
	if err != nil {
		return err
	}
	return writeVariantsReport(o.output(cmd), r, layout.Results(o.resultsDir), suiteName)
}

// writeVariantsReport prints the comparison and writes it next to the
// results: <suite>.variants.json, <suite>.variants.md and SVG charts in
// the directory <suite>/.
func writeVariantsReport(pr *output, r *variants.Report, dir layout.Results, suiteName string) error {
	stdout := pr.say()
	jsonPath, mdPath := dir.Variants(suiteName)
	base := dir.VariantsCharts(suiteName)
	if err := pr.print(report.Variants(r)); err != nil {
		return err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	var md bytes.Buffer
	if err := report.VariantsMarkdown(&md, r); err != nil {
		return err
	}
	if err := result.WriteFileAtomicIn(string(dir), jsonPath, redact.Bytes(append(data, '\n'))); err != nil {
		return err
	}
	if err := result.WriteFileAtomicIn(string(dir), mdPath, redact.Bytes(md.Bytes())); err != nil {
		return err
	}
	if err := mkdirIn(string(dir), base); err != nil {
		return err
	}
	charts, err := chart.Variants(base, r)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "comparison: %s, %s\n", jsonPath, mdPath)
	if len(charts) > 0 {
		fmt.Fprintf(stdout, "charts: %s\n", strings.Join(charts, ", "))
	}
	fmt.Fprintln(stdout)
	return nil
}

// openRequests creates the per-request file at path, inside root (the
// results directory) and through no link. Error texts quote servers, so
// what is written is masked like every other output.
func openRequests(root, path string, gaps bool) (*requestlog.Writer, func() error, error) {
	rel, err := safefile.In(root, path)
	if err != nil {
		return nil, nil, err
	}
	d, err := safefile.Open(root)
	if err != nil {
		return nil, nil, err
	}
	defer d.Close()
	file, err := d.Create(rel, os.O_TRUNC)
	if err != nil {
		return nil, nil, err
	}
	rl := requestlog.New(redact.NewWriter(file), gaps)
	return rl, func() error { return errjoin.Join(rl.Close(), file.Close()) }, nil
}

// printComparison writes the summary that leads the PR comment too and,
// verbose, every compared figure after it.
func printComparison(out *output, r *compare.Report, verbose bool) error {
	return out.print(report.Gate(r, verbose))
}

// mkdirIn makes dir, a directory inside root (joined from it), and those
// above it, following no link below root: one there is refused by its
// path.
func mkdirIn(root, dir string) error {
	return inRoot(root, dir, (*safefile.Dir).MkdirAll)
}

// noLinkIn refuses path, inside root, when it or a directory on the way
// from root is a symbolic link.
func noLinkIn(root, path string) error {
	return inRoot(root, path, (*safefile.Dir).Check)
}

// inRoot calls do with root opened and path made relative to it.
func inRoot(root, path string, do func(*safefile.Dir, string) error) error {
	rel, err := safefile.In(root, path)
	if err != nil {
		return err
	}
	d, err := safefile.Open(root)
	if err != nil {
		return err
	}
	defer d.Close()
	return do(d, rel)
}

// probeDir makes dir if needed and checks a file can be written in it.
func probeDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("results directory: %w", err)
	}
	f, err := os.CreateTemp(dir, ".benchci-probe-*")
	if err != nil {
		return fmt.Errorf("results directory %s cannot be written: %w", dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

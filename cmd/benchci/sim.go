package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchci/benchci/internal/report"
	"github.com/benchci/benchci/internal/sim"
)

// simServeOptions are sim's flags: the address and the profile's knobs.
type simServeOptions struct {
	addr, profile          string
	maxSeqs, maxTokens     int
	stepBase, decodePerSeq time.Duration
}

func simCmd() *cobra.Command {
	var o simServeOptions
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Serve the simulator over the OpenAI API for other clients",
		Long: `sim serves the embedded continuous-batching simulator on an OpenAI-compatible
API (/v1/completions, /v1/chat/completions, /v1/models, /health) until
interrupted, so other benchmark clients can be compared against benchci on
the same known server.`,
		Example: `  benchci sim --addr 127.0.0.1:8000
  benchci sim --profile llama-3-70b@h100-sxm-tp4-fp8 --max-num-seqs 128`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.check(cmd); err != nil {
				return err
			}
			p, err := o.resolve()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			u, err := sim.New(p).Listen(ctx, o.addr)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "serving simulator profile %s (model %q) at %s; Ctrl-C stops\n", p.Name, p.Model, u)
			<-ctx.Done()
			return nil
		},
	}
	cmd.Flags().StringVar(&o.addr, "addr", "127.0.0.1:8000", "address to listen on (port 0: any free port)")
	cmd.Flags().IntVar(&o.maxSeqs, "max-num-seqs", 0, "override the profile's max_num_seqs")
	cmd.Flags().IntVar(&o.maxTokens, "max-batched-tokens", 0, "override the profile's max_batched_tokens")
	cmd.Flags().DurationVar(&o.stepBase, "step-base", 0, "override the profile's step_base")
	// No default shown: 0 is an override too, so unset is told by Changed.
	cmd.Flags().DurationVar(&o.decodePerSeq, "decode-per-seq", 0, "override the profile's decode_per_seq (0s included)")
	cmd.Flags().StringVar(&o.profile, "profile", "llama3-8b-h100", "simulator profile: "+strings.Join(sim.ProfileNames(), ", ")+
		", or model@gpu[-tpN][-fp8][-kvfp8] from the cards (models: "+strings.Join(sim.ModelNames(), ", ")+"; GPUs: "+strings.Join(sim.GPUNames(), ", ")+")")
	cmd.AddCommand(simCheckCmd(), simFitCmd())
	return cmd
}

// check refuses flag values beyond their bounds, and marks an unset
// --decode-per-seq (-1: the profile's own).
func (o *simServeOptions) check(cmd *cobra.Command) error {
	if o.decodePerSeq < 0 {
		return &exitError{exitUsage, fmt.Errorf("--decode-per-seq %v: want 0 to 1s", o.decodePerSeq)}
	}
	if !cmd.Flags().Changed("decode-per-seq") {
		o.decodePerSeq = -1 // the profile's own
	}
	for _, err := range []error{
		inRange("--max-num-seqs", o.maxSeqs, 0, maxSimNumSeqs),
		inRange("--max-batched-tokens", o.maxTokens, 0, maxSimBatchedTokens),
		inRange("--step-base", o.stepBase, 0, 10*time.Second),
		inRange("--decode-per-seq", max(o.decodePerSeq, 0), 0, time.Second),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

// resolve is --profile with the knobs the flags override.
func (o *simServeOptions) resolve() (sim.Profile, error) {
	p, err := sim.Resolve(o.profile)
	if err != nil {
		return p, &exitError{exitUsage, fmt.Errorf("parsing --profile: %w", err)}
	}
	if o.maxSeqs > 0 {
		p.MaxNumSeqs = o.maxSeqs
	}
	if o.maxTokens > 0 {
		p.MaxBatchedTokens = o.maxTokens
	}
	if p.Spec != nil && (o.stepBase > 0 || o.decodePerSeq >= 0) {
		return p, &exitError{exitUsage, fmt.Errorf("--step-base and --decode-per-seq set a constant profile's costs; %s derives its own from the cards", p.Name)}
	}
	if p.Spec != nil && (o.maxSeqs > 0 || o.maxTokens > 0) {
		// The knobs change the memory set aside for activations.
		if p, err = sim.Derive(*p.Spec, sim.Knobs{MaxNumSeqs: o.maxSeqs, MaxBatchedTokens: o.maxTokens}); err != nil {
			return p, &exitError{exitUsage, err}
		}
	}
	if o.stepBase > 0 {
		p.StepBase = o.stepBase
	}
	if o.decodePerSeq >= 0 {
		p.DecodePerSeq = o.decodePerSeq
	}
	return p, nil
}

func simCheckCmd() *cobra.Command {
	var markdown bool
	var format *formatFlag
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Put the simulator's figures next to published serving measurements and measured kernels",
		Long: `check runs each published measurement's workload (sim.References: vLLM's
own latency benchmarks, NVIDIA NIM's concurrency sweeps) on the profile
derived from the same model, GPU, tensor-parallel degree and dtypes, in
virtual time, and prints the published and simulated figures side by side.
It fails when a figure below the knee misses by more than 25% (throughput)
or 30% (TTFT, TPOT, end-to-end latency).

It leads with the same rows held out by source: the constants the rows set
(each engine's step overhead) fitted again without one source at a time, and
that source's rows predicted with them (about 30 seconds on two cores). A
source whose figures miss without it is named with what it alone taught.
Rows that differ in their tensor-parallel size alone follow, held out:
each figure as a multiple of its value at the smallest TP, published and
simulated (decode's speed-up, TTFT's, and throughput's under full load).
Then open loops at moderate rates (Poisson arrivals, 2 to 16 requests/s),
held out by source and summed up by figure: shown, not gated.

A second table puts the roofline's terms next to kernels timed on a real
GPU (sim/measured: decode matrix products, the KV cache's read bandwidth,
long prefills, timed by measured/steps.py); it fails beyond 25%. A third
puts speculative decoding's speed-ups and disaggregation's latency ratios
next to published ones; each fails beyond its stated tolerance.
A first table sums up the published figures' errors under the step-cost
model of this build (roofline 3) and the first one (roofline 1),
apart for the rows added with roofline 2, whose structure was set before
they were run.
Rows whose miss is understood but not modelled say why under the table
and do not fail the check.
--markdown prints only the tables, as docs/simulator.md carries them. With --format
markdown or json only the tables are on stdout, the verdict's line on stderr.`,
		Example: `  benchci sim check
  benchci sim check --markdown`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSimCheck(cmd, format.name, markdown)
		},
	}
	cmd.Flags().BoolVar(&markdown, "markdown", false, "print only the tables, as docs/simulator.md carries them")
	format = addFormat(cmd)
	return cmd
}

// runSimCheck runs the checks, prints their tables, and fails when a
// gated figure misses beyond its tolerance (--markdown: only the tables).
func runSimCheck(cmd *cobra.Command, format string, markdown bool) error {
	c, err := checkSim()
	if err != nil {
		return err
	}
	out, err := c.print(cmd, format)
	if err != nil {
		return err
	}
	if markdown {
		return nil
	}
	return c.verdict(out)
}

// simChecks are the simulator's figures next to the published and
// measured ones: the published measurements under this build's step-cost
// model and the one before, the kernels, and the published ratios.
type simChecks struct {
	cv         sim.CrossValidation
	cs, before []sim.Checked
	// open are the open-loop rows, held out by source (shown, not gated).
	open []sim.Checked
	ks   []sim.KernelCheck
	rs   []sim.RatioReference
}

// checkedReferences are the published measurements sim check runs. A
// test of the command's output formats narrows them: the sim package's
// own tests run them all, and all of them take a minute under the race
// detector.
var checkedReferences = sim.References

// checkedOpenLoop are the open-loop rows sim check shows; a test narrows
// them as checkedReferences.
var checkedOpenLoop = sim.OpenLoopReferences

// checkSim runs every check.
func checkSim() (simChecks, error) {
	var c simChecks
	var err error
	if c.cv, err = sim.CrossValidate(checkedReferences); err != nil {
		return c, err
	}
	if c.cs, err = sim.Check(checkedReferences); err != nil {
		return c, err
	}
	if c.open, err = sim.CheckOpenLoop(c.cv, checkedOpenLoop); err != nil {
		return c, err
	}
	if c.before, err = sim.CheckVersion(checkedReferences, 1); err != nil {
		return c, err
	}
	if c.ks, err = sim.KernelChecks(); err != nil {
		return c, err
	}
	c.rs, err = sim.RatioReferences()
	return c, err
}

// print prints the tables on stdout, and returns where the verdict's line
// goes: stdout in text, stderr beside a markdown or json document.
func (c simChecks) print(cmd *cobra.Command, format string) (io.Writer, error) {
	out := cmd.OutOrStdout()
	if format == "text" {
		// Held out by source first: what a figure of a card no row saw
		// can be trusted to, before the rows that set the constants.
		fmt.Fprint(out, c.cv.Markdown(), "\n")
		if n := intervalNote(c.cs); n != "" {
			fmt.Fprint(out, n, "\n\n")
		}
		fmt.Fprint(out, scalingMarkdown(c.cv))
		fmt.Fprint(out, openLoopMarkdown(c.open))
		fmt.Fprint(out, sim.SummaryMarkdown(c.before, c.cs))
		fmt.Fprint(out, "\n", sim.Markdown(c.cs))
		fmt.Fprint(out, "\n", sim.KernelMarkdown(c.ks))
		fmt.Fprint(out, "\n", sim.RatioMarkdown(c.rs))
		return out, nil
	}
	if err := report.Write(out, format, simCheckDoc(c)); err != nil {
		return nil, err
	}
	return cmd.ErrOrStderr(), nil
}

// intervalNote says the interval these rows calibrate for a simulated
// figure, which runs on profiles derived from cards print ("" when the
// rows are too few).
func intervalNote(cs []sim.Checked) string {
	iv, err := sim.CalibrateBySource(cs, 0.8)
	if err != nil {
		return ""
	}
	return "Interval of a simulated figure, held out by source: " + iv.String() + ". A run on a profile derived from the cards prints it beside its figures."
}

// verdict fails on the first kind of figure that misses beyond its
// tolerance, else says to out how many were within and how many shown.
func (c simChecks) verdict(out io.Writer) error {
	kMissed, kGated := 0, 0
	for _, k := range c.ks {
		if k.Gated {
			kGated++
		}
		if !k.Within() {
			kMissed++
		}
	}
	missed, gated, known := 0, 0, 0
	for _, ch := range c.cs {
		switch {
		case ch.PastKnee:
		case ch.KnownMiss != "":
			known++
		default:
			gated++
		}
		if !ch.Within() {
			missed++
		}
	}
	rMissed, rGated := 0, 0
	for _, r := range c.rs {
		if r.Tolerance > 0 {
			rGated++
		}
		if !r.Within() {
			rMissed++
		}
	}
	if missed > 0 {
		return &exitError{exitFailed, fmt.Errorf("%d of %d measurements below the knee miss beyond the tolerance", missed, gated)}
	}
	if kMissed > 0 {
		return &exitError{exitFailed, fmt.Errorf("%d of %d kernel figures miss beyond ±%.0f%%", kMissed, kGated, 100*sim.KernelTolerance)}
	}
	if rMissed > 0 {
		return &exitError{exitFailed, fmt.Errorf("%d of %d published ratios miss beyond their tolerance", rMissed, rGated)}
	}
	shown := fmt.Sprintf("%d past the knee", len(c.cs)-gated-known)
	if known > 0 {
		shown += fmt.Sprintf(" and %d known %s", known, map[bool]string{true: "miss", false: "misses"}[known == 1])
	}
	fmt.Fprintf(out, "\nall %d measurements below the knee within ±%.0f%% throughput, ±%.0f%% latency (%s shown, not gated);\n"+
		"all %d kernel figures within ±%.0f%% (%d shown, not gated); all %d published ratios within their tolerance (%d shown, not gated)\n",
		gated, 100*sim.ThroughputTolerance, 100*sim.LatencyTolerance, shown, kGated, 100*sim.KernelTolerance, len(c.ks)-kGated,
		rGated, len(c.rs)-rGated)
	return nil
}

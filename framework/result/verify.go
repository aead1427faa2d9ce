package result

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/internal/inputfile"
)

// MaxFileBytes bounds a results-format file (result, baseline, shard,
// variants). A sweep of 50 points x 5 trials with slices takes a few MiB;
// the bound leaves room for far more, while keeping the reader's peak
// memory (about ten times the file, measured) under 512 MB.
const MaxFileBytes = 32 << 20

// MaxPoints and MaxHistograms bound what one file makes the reader do:
// each histogram is decoded (a few hundred KiB of buckets, ~0.6 ms) to
// verify its summary, so a file of tiny forged histograms could
// otherwise take minutes of CPU. 20,000 is 200 points of a model mix of
// eight, or 1,500 plain points.
const (
	MaxPoints     = 5000
	MaxHistograms = 20000
)

// ReadBytes reads a results-format file (result, baseline, shard,
// variants) under the bounds Read applies, for readers that decode it
// themselves.
func ReadBytes(path string) ([]byte, error) { return inputfile.ReadFile(path, MaxFileBytes) }

// MaxShards bounds a run's shard count: far above any real split, low
// enough that naming every missing shard stays cheap.
const MaxShards = 1024

// Token histogram names: counts of tokens per measured answer (the
// catalogue's).
const (
	PromptTokensHistogram = metric.PromptTokensHistogram
	OutputTokensHistogram = metric.OutputTokensHistogram
	// PromptTokensAskedHistogram: see metric.PromptTokensAskedHistogram.
	PromptTokensAskedHistogram = metric.PromptTokensAskedHistogram
)

// ErrInconsistent marks a file whose figures contradict each other or
// their histograms: edited by hand, or forged. Every reader refuses it.
var ErrInconsistent = errors.New("figures that do not add up (edited by hand?)")

// Verify checks what a results file says against itself, so that every
// consumer (compare, merge, ci --measured, baseline, history, report)
// judges figures that could have been measured:
//   - counts are non-negative, and add up (sent = completed + failed, the
//     errors by kind sum to failed, the error rate is failed over sent);
//   - each histogram holds as many values as the requests it records
//     (every answer's end-to-end latency and output length), and every
//     latency or token summary is its histogram's;
//   - throughputs are finite, and no more than the answers the point
//     counted could make over its window;
//   - a point's label names its parameters (rate=4 has rate 4);
//   - a point's window ends no later than its slices show requests ran
//     (windowFromSlices), so a window stretched with its throughputs and
//     costs scaled to match is refused;
//   - the stored suite definition hashes to suite.hash (Suite.CheckHash),
//     so a loosened tolerance or a dropped SLO is refused;
//   - a shard's index and count are bounded.
//
// It cannot tell every consistent forgery from a measurement: a file
// without slices, or one whose slices were rewritten along with the
// window, is caught by review (ci shows what an edit of a baseline
// moved), not here.
func (f *File) Verify() error {
	if err := f.verify(nil); err != nil {
		return err
	}
	f.verified = true
	return nil
}

// VerifyOptions make a partial verification, for a reader that shows only
// some of a file's figures (history, over hundreds of versions): every
// check Verify makes that needs no histogram is made, and of the
// histograms only those it names are decoded and checked.
type VerifyOptions struct {
	// Histograms, when not nil, names the histograms decoded and checked
	// against their summaries and the counts they hold. The others are
	// not decoded: their summaries (and, for the token histograms, the
	// token figures) are unchecked, and the reader must not show them.
	// Nil checks every histogram, as Verify does.
	Histograms func(name string) bool
	// Summarize, when not nil, stands for DecodeHistogram then Summarize
	// (scale as Summarize's): a cache of the histograms already checked,
	// by content.
	Summarize func(enc string, scale float64) (Summary, error)
	// Context, when not nil, stops the verification between points with
	// its error.
	Context context.Context
}

// VerifyWith verifies f as o says. A partial verification (o.Histograms
// set) does not mark f verified: VerifyHistograms verifies it whole.
func (f *File) VerifyWith(o VerifyOptions) error {
	if err := f.verify(&o); err != nil {
		return err
	}
	if o.Histograms == nil {
		f.verified = true
	}
	return nil
}

// VerifyHistograms is Verify, and also requires every latency summary to
// have its histogram: what merging needs. Files read are not held to it,
// since v1 files kept only some histograms and may have been rewritten
// since. A file Parse (or Verify) already verified is not verified again:
// only the histograms' presence is checked.
func (f *File) VerifyHistograms() error {
	if !f.verified {
		if err := f.Verify(); err != nil {
			return err
		}
	}
	for i := range f.Points {
		p := &f.Points[i]
		if err := p.Measured.histogramsPresent(); err != nil {
			return fmt.Errorf("points[%d] (%s trial %d): %w", i, p.Label, p.Trial, err)
		}
	}
	return nil
}

func (f *File) verify(o *VerifyOptions) error {
	if err := verifySpan("the run", f.Started, f.Finished); err != nil {
		return err
	}
	if sh := f.Shard; sh != nil {
		if err := verifyShard("shard", *sh); err != nil {
			return err
		}
	}
	if len(f.MergedFrom) > MaxShards {
		return fmt.Errorf("merged_from lists %d shards, more than %d: %w", len(f.MergedFrom), MaxShards, ErrInconsistent)
	}
	for i, sh := range f.MergedFrom {
		if err := verifyShard(fmt.Sprintf("merged_from[%d]", i), sh); err != nil {
			return err
		}
	}
	if len(f.Points) > MaxPoints {
		return fmt.Errorf("%d points, more than the %d a results file may hold: %w", len(f.Points), MaxPoints, ErrInconsistent)
	}
	hists := 0
	for i := range f.Points {
		hists += f.Points[i].histogramCount()
	}
	if hists > MaxHistograms {
		return fmt.Errorf("%d histograms, more than the %d a results file may hold: %w", hists, MaxHistograms, ErrInconsistent)
	}
	if err := f.Suite.CheckHash(); err != nil && !errors.Is(err, ErrUnverifiable) {
		return err
	}
	quiet := f.Suite.quietArrivals()
	recorded := f.recordsValidity()
	for i := range f.Points {
		if o != nil && o.Context != nil {
			if err := o.Context.Err(); err != nil {
				return err
			}
		}
		p := &f.Points[i]
		if err := p.verify(quiet, o); err != nil {
			return fmt.Errorf("points[%d] (%s trial %d): %w", i, p.Label, p.Trial, err)
		}
		if recorded && p.Validity == nil {
			return fmt.Errorf("points[%d] (%s trial %d): %w", i, p.Label, p.Trial, errValidityMissing)
		}
	}
	if c := f.Capacity; c != nil {
		if err := c.verify(); err != nil {
			return fmt.Errorf("capacity: %w", err)
		}
	}
	if sp := f.Target.Sim; sp != nil {
		if err := sp.verify(); err != nil {
			return err
		}
	}
	return checkNumbers(f)
}

// verify bounds a recorded simulator profile's constants, each named by
// its path in the file.
func (sp *SimProfile) verify() error {
	if sp.Interval != nil {
		if err := sp.Interval.verify(); err != nil {
			return fmt.Errorf("target.sim_profile.interval: %w", err)
		}
	}
	if sp.MaxPrefillChunk < 0 {
		return fmt.Errorf("target.sim_profile.max_prefill_chunk %d: %w", sp.MaxPrefillChunk, ErrInconsistent)
	}
	if !(sp.RequestOverheadMs >= 0 && sp.RequestOverheadMs <= maxRequestOverheadMs) {
		return fmt.Errorf("target.sim_profile.request_overhead_ms %v: want 0 to %v: %w", sp.RequestOverheadMs, float64(maxRequestOverheadMs), ErrInconsistent)
	}
	if !(sp.AttendNsPerPair >= 0 && sp.AttendNsPerPair <= MaxAttendNsPerPair) {
		return fmt.Errorf("target.sim_profile.attend_ns_per_pair %v: want 0 to %v: %w", sp.AttendNsPerPair, float64(MaxAttendNsPerPair), ErrInconsistent)
	}
	for _, c := range []struct {
		name string
		v    float64
	}{{"step_base_ms", sp.StepBaseMs}, {"decode_per_seq_ms", sp.DecodePerSeqMs}, {"prefill_per_token_ms", sp.PrefillPerTokenMs}} {
		if !(c.v >= 0 && c.v <= maxSimStepMs) {
			return fmt.Errorf("target.sim_profile.%s %v: want 0 to %v: %w", c.name, c.v, float64(maxSimStepMs), ErrInconsistent)
		}
	}
	return nil
}

// maxSimStepMs bounds a recorded profile's step costs: an hour is past
// any profile the simulator accepts (a minute a step from cards).
const maxSimStepMs = 3_600_000

// maxRequestOverheadMs bounds a recorded request path: a minute is
// beyond any server's.
const maxRequestOverheadMs = 60_000

// MaxAttendNsPerPair bounds a constant profile's price of one attention
// pair: a microsecond is a thousand times a CPU's.
const MaxAttendNsPerPair = 1000

// maxIntervalRatio bounds an interval's ratios: a twin off by more than
// a factor of 100 has no interval worth printing.
const maxIntervalRatio = 100

// maxBasis bounds an interval's basis, a sentence.
const maxBasis = 500

// Verify checks an interval read from outside (a results or profile
// file): its level and ratios, which reports multiply figures by.
func (iv *SimInterval) Verify() error { return iv.verify() }

func (iv *SimInterval) verify() error {
	if !(iv.Level > 0 && iv.Level < 1) {
		return fmt.Errorf("level %v: want above 0 and below 1: %w", iv.Level, ErrInconsistent)
	}
	if len(iv.Basis) > maxBasis {
		return fmt.Errorf("basis of %d bytes, more than %d: %w", len(iv.Basis), maxBasis, ErrInconsistent)
	}
	return interval(append(iv.Latency[:], iv.Throughput[:]...), 1/float64(maxIntervalRatio), maxIntervalRatio)
}

// interval checks pairs of bounds lo <= hi, each finite within [min, max].
func interval(bounds []float64, lo, hi float64) error {
	for i := 0; i+1 < len(bounds); i += 2 {
		a, b := bounds[i], bounds[i+1]
		if !finite(a) || !finite(b) || a < lo || b > hi || a > b {
			return fmt.Errorf("bounds %v–%v: want %v <= low <= high <= %v: %w", a, b, lo, hi, ErrInconsistent)
		}
	}
	return nil
}

// verify checks a capacity's figures: the gate compares Rate, and the
// headline quotes the rest.
func (c *Capacity) verify() error {
	for _, v := range []float64{c.Rate, c.Failing, c.Offered, c.OutputThroughput} {
		if !finite(v) || v < 0 {
			return fmt.Errorf("figure %v: %w", v, ErrInconsistent)
		}
	}
	if c.Probes < 0 {
		return fmt.Errorf("%d probes: %w", c.Probes, ErrInconsistent)
	}

	if k := c.Cost; k != nil {
		for _, v := range []float64{k.USDPerHour, k.PerMOutput, k.PerMTotal} {
			if !finite(v) || v < 0 {
				return fmt.Errorf("cost %v: %w", v, ErrInconsistent)
			}
		}
	}
	return nil
}

// histogramsPresent checks that every latency summary with values, and
// every point with answers, has its histograms (the models' too).
func (m *Measured) histogramsPresent() error {
	for name, s := range m.Latency {
		if _, ok := m.Histograms[name]; !ok && s.Count > 0 {
			return fmt.Errorf("latency %s has no histogram behind it: %w", name, ErrInconsistent)
		}
	}
	if n := m.Requests.Completed; n > 0 && len(m.Histograms) == 0 {
		return fmt.Errorf("%d answers and no histograms: %w", n, ErrInconsistent)
	}
	for name, mm := range m.Models {
		if err := mm.histogramsPresent(); err != nil {
			return fmt.Errorf("model %s: %w", name, err)
		}
	}
	return nil
}

func (m *Measured) histogramCount() int {
	n := len(m.Histograms)
	for _, mm := range m.Models {
		if mm != nil {
			n += mm.histogramCount()
		}
	}
	return n
}

// verify checks a validity record's figures: the gate divides the
// server's CPU and wait times by the requests it served and weighs a
// regression against them, so a forged negative or infinite one could
// excuse any regression.
func (v *Validity) verify() error {
	figs := []float64{v.StallMs, v.MaxStallMs, v.StealShare}
	if s := v.Server; s != nil {
		figs = append(figs, s.StoppedMs, s.StarvedMs, s.CPUMs, s.WaitMs)
		if s.Stops < 0 || s.Starves < 0 || s.Processes < 0 {
			return fmt.Errorf("server counts %d stops, %d starves, %d processes: %w", s.Stops, s.Starves, s.Processes, ErrInconsistent)
		}
	}
	for _, x := range figs {
		if !finite(x) || x < 0 {
			return fmt.Errorf("figure %v: %w", x, ErrInconsistent)
		}
	}
	return nil
}

func verifyShard(where string, sh Shard) error {
	if sh.Count < 1 || sh.Count > MaxShards || sh.Index < 0 || sh.Index >= sh.Count {
		return fmt.Errorf("%s: index %d of %d, want 0 <= index < count <= %d: %w", where, sh.Index, sh.Count, MaxShards, ErrInconsistent)
	}
	return verifySpan(where, sh.Started, sh.Finished)
}

// verifySpan refuses a run that finished before it started.
func verifySpan(where string, started, finished time.Time) error {
	if !started.IsZero() && !finished.IsZero() && finished.Before(started) {
		return fmt.Errorf("%s finished at %s, before it started at %s: %w", where, finished.Format(time.RFC3339), started.Format(time.RFC3339), ErrInconsistent)
	}
	return nil
}

func (p *Point) verify(quiet bool, o *VerifyOptions) error {
	if err := verifyLabel(p); err != nil {
		return err
	}
	if !finite(p.Rate) || p.Rate < 0 || p.Concurrency < 0 {
		return fmt.Errorf("rate %v, concurrency %d: %w", p.Rate, p.Concurrency, ErrInconsistent)
	}
	if err := p.Measured.verify(o); err != nil {
		return err
	}
	if v := p.Validity; v != nil {
		if err := v.verify(); err != nil {
			return fmt.Errorf("validity: %w", err)
		}
	}
	// Checked after every figure's own checks: a window stretched with
	// its figures scaled to match passes those, and fails only here.
	if err := p.Measured.windowFromSlices(p.Incomplete, quiet, p.Mode == ModeConcurrency); err != nil {
		return err
	}
	for name, v := range p.Telemetry {
		if !finite(v) || v < 0 {
			return fmt.Errorf("telemetry %s = %v: %w", name, v, ErrInconsistent)
		}
	}
	if !finite(p.EnergyPerOutputToken) || p.EnergyPerOutputToken < 0 {
		return fmt.Errorf("energy per output token %v: %w", p.EnergyPerOutputToken, ErrInconsistent)
	}
	if c := p.Cost; c != nil {
		for _, v := range []float64{c.USDPerHour, c.PerMOutput, c.PerMTotal} {
			if !finite(v) || v < 0 {
				return fmt.Errorf("cost %v: %w", v, ErrInconsistent)
			}
		}
	}
	return nil
}

// verifyLabel checks the labels this version writes ("rate=4",
// "rate=inf", "concurrency=16") against the parameters beside them.
func verifyLabel(p *Point) error {
	if v, ok := strings.CutPrefix(p.Label, "rate="); ok {
		if p.Mode != ModeRate {
			return fmt.Errorf("label %s on a %s point: %w", p.Label, p.Mode, ErrInconsistent)
		}
		if v == "inf" {
			if p.Rate != 0 {
				return fmt.Errorf("label %s with rate %v: %w", p.Label, p.Rate, ErrInconsistent)
			}
			return nil
		}
		r, err := strconv.ParseFloat(v, 64)
		if err != nil || r != p.Rate {
			return fmt.Errorf("label %s with rate %v: %w", p.Label, p.Rate, ErrInconsistent)
		}
	}
	if v, ok := strings.CutPrefix(p.Label, "concurrency="); ok {
		n, err := strconv.Atoi(v)
		if err != nil || p.Mode != ModeConcurrency || n != p.Concurrency {
			return fmt.Errorf("label %s with mode %s, concurrency %d: %w", p.Label, p.Mode, p.Concurrency, ErrInconsistent)
		}
	}
	return nil
}

// verifyCounts bounds a point's counts to 0 through MaxCount, each named.
func (m *Measured) verifyCounts() error {
	r := m.Requests
	for _, c := range []struct {
		name string
		n    int
	}{{"sent", r.Sent}, {"completed", r.Completed}, {"failed", r.Failed}, {"warmup", r.Warmup}, {"good", r.Good},
		{"canceled", r.Canceled}, {"client_limited", r.ClientLimited}, {"abandoned", r.Abandoned}, {"attempts", r.Attempts}, {"gave_up", r.GaveUp},
		{"tokens.output_mismatch", m.Tokens.OutputMismatch}, {"tokens.prompt_mismatch", m.Tokens.PromptMismatch}, {"tokens.reasoning", m.Tokens.Reasoning},
		{"tokens.out_of_range", m.Tokens.OutOfRange}, {"tokens.empty_answers", m.Tokens.EmptyAnswers}, {"tokens.usage_rejected", m.Tokens.UsageRejected},
		{"tokens.chunk_gaps", m.Tokens.ChunkGaps}, {"tokens.coalesced_gaps", m.Tokens.CoalescedGaps}, {"tokens.coalesced_first", m.Tokens.CoalescedFirst}, {"tokens.spread_gaps", m.Tokens.SpreadGaps}, {"tokens.one_read", m.Tokens.OneRead}} {
		if c.n < 0 || c.n > MaxCount {
			return fmt.Errorf("%s is %d: want 0 to %d: %w", c.name, c.n, MaxCount, ErrInconsistent)
		}
	}
	return nil
}

func (m *Measured) verify(o *VerifyOptions) error {
	r := m.Requests
	if err := m.verifyCounts(); err != nil {
		return err
	}
	if err := m.Tokens.verifyKinds(r.Completed); err != nil {
		return err
	}
	if r.Completed+r.Failed != r.Sent {
		return fmt.Errorf("sent %d is not completed %d + failed %d: %w", r.Sent, r.Completed, r.Failed, ErrInconsistent)
	}
	if t := m.Tokens; t.CoalescedGaps+t.SpreadGaps > t.ChunkGaps {
		return fmt.Errorf("%d coalesced and %d spread of %d chunk gaps: %w", t.CoalescedGaps, t.SpreadGaps, t.ChunkGaps, ErrInconsistent)
	}
	if r.Good > r.Completed {
		return fmt.Errorf("good %d above completed %d: %w", r.Good, r.Completed, ErrInconsistent)
	}
	errs := 0
	for kind, n := range r.Errors {
		if n < 0 || n > MaxCount {
			return fmt.Errorf("errors[%s] is %d: %w", kind, n, ErrInconsistent)
		}
		errs += n
	}
	if len(r.Errors) > 0 && errs != r.Failed {
		return fmt.Errorf("errors by kind sum to %d, failed is %d: %w", errs, r.Failed, ErrInconsistent)
	}
	want := 0.0
	if r.Sent > 0 {
		want = float64(r.Failed) / float64(r.Sent)
	}
	if !near(r.ErrorRate, want) {
		return fmt.Errorf("error rate %v, failed/sent is %v: %w", r.ErrorRate, want, ErrInconsistent)
	}
	if !finite(m.Window.Seconds) || m.Window.Seconds < 0 {
		return fmt.Errorf("window of %v s: %w", m.Window.Seconds, ErrInconsistent)
	}
	// A summary's histogram says more of one that differs from it.
	if err := m.verifyHistograms(o); err != nil {
		return err
	}
	if err := m.verifySummaries(); err != nil {
		return err
	}
	if err := m.verifyThroughput(); err != nil {
		return err
	}
	for name, mm := range m.Models {
		if mm == nil {
			return fmt.Errorf("model %s: empty: %w", name, ErrInconsistent)
		}
		if err := mm.verify(o); err != nil {
			return fmt.Errorf("model %s: %w", name, err)
		}
	}
	return nil
}

// verifySummaries checks that every summary could be one: a point
// measured without histograms (or read from an older file) is judged by
// its summaries alone, so one with negative, unordered or absurd figures
// would gate as any other.
func (m *Measured) verifySummaries() error {
	for name, s := range m.Latency {
		if err := s.verify(); err != nil {
			return fmt.Errorf("latency %s: %w", name, err)
		}
	}
	for _, t := range []struct {
		name string
		s    *Summary
	}{{"prompt", &m.Tokens.Prompt}, {"output", &m.Tokens.Output}, {"prompt_asked", m.Tokens.PromptAsked}} {
		if t.s == nil {
			continue
		}
		if err := t.s.verify(); err != nil {
			return fmt.Errorf("tokens.%s: %w", t.name, err)
		}
	}
	return nil
}

// MaxCount bounds a point's counts (requests, tokens' kinds): 2^40 is
// ten thousand requests a second for three years, and the counts of
// MaxShards shards add up without overflowing.
const MaxCount = 1 << 40

// verify checks a summary's figures are finite, within 0 and
// metric.MaxValue, its quantiles in order between its min and max, and
// its mean among them.
func (s Summary) verify() error {
	vals := []float64{s.Min, s.P50, s.P90, s.P95, s.P99, s.P999, s.Max}
	for _, v := range append(vals, s.Mean, s.Stddev) {
		if !finite(v) || v < 0 || v > metric.MaxValue {
			return fmt.Errorf("a figure of %v: want 0 to %v: %w", v, metric.MaxValue, ErrInconsistent)
		}
	}
	if s.Count < 0 {
		return fmt.Errorf("count %d: %w", s.Count, ErrInconsistent)
	}
	if s.Count == 0 {
		return nil
	}
	for i := 1; i < len(vals); i++ {
		if vals[i] < vals[i-1] {
			return fmt.Errorf("quantiles out of order (min, p50, p90, p95, p99, p99.9, max: %v): %w", vals, ErrInconsistent)
		}
	}
	if s.Mean < s.Min && !near(s.Mean, s.Min) || s.Mean > s.Max && !near(s.Mean, s.Max) {
		return fmt.Errorf("mean %v outside min %v and max %v: %w", s.Mean, s.Min, s.Max, ErrInconsistent)
	}
	return nil
}

// verifyHistograms checks every summary against its histogram, and the
// histograms' counts against the requests they record. The recorder puts
// every measured answer's end-to-end latency in e2e and its length in
// output_tokens (tokens.out_of_range counts values a histogram could not
// hold), and no more than one value per answer in the other per-answer
// histograms. A partial verification (o) checks only the histograms it
// names, and the counts of those.
func (m *Measured) verifyHistograms(o *VerifyOptions) error {
	counts := map[string]int64{}
	for name, enc := range m.Histograms {
		tokens := name == PromptTokensHistogram || name == OutputTokensHistogram || name == PromptTokensAskedHistogram
		if _, known := metric.Lookup(name); !known && !tokens {
			return fmt.Errorf("histogram %q is not one benchci records: %w", name, ErrInconsistent)
		}
		if o != nil && o.Histograms != nil && !o.Histograms(name) {
			continue
		}
		scale := 1.0
		if !tokens {
			scale = 1000
		}
		s, err := o.summarize(enc, scale)
		if err != nil {
			return fmt.Errorf("histogram %s: %w", name, err)
		}
		counts[name] = s.Count
		if got, ok := m.Latency[name]; ok && got != s {
			return fmt.Errorf("latency %s does not match its histogram (p99 %v, histogram %v): %w", name, got.P99, s.P99, ErrInconsistent)
		}
		if name == PromptTokensHistogram && m.Tokens.Prompt != s {
			return fmt.Errorf("prompt tokens do not match their histogram (mean %v, histogram %v): %w", m.Tokens.Prompt.Mean, s.Mean, ErrInconsistent)
		}
		if name == PromptTokensAskedHistogram && (m.Tokens.PromptAsked == nil || *m.Tokens.PromptAsked != s) {
			return fmt.Errorf("prompt tokens asked do not match their histogram: %w", ErrInconsistent)
		}
		if name == OutputTokensHistogram && m.Tokens.Output != s {
			return fmt.Errorf("output tokens do not match their histogram (mean %v, histogram %v): %w", m.Tokens.Output.Mean, s.Mean, ErrInconsistent)
		}
	}
	ok := int64(m.Requests.Completed)
	lost := int64(m.Tokens.OutOfRange)
	if n, has := counts[metric.E2E]; has && (n > ok || n < ok-lost) {
		return fmt.Errorf("the e2e histogram holds %d answers, the point counts %d completed: %w", n, ok, ErrInconsistent)
	}
	if n, has := counts[OutputTokensHistogram]; has && m.Batch == nil && (n > ok || n < ok-lost) {
		return fmt.Errorf("the output_tokens histogram holds %d answers, the point counts %d completed: %w", n, ok, ErrInconsistent)
	}
	if _, has := m.Histograms[PromptTokensAskedHistogram]; m.Tokens.PromptAsked != nil && !has {
		return fmt.Errorf("prompt tokens asked summarized without their histogram: %w", ErrInconsistent)
	}
	for _, name := range append(metric.Names(func(d metric.Def) bool { return d.Kind == metric.Latency && d.Scope == metric.PerRequest }), PromptTokensHistogram, PromptTokensAskedHistogram) {
		if n := counts[name]; n > ok {
			return fmt.Errorf("the %s histogram holds %d values, more than the %d answers: %w", name, n, ok, ErrInconsistent)
		}
	}
	return nil
}

// summarize decodes and summarizes a histogram, through o's cache when
// it has one, else through the process's.
func (o *VerifyOptions) summarize(enc string, scale float64) (Summary, error) {
	if o != nil && o.Summarize != nil {
		return o.Summarize(enc, scale)
	}
	k := summaryKey{sha256.Sum256([]byte(enc)), scale}
	summaries.Lock()
	s, ok := summaries.m[k]
	summaries.Unlock()
	if ok {
		return s, nil
	}
	h, err := DecodeHistogram(enc)
	if err != nil {
		return Summary{}, err
	}
	s = Summarize(h, scale)
	summaries.Lock()
	defer summaries.Unlock()
	if len(summaries.m) >= maxSummaries {
		clear(summaries.m)
	}
	summaries.m[k] = s
	return s, nil
}

// summaries are the histograms this process verified, by content: a
// command reads a file more than once (ci reads the base's baseline for
// its rules and again for its figures; a results file is written, then
// read back), and decoding a histogram is most of verifying it. The
// content's hash is the key, so what is remembered is what the bytes
// say, whichever file held them.
var summaries = struct {
	sync.Mutex
	m map[summaryKey]Summary
}{m: map[summaryKey]Summary{}}

// maxSummaries bounds the memo (about 150 bytes an entry); past it, it
// starts again empty.
const maxSummaries = 8192

type summaryKey struct {
	sum   [sha256.Size]byte
	scale float64
}

// verifyThroughput bounds the throughputs by the answers counted: request
// throughput times the window counts answers that ended in it, which are
// measured ones or warm-up ones; output tokens no more than those answers
// could hold, the longest measured answer standing for each.
func (m *Measured) verifyThroughput() error {
	t := m.Throughput
	for _, v := range []float64{t.Requests, t.OutputTokens, t.TotalTokens, t.Embeddings} {
		if !finite(v) || v < 0 {
			return fmt.Errorf("throughput %v: %w", v, ErrInconsistent)
		}
	}
	if g := t.Goodput; g != nil && (!finite(*g) || *g < 0 || *g > t.Requests*(1+1e-9)) {
		return fmt.Errorf("goodput %v above request throughput %v: %w", *g, t.Requests, ErrInconsistent)
	}
	if t.TotalTokens < t.OutputTokens*(1-1e-9) {
		return fmt.Errorf("total token throughput %v below output %v: %w", t.TotalTokens, t.OutputTokens, ErrInconsistent)
	}
	secs := m.Window.Seconds
	answers := float64(m.Requests.Completed + m.Requests.Warmup)
	if got := t.Requests * secs; got > answers*(1+1e-9)+1e-6 {
		return fmt.Errorf("request throughput %.4g/s over %.4g s makes %.0f answers, the point counts %.0f (warm-up included): %w", t.Requests, secs, got, answers, ErrInconsistent)
	}
	// Warm-up answers are not in the histograms: each is allowed four
	// times the longest measured answer before the figure is refused.
	if out := m.Tokens.Output; out.Count > 0 {
		limit := (float64(m.Requests.Completed) + 4*float64(m.Requests.Warmup)) * out.Max * (1 + 1e-3)
		if got := t.OutputTokens * secs; got > limit+1 {
			return fmt.Errorf("output throughput %.4g tok/s over %.4g s makes %.0f tokens, more than the %d answers of at most %.0f tokens could: %w", t.OutputTokens, secs, got, m.Requests.Completed+m.Requests.Warmup, out.Max, ErrInconsistent)
		}
	}
	return nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(math.Abs(b), 1) }

// verifyKinds checks the counts by finish kind: known kinds, no negative
// count, the empty answers' kinds summing to the empty answers, and no
// more answers counted than completed.
func (t *Tokens) verifyKinds(completed int) error {
	for _, c := range []struct {
		name  string
		m     map[string]int
		total int
	}{{"empty_kinds", t.EmptyKinds, t.EmptyAnswers}, {"finish", t.Finish, completed}, {"output_mismatch_kinds", t.MismatchKinds, t.OutputMismatch}} {
		sum := 0
		for k, n := range c.m {
			if !slices.Contains(FinishKinds, k) || n < 0 || n > c.total-sum {
				// Each count is checked against what is left of the
				// total before it is added: hostile counts cannot wrap
				// the sum around to pass.
				return fmt.Errorf("tokens.%s[%q] is %d: %w", c.name, k, n, ErrInconsistent)
			}
			sum += n
		}
		if c.m != nil && (sum > c.total || c.name == "empty_kinds" && sum != c.total) {
			return fmt.Errorf("tokens.%s sum to %d against %d: %w", c.name, sum, c.total, ErrInconsistent)
		}
	}
	return nil
}

// validityRecordedSince is when the figures' version joined the file
// (figures: 2), after every point had begun to carry its validity record.
// A file that states figures 2 or later, or started after this, was
// written by a build that records validity on every point.
var validityRecordedSince = time.Date(2026, 12, 5, 0, 1, 46, 0, time.UTC)

// errValidityMissing refuses a point of a file that should record its
// validity and does not. Files before the record omit it and read as
// valid, so deleting it would turn a trial that judged itself invalid
// into a valid one (and a baseline): only a file that also drops its
// figures version and is dated before the record can omit it, and a
// backdated file cannot approve a loosened rule (its measurement is not
// newer than the base's).
var errValidityMissing = fmt.Errorf("no validity record, which every point written since %s carries (was it deleted?): %w",
	validityRecordedSince.Format(time.DateOnly), ErrInconsistent)

// recordsValidity reports whether f was written by a build that records
// every point's validity.
func (f *File) recordsValidity() bool {
	return f.Figures >= 2 || f.Started.After(validityRecordedSince)
}

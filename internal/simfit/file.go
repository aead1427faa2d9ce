package simfit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/inputfile"
	"github.com/benchci/benchci/internal/sim"
	"github.com/benchci/benchci/internal/untrusted"
)

// FileSchema names the profile file format.
const FileSchema = "benchci.sim-profile/v1"

// MaxFileBytes bounds a profile file: two cards, a few knobs and the
// fit's summary take a few KiB.
const MaxFileBytes = 1 << 20

// File is a profile file: a simulator profile a suite can name
// (b.target.sim('file:fitted.json')), and how it was fitted.
type File struct {
	Schema string `json:"schema"`
	// Profile is the fitted twin. For one derived from cards, its spec
	// (cards, dtypes, tensor-parallel degree, efficiencies) and engine
	// knobs are what is read back; its step constants are derived again.
	Profile sim.Profile `json:"profile"`
	Fit     *FitInfo    `json:"fit,omitempty"`
}

// FitInfo records how a profile file was fitted, for whoever reads it.
type FitInfo struct {
	// Base is the profile the fit started from.
	Base    string        `json:"base"`
	Results []string      `json:"results"`
	Points  int           `json:"points"`
	Params  []FittedParam `json:"params"`
	// Loss is the fit's mean soft-L1 loss of log ratios.
	Loss float64 `json:"loss"`
	// HeldOutMedianAbsError is the median |predicted - measured| /
	// measured over every figure of every point, each predicted by a fit
	// without its point or its trials; absent when there were too few
	// conditions.
	HeldOutMedianAbsError *float64 `json:"heldout_median_abs_error,omitempty"`
	Folds                 int      `json:"folds,omitempty"`
	// Interval bounds a real figure by the twin's from the same held-out
	// predictions (sim.FromHeldOut); absent with too few of them.
	Interval *result.SimInterval `json:"interval,omitempty"`
}

// FittedParam is one fitted parameter: durations in nanoseconds.
type FittedParam struct {
	Name   string  `json:"name"`
	Base   float64 `json:"base"`
	Fitted float64 `json:"fitted"`
	Scale  float64 `json:"scale"`
}

// Write writes a profile file atomically.
func Write(path string, f *File) error {
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return result.WriteFileAtomic(path, append(data, '\n'))
}

// ReadProfile reads a profile file as hostile input (a regular file of
// at most MaxFileBytes, every field bounded, cards checked) and returns
// its profile, ready to serve.
func ReadProfile(path string) (sim.Profile, error) {
	f, err := ReadFile(path)
	if err != nil {
		return sim.Profile{}, err
	}
	return f.Profile, nil
}

// ReadFile reads a profile file as hostile input, as ReadProfile does,
// and returns it whole.
func ReadFile(path string) (*File, error) {
	data, err := inputfile.ReadFile(path, MaxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("read simulator profile: %w", err)
	}
	f, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("simulator profile %s: %w", path, err)
	}
	return f, nil
}

// Parse decodes and checks a profile file's contents. A profile derived
// from cards is derived again from its spec and knobs, so its KV cache
// and step constants are the simulator's, not the file's (the recorded
// idle step only tells which all-reduce a version-2 file was fitted
// under: markPCIeRing).
func Parse(data []byte) (*File, error) {
	var f File
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("decode: data after the profile")
	}
	if f.Schema != FileSchema {
		return nil, fmt.Errorf("schema %q, want %q", untrusted.Text(short(f.Schema)), FileSchema)
	}
	if s := f.Profile.Spec; s != nil && s.Roofline == 0 {
		// Written before the step-cost model had versions: its fitted
		// efficiencies are version 1's.
		s.Roofline = 1
	}
	markPCIeRing(&f.Profile)
	p, err := checkProfile(f.Profile)
	if err != nil {
		return nil, err
	}
	f.Profile = p
	if f.Fit != nil && f.Fit.Interval != nil {
		if err := f.Fit.Interval.Verify(); err != nil {
			return nil, fmt.Errorf("fit.interval: %w", err)
		}
		if err := checkText("fit.interval.basis", f.Fit.Interval.Basis); err != nil {
			return nil, err
		}
	}
	return &f, nil
}

// markPCIeRing marks a version-2 file fitted on PCIe cards at TP 2 or more
// before the PCIe all-reduce became NCCL's (sim.PCIeRing): builds of both
// wrote version 2, but the idle step a file recorded is priced with its
// all-reduce, so a file whose step_base is the ring's (to a microsecond;
// at TP 2 the two differ by about 11 µs for an 8B model, more with more
// GPUs) and not NCCL's was fitted under the ring. This is the one use of
// a derived file's recorded step constants. A file it cannot derive is
// left to checkProfile to refuse.
func markPCIeRing(p *sim.Profile) {
	s := p.Spec
	if s == nil || s.Roofline != 2 || s.PCIeAllReduce != "" || s.TP < 2 || s.GPU.Interconnect != sim.InterconnectPCIe {
		return
	}
	ring := *s
	ring.PCIeAllReduce = sim.PCIeRing
	now, err1 := sim.Derive(*s, p.Knobs())
	then, err2 := sim.Derive(ring, p.Knobs())
	if err1 != nil || err2 != nil {
		return
	}
	if abs(then.StepBase-p.StepBase) <= time.Microsecond && abs(now.StepBase-p.StepBase) > time.Microsecond {
		s.PCIeAllReduce = sim.PCIeRing
	}
}

func abs(d time.Duration) time.Duration { return max(d, -d) }

// heldOutInterval is the fit's 80% interval from its held-out rows:
// measured over predicted, throughput apart from the latencies.
func heldOutInterval(v *Validation) *result.SimInterval {
	var lat, tput []float64
	for _, r := range v.Rows {
		ratio := r.Measured / r.Predicted // +Inf predicted: 0, refused below
		if r.Figure == FigThroughput {
			tput = append(tput, ratio)
		} else {
			lat = append(lat, ratio)
		}
	}
	// Trials of one condition are one point here: they were held out
	// together, and their errors move together.
	iv, ok := sim.FromHeldOut(lat, tput, v.Conditions, 0.8)
	if !ok {
		return nil
	}
	out := &result.SimInterval{Level: iv.Level, Latency: iv.Latency, Throughput: iv.Throughput,
		Basis: fmt.Sprintf("benchci sim fit: %d of its figures, each predicted by a fit without its point or its trials; near the points measured, not on other cards", iv.Figures)}
	if out.Verify() != nil {
		// Off by more than a reader takes (a queued point a hundred
		// times off): no interval, rather than a file nothing can read.
		return nil
	}
	return out
}

func short(s string) string { return s[:min(len(s), 80)] }

// Bounds on what a profile file may set: far beyond any real engine, low
// enough that a replay or a server cannot be made to do absurd work.
const (
	maxSeqs        = 1 << 16
	maxTokensKnob  = 1 << 22
	maxTokensStep  = 64
	maxStep        = 10 * time.Second
	maxPerUnit     = time.Second
	maxTemplate    = 1 << 12
	maxKVBlocks    = 1 << 28
	maxBlockSize   = 1024
	maxText        = 1 << 10
	maxCardCount   = 1 << 24 // layers, heads, dims, vocab, context
	maxParams      = 1e14
	maxGPUFigure   = 1e7 // GiB, GB/s, TFLOP/s, µs
	maxTFLOPSTypes = 8
)

func checkText(field, s string) error {
	if len(s) > maxText || !untrusted.Safe(s) {
		return fmt.Errorf("%s: over %d bytes, or control or invisible characters", field, maxText)
	}
	return nil
}

func checkProfile(p sim.Profile) (sim.Profile, error) {
	for _, t := range []struct{ field, s string }{{"name", p.Name}, {"model", p.Model}, {"source", p.Source}} {
		if err := checkText(t.field, t.s); err != nil {
			return p, err
		}
	}
	if p.Name == "" || p.Model == "" {
		return p, errors.New("the profile needs a name and a model")
	}
	ints := []struct {
		field     string
		v, lo, hi int
	}{
		{"max_num_seqs", p.MaxNumSeqs, 1, maxSeqs}, {"max_batched_tokens", p.MaxBatchedTokens, 1, maxTokensKnob},
		{"max_prefill_chunk", p.MaxPrefillChunk, 0, maxTokensKnob},
		{"max_model_len", p.MaxModelLen, 1, maxTokensKnob}, {"tokens_per_step", p.TokensPerStep, 1, maxTokensStep},
		{"chat_template_tokens", p.ChatTemplateTokens, 0, maxTemplate},
		{"kv_blocks", p.KVBlocks, 0, maxKVBlocks}, {"block_size", p.BlockSize, 0, maxBlockSize},
	}
	for _, c := range ints {
		if c.v < c.lo || c.v > c.hi {
			return p, fmt.Errorf("%s %d: want %d to %d", c.field, c.v, c.lo, c.hi)
		}
	}
	if p.Speculative != nil || p.Disagg != nil {
		// Their cost models are built from cards (WithSpeculative,
		// WithDisaggregation), not read: a file's would go unchecked.
		return p, errors.New("a profile file cannot carry speculative or disaggregated: name them in b.target.simSpec(..., fitted=...) instead")
	}
	if p.RequestOverhead < 0 || p.RequestOverhead > maxStep {
		return p, fmt.Errorf("request_overhead %v: want 0 to %v", p.RequestOverhead, maxStep)
	}
	if !(p.AttendNsPerPair >= 0 && p.AttendNsPerPair <= result.MaxAttendNsPerPair) {
		return p, fmt.Errorf("attend_ns_per_pair %v: want 0 to %d", p.AttendNsPerPair, result.MaxAttendNsPerPair)
	}
	if p.Spec != nil && (p.AttendNsPerPair > 0 || p.UnifiedKV) {
		return p, errors.New("attend_ns_per_pair and unified_kv price a constant profile's attention: a profile from cards prices it from the model")
	}
	if p.Spec == nil {
		for _, d := range []struct {
			field  string
			v, max time.Duration
		}{{"step_base", p.StepBase, maxStep}, {"decode_per_seq", p.DecodePerSeq, maxPerUnit}, {"prefill_per_token", p.PrefillPerToken, maxPerUnit}} {
			if d.v < 0 || d.v > d.max {
				return p, fmt.Errorf("%s %v: want 0 to %v", d.field, d.v, d.max)
			}
		}
		if p.StepBase+p.DecodePerSeq <= 0 {
			return p, errors.New("step_base and decode_per_seq are both 0: a step would take no time")
		}
		if p.KVBlocks > 0 && p.BlockSize == 0 {
			return p, errors.New("kv_blocks without block_size")
		}
		if p.KVBlocks > 0 && p.KVTokens() < p.MaxModelLen {
			// As Derive refuses: a request of max_model_len could never
			// finish, preempted again and again.
			return p, fmt.Errorf("a KV cache of %d tokens holds less than one request of max_model_len %d", p.KVTokens(), p.MaxModelLen)
		}
		return p, nil
	}
	s := *p.Spec
	if err := checkCards(s); err != nil {
		return p, err
	}
	if s.StepOverhead < 0 || s.StepOverhead > maxStep || s.SeqOverhead < 0 || s.SeqOverhead > maxPerUnit || s.RequestOverhead < 0 || s.RequestOverhead > maxStep {
		return p, fmt.Errorf("spec: step_overhead %v, seq_overhead %v or request_overhead %v out of 0 to %v", s.StepOverhead, s.SeqOverhead, s.RequestOverhead, maxStep)
	}
	d, err := sim.Derive(s, p.Knobs())
	if err != nil {
		return p, fmt.Errorf("spec: %w", err)
	}
	if d.KVBlocks > maxKVBlocks {
		return p, fmt.Errorf("spec: a KV cache of %d blocks, more than %d", d.KVBlocks, maxKVBlocks)
	}
	// What the spec does not decide is the file's.
	d.Name, d.Source, d.Model = p.Name, p.Source, p.Model
	d.TokensPerStep, d.ChatTemplateTokens, d.PrefixCaching, d.MaxPrefillChunk = p.TokensPerStep, p.ChatTemplateTokens, p.PrefixCaching, p.MaxPrefillChunk
	return d, nil
}

// checkCards bounds the cards a file writes out: sim's Check wants them
// positive, this wants them finite and of a size a model could have.
func checkCards(s sim.Spec) error {
	m, g := s.Model, s.GPU
	for _, t := range []struct{ field, s string }{{"spec.model.name", m.Name}, {"spec.model.served", m.Served}, {"spec.model.source", m.Source},
		{"spec.gpu.name", g.Name}, {"spec.gpu.source", g.Source}, {"spec.gpu.interconnect", g.Interconnect}, {"spec.engine", s.Engine},
		{"spec.weights", s.Weights}, {"spec.kv_cache", s.KVCache}} {
		if err := checkText(t.field, t.s); err != nil {
			return err
		}
	}
	for _, c := range []struct {
		field string
		v     int
	}{{"layers", m.Layers}, {"hidden", m.Hidden}, {"heads", m.Heads}, {"kv_heads", m.KVHeads}, {"head_dim", m.HeadDim},
		{"intermediate", m.Intermediate}, {"vocab", m.Vocab}, {"experts", m.Experts}, {"experts_per_token", m.ExpertsPerToken}, {"context_len", m.ContextLen}} {
		if c.v < 0 || c.v > maxCardCount {
			return fmt.Errorf("spec.model.%s %d: want 0 to %d", c.field, c.v, maxCardCount)
		}
	}
	if !(m.Params <= maxParams) || !(m.ExpertParams <= maxParams) {
		return fmt.Errorf("spec.model: params above %g", maxParams)
	}
	if len(g.TFLOPS) > maxTFLOPSTypes || len(g.AchievedTFLOPS) > maxTFLOPSTypes {
		return fmt.Errorf("spec.gpu.tflops or achieved_tflops: more than %d compute types", maxTFLOPSTypes)
	}
	if g.PeerLinks < 0 || g.PeerLinks > maxCardCount {
		return fmt.Errorf("spec.gpu.peer_links %d: want 0 to %d", g.PeerLinks, maxCardCount)
	}
	figs := []float64{g.MemoryGiB, g.BandwidthGBs, g.LinkGBs, g.AllReduceUs, g.AchievedGBs}
	for _, m := range []map[string]float64{g.TFLOPS, g.AchievedTFLOPS} {
		for k, v := range m {
			if err := checkText("spec.gpu.tflops key", k); err != nil {
				return err
			}
			figs = append(figs, v)
		}
	}
	for _, v := range figs {
		if math.IsNaN(v) || v < 0 || v > maxGPUFigure {
			return fmt.Errorf("spec.gpu: figure %v out of 0 to %g", v, float64(maxGPUFigure))
		}
	}
	if s.GPUMemoryUtilization < 0 || s.GPUMemoryUtilization > 1 || s.MemoryEfficiency < 0 || s.ComputeEfficiency < 0 {
		return errors.New("spec: gpu_memory_utilization and efficiencies must be between 0 and 1")
	}
	return nil
}

// NewFile makes the profile file of a fit: the fitted profile (a derived
// one derived again from its fitted spec, so its constants describe it),
// named after its base, and the fit's summary. v may be nil.
func NewFile(f *Fitted, v *Validation, results []string, points int) (*File, error) {
	p := f.Profile
	if p.Spec != nil {
		d, err := sim.Derive(*p.Spec, p.Knobs())
		if err != nil {
			return nil, fmt.Errorf("derive the fitted profile: %w", err)
		}
		d.TokensPerStep, d.ChatTemplateTokens, d.PrefixCaching, d.MaxPrefillChunk = p.TokensPerStep, p.ChatTemplateTokens, p.PrefixCaching, p.MaxPrefillChunk
		p = d
	}
	p.Name = f.Base.Name + "+fit"
	p.Source = fmt.Sprintf("%s fitted by benchci sim fit to %d measured points", f.Base.Name, points)
	info := &FitInfo{Base: f.Base.Name, Results: results, Points: points, Loss: f.Loss}
	for j, q := range f.Params {
		info.Params = append(info.Params, FittedParam{Name: q.Name, Base: q.get(f.Base), Fitted: f.Values[j], Scale: f.Scales[j]})
	}
	if v != nil {
		e := v.MedianAbsError
		info.HeldOutMedianAbsError, info.Folds = &e, v.Folds
		info.Interval = heldOutInterval(v)
	}
	out := &File{Schema: FileSchema, Profile: p, Fit: info}
	// What is written must read back: the same checks as a suite's.
	if _, err := checkProfile(p); err != nil {
		return nil, fmt.Errorf("the fitted profile: %w", err)
	}
	return out, nil
}

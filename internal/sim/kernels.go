package sim

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"math"
	"path"
	"sort"
	"strings"
	"time"
)

// measured holds kernel timings taken on real GPUs by measured/steps.py.
//
//go:embed measured/*-*.json
var measured embed.FS

// KernelTolerance is how far the roofline may miss a measured kernel time.
// It is looser than nothing because the roofline is a max of two terms and
// real kernels near the crossover pay some of both.
const KernelTolerance = 0.25

// kernelRun is one steps.py output file.
type kernelRun struct {
	Card string `json:"card"`
	// Weights is "bf16", or "fp8" for W8A8 layers (absent: bf16).
	Weights string `json:"weights"`
	GPU     string `json:"gpu"`
	Torch   string `json:"torch"`
	// WeightBytes is what the model's tensors take; Seconds the run's time.
	WeightBytes float64 `json:"weight_bytes"`
	Seconds     float64 `json:"seconds"`
	Ceilings    struct {
		CopyGBs      float64 `json:"copy_gbs"`
		MatmulTFLOPS float64 `json:"bf16_matmul_tflops"`
	} `json:"ceilings"`
	Decode []struct {
		Batch       int     `json:"batch"`
		Context     int     `json:"context"`
		FullMs      float64 `json:"full_ms"`
		WeightsMs   float64 `json:"weights_ms"`
		AttentionMs float64 `json:"attention_ms"`
	} `json:"decode"`
	Prefill []struct {
		Tokens int     `json:"tokens"`
		Ms     float64 `json:"ms"`
	} `json:"prefill"`
}

// KernelCheck is one measured kernel figure next to the roofline's.
type KernelCheck struct {
	GPU, Model string // cards
	Weights    string // "bf16" or "fp8"
	Device     string // as the driver named it
	What       string
	Unit       string
	Measured   float64
	Modelled   float64
	// Gated is false for figures shown only for context.
	Gated bool
	Why   string // why a figure is not gated
}

// Error is (modelled - measured) / measured.
func (k KernelCheck) Error() float64 { return (k.Modelled - k.Measured) / k.Measured }

// Within reports whether a gated figure is inside KernelTolerance.
func (k KernelCheck) Within() bool { return !k.Gated || math.Abs(k.Error()) <= KernelTolerance }

// KernelChecks compares the roofline of each measured card pair (one GPU,
// the run's weight dtype, the default efficiency) with the kernel times measured/steps.py
// took: the matrix products of decode steps against the weights term, the
// growth of attention time with context against the KV-cache bandwidth,
// and long prefills against the compute term. The fixed per-step and
// per-sequence costs are left out of the modelled side: they stand for the
// engine's CPU work, which these kernels do not include.
func KernelChecks() ([]KernelCheck, error) {
	files, err := measured.ReadDir("measured")
	if err != nil {
		return nil, err
	}
	// BF16 runs first: theirs are the gated rows.
	sort.SliceStable(files, func(i, j int) bool {
		return !strings.HasSuffix(files[i].Name(), "-fp8.json") && strings.HasSuffix(files[j].Name(), "-fp8.json")
	})
	var out []KernelCheck
	for _, f := range files {
		name := f.Name()
		if !strings.HasSuffix(name, ".json") || strings.HasSuffix(name, ".card.json") {
			continue
		}
		b, err := measured.ReadFile(path.Join("measured", name))
		if err != nil {
			return nil, err
		}
		var k kernelRun
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&k); err != nil {
			return nil, fmt.Errorf("measured/%s: %w", name, err)
		}
		gpuName, _, _ := strings.Cut(name, "-")
		cs, err := k.checks(gpuName)
		if err != nil {
			return nil, fmt.Errorf("measured/%s: %w", name, err)
		}
		out = append(out, cs...)
	}
	return out, nil
}

func (k kernelRun) checks(gpuName string) ([]KernelCheck, error) {
	m, ok := LookupModel(k.Card)
	if !ok {
		return nil, fmt.Errorf("unknown model card %q", k.Card)
	}
	g, ok := LookupGPU(gpuName)
	if !ok {
		return nil, fmt.Errorf("unknown GPU card %q", gpuName)
	}
	r := newRoofline(Spec{Model: m, GPU: g, Weights: k.Weights}.withDefaults())
	busyMs := func(b batch) float64 {
		d := r.step(b) - r.s.StepOverhead - time.Duration(b.seqs)*r.s.SeqOverhead
		return float64(d) / float64(time.Millisecond)
	}
	row := func(what, unit string, meas, model float64) KernelCheck {
		c := KernelCheck{GPU: g.Name, Model: m.Name, Weights: r.s.Weights, Device: k.GPU, What: what, Unit: unit, Measured: meas, Modelled: model, Gated: true}
		if c.Weights == "fp8" && unit == "ms" { // the KV cache and its attention stay BF16: gated
			// vLLM's FP8 layers are CUTLASS kernels with the activation
			// cast fused into the kernel before; steps.py times cuBLASLt
			// through PyTorch, whose efficiency falls with matrix size.
			c.Gated, c.Why = false, "FP8 through cuBLASLt, not an engine's kernels"
		}
		return c
	}
	var out []KernelCheck
	// The matrix products of a decode step: the weights term, or at large
	// batches the compute term. One row per batch size (context 1024).
	for _, d := range k.Decode {
		if d.Context != 1024 {
			continue
		}
		out = append(out, row(fmt.Sprintf("decode matrix products, batch %d", d.Batch), "ms", d.WeightsMs,
			busyMs(batch{seqs: d.Batch, decodes: d.Batch})))
	}
	// Attention's growth with context at one batch size is the KV cache's
	// bandwidth, free of the per-kernel fixed costs that dominate short
	// contexts: the batch with the widest span of contexts, the larger of
	// equals.
	type span struct{ lo, hi int }
	spans := map[int]span{}
	for i, d := range k.Decode {
		s, ok := spans[d.Batch]
		if !ok {
			s = span{i, i}
		}
		if d.Context < k.Decode[s.lo].Context {
			s.lo = i
		}
		if d.Context > k.Decode[s.hi].Context {
			s.hi = i
		}
		spans[d.Batch] = s
	}
	best, width := span{}, 0
	for b, s := range spans {
		w := k.Decode[s.hi].Context - k.Decode[s.lo].Context
		if w > width || (w == width && w > 0 && b > k.Decode[best.lo].Batch) {
			best, width = s, w
		}
	}
	if width > 0 {
		lo, hi := k.Decode[best.lo], k.Decode[best.hi]
		bytes := float64(hi.Batch) * float64(hi.Context-lo.Context) * r.kvBytesPerToken
		out = append(out, row(fmt.Sprintf("KV-cache read, batch %d, context %d→%d", hi.Batch, lo.Context, hi.Context), "GB/s",
			bytes/((hi.AttentionMs-lo.AttentionMs)/1e3)/1e9, r.bandwidth/1e9))
	}
	sort.Slice(k.Prefill, func(i, j int) bool { return k.Prefill[i].Tokens < k.Prefill[j].Tokens })
	for _, p := range k.Prefill {
		n := int64(p.Tokens)
		c := row(fmt.Sprintf("prefill of %d tokens", p.Tokens), "ms", p.Ms, busyMs(batch{seqs: 1, prefill: p.Tokens, prefillAttn: n * (n + 1) / 2}))
		if p.Tokens < 2048 {
			// Run eagerly, a short prefill is bound by kernel launches on
			// the CPU, which engines hide with piecewise CUDA graphs.
			c.Gated, c.Why = false, "launch-bound here"
		}
		out = append(out, c)
	}
	return out, nil
}

// KernelMarkdown renders kernel checks as docs/simulator.md's second table.
func KernelMarkdown(ks []KernelCheck) string {
	var b strings.Builder
	b.WriteString("| GPU (as measured) | model | kernels | measured | roofline | error |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, k := range ks {
		mark := ""
		switch {
		case !k.Gated:
			mark = " (" + k.Why + "; not gated)"
		case !k.Within():
			mark = " ✗"
		}
		fmt.Fprintf(&b, "| %s (%s) | %s, %s | %s | %.2f %s | %.2f %s | %+.0f%%%s |\n",
			k.GPU, k.Device, k.Model, k.Weights, k.What, k.Measured, k.Unit, k.Modelled, k.Unit, 100*k.Error(), mark)
	}
	return b.String()
}

package simfit

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/sim"
)

func fileBytes(t testing.TB, p sim.Profile) []byte {
	t.Helper()
	b, err := json.Marshal(File{Schema: FileSchema, Profile: p})
	must(t, err)
	return b
}

// TestFileRoundTrip writes the file of a fit and reads it back as a suite
// does: the fitted parameters survive, and a derived profile's constants
// are derived again from its spec rather than taken from the file.
func TestFileRoundTrip(t *testing.T) {
	t.Parallel()
	base, err := sim.Resolve("llama-3-8b@h100-sxm")
	must(t, err)
	params, err := ParamsFor(base, nil)
	must(t, err)
	fitted, _ := apply(base, params, []float64{-0.2, 0.1, 0.3})
	f := &Fitted{Base: base, Profile: fitted, Params: params, Values: []float64{0, 0, 0}, Scales: []float64{1, 1, 1}}
	for j, q := range params {
		f.Values[j] = q.get(fitted)
	}
	file, err := NewFile(f, &Validation{Folds: 3, MedianAbsError: 0.04}, []string{"a.json"}, 5)
	must(t, err)
	path := filepath.Join(t.TempDir(), "fitted.json")
	must(t, Write(path, file))
	got, err := ReadProfile(path)
	must(t, err)
	if got.Name != "llama-3-8b@h100-sxm+fit" || !reflect.DeepEqual(*got.Spec, *fitted.Spec) {
		t.Errorf("read back %s with spec %+v, want %+v", got.Name, got.Spec.Efficiency, fitted.Spec.Efficiency)
	}
	// The step constants describe the fitted spec, not the base's.
	if got.StepBase == base.StepBase {
		t.Errorf("step_base %v is the base's: not derived again from the fitted spec", got.StepBase)
	}

	// A forged constant beside the spec is ignored: the spec prices steps.
	forged := got
	forged.StepBase, forged.KVBlocks = time.Nanosecond, 1<<27
	p, err := Parse(fileBytes(t, forged))
	must(t, err)
	if p.Profile.StepBase != got.StepBase || p.Profile.KVBlocks != got.KVBlocks {
		t.Errorf("the file's constants were taken: step_base %v, kv_blocks %d", p.Profile.StepBase, p.Profile.KVBlocks)
	}
}

// TestParseRefuses holds a profile file to the bounds of an engine.
func TestParseRefuses(t *testing.T) {
	t.Parallel()
	tiny, _ := sim.Lookup("tiny")
	derived, err := sim.Resolve("llama-3-8b@h100-sxm")
	must(t, err)
	with := func(f func(p *sim.Profile)) []byte {
		p := tiny
		f(&p)
		return fileBytes(t, p)
	}
	spec := func(f func(s *sim.Spec)) []byte {
		p := derived
		s := *p.Spec
		f(&s)
		p.Spec = &s
		return fileBytes(t, p)
	}
	withInterval := func(iv result.SimInterval) []byte {
		b, err := json.Marshal(File{Schema: FileSchema, Profile: tiny, Fit: &FitInfo{Base: "tiny", Interval: &iv}})
		must(t, err)
		return b
	}
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"not JSON", []byte("{"), "decode"},
		{"an interval upside down", withInterval(result.SimInterval{Level: 0.8, Latency: [2]float64{2, 1}, Throughput: [2]float64{1, 1}}), "fit.interval: bounds 2–1"},
		{"an interval at level 1", withInterval(result.SimInterval{Level: 1, Latency: [2]float64{1, 1}, Throughput: [2]float64{1, 1}}), "fit.interval: level 1"},
		{"an interval's basis with escapes", withInterval(result.SimInterval{Level: 0.8, Latency: [2]float64{1, 1}, Throughput: [2]float64{1, 1}, Basis: "\x1b[2J"}), "fit.interval.basis"},
		{"unknown field", []byte(`{"schema":"benchci.sim-profile/v1","profile":{},"extra":1}`), "unknown field"},
		{"trailing data", append(with(func(*sim.Profile) {}), []byte(" {}")...), "after the profile"},
		{"other schema", []byte(`{"schema":"benchci.result/v2","profile":{}}`), "schema"},
		{"no model", with(func(p *sim.Profile) { p.Model = "" }), "name and a model"},
		{"control characters", with(func(p *sim.Profile) { p.Name = "tiny\x1b[2J" }), "control"},
		{"no sequences", with(func(p *sim.Profile) { p.MaxNumSeqs = 0 }), "max_num_seqs"},
		{"too many sequences", with(func(p *sim.Profile) { p.MaxNumSeqs = 1 << 30 }), "max_num_seqs"},
		{"negative step", with(func(p *sim.Profile) { p.StepBase = -1 }), "step_base"},
		{"free steps", with(func(p *sim.Profile) { p.StepBase, p.DecodePerSeq = 0, 0 }), "no time"},
		{"a cache shorter than a request", with(func(p *sim.Profile) { p.KVBlocks, p.BlockSize = 4, 16 }), "less than one request"},
		{"efficiency above 1", spec(func(s *sim.Spec) { s.MemoryEfficiency = 1.5 }), "memory_efficiency 1.5"},
		{"efficiency of 1e-300", spec(func(s *sim.Spec) { s.ComputeEfficiency = 1e-300 }), "compute_efficiency 1e-300"},
		{"negative overhead", spec(func(s *sim.Spec) { s.StepOverhead = -time.Millisecond }), "step_overhead"},
		{"a model of absurd size", spec(func(s *sim.Spec) { s.Model.Layers = 1 << 30 }), "layers"},
		{"a GPU of absurd bandwidth", spec(func(s *sim.Spec) { s.GPU.BandwidthGBs = 1e300 }), "spec.gpu"},
		{"a cache that holds nothing", spec(func(s *sim.Spec) { s.GPU.MemoryGiB = 1 }), "KV cache"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse(c.data)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one saying %q", err, c.want)
			}
		})
	}
	dir := t.TempDir()
	if _, err := ReadProfile(dir); err == nil || !strings.Contains(err.Error(), "regular") {
		t.Errorf("a directory: %v", err)
	}
	big := filepath.Join(dir, "big.json")
	must(t, os.WriteFile(big, make([]byte, MaxFileBytes+1), 0o644))
	if _, err := ReadProfile(big); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("a file over the bound: %v", err)
	}
}

// FuzzParse feeds the profile file reader anything: it must not panic,
// and what it accepts must serve: a short replay on it ends.
func FuzzParse(f *testing.F) {
	tiny, _ := sim.Lookup("tiny")
	derived, _ := sim.Resolve("mixtral-8x7b@h100-sxm-tp2")
	f.Add(fileBytes(f, tiny))
	f.Add(fileBytes(f, derived))
	if old, err := os.ReadFile(filepath.Join("testdata", "fitted-before", "roofline2-llama-3-8b-at-h100-sxm-trtllm.json")); err == nil {
		f.Add(old)
	}
	f.Add([]byte(`{"schema":"benchci.sim-profile/v1","profile":{"name":"x","model":"m","max_num_seqs":1,"max_batched_tokens":1,"max_model_len":1,"tokens_per_step":1,"step_base":1}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse(data)
		if err != nil {
			return
		}
		p := file.Profile
		if _, err := checkProfile(p); err != nil {
			t.Fatalf("accepted a profile it refuses again: %v", err)
		}
		res := sim.Simulate(p, sim.Run{Concurrency: 2, Requests: 4, Lengths: func(*rand.Rand) (int, int) { return 8, 3 }})
		if res.Steps > 1000 {
			t.Fatalf("4 requests of 8+3 tokens took %d steps", res.Steps)
		}
	})
}

// A profile file written before the step-cost model had versions keeps
// version 1: its fitted efficiencies are priced as they were fitted.
func TestFileBeforeVersionsKeepsRoofline1(t *testing.T) {
	t.Parallel()
	base, err := sim.Resolve("llama-3-8b@h100-sxm")
	must(t, err)
	var raw map[string]any
	must(t, json.Unmarshal(fileBytes(t, base), &raw))
	spec := raw["profile"].(map[string]any)["spec"].(map[string]any)
	delete(spec, "roofline")
	// As an old fit wrote it: version 1's default efficiencies.
	spec["memory_efficiency"], spec["compute_efficiency"] = 0.8, 0.5
	spec["step_overhead"], spec["seq_overhead"] = float64(1800*time.Microsecond), float64(4*time.Microsecond)
	old, err := json.Marshal(raw)
	must(t, err)
	f, err := Parse(old)
	must(t, err)
	if f.Profile.Spec.Roofline != 1 {
		t.Fatalf("roofline %d, want 1", f.Profile.Spec.Roofline)
	}
	s := *base.Spec
	s.Roofline, s.Efficiency = 1, sim.DefaultEfficiency
	v1, err := sim.Derive(s, sim.Knobs{})
	must(t, err)
	if f.Profile.StepBase != v1.StepBase || f.Profile.StepBase == base.StepBase {
		t.Errorf("idle step %v, want version 1's %v (version 2's is %v)", f.Profile.StepBase, v1.StepBase, base.StepBase)
	}
}

// What a file cannot carry, or carries beyond bounds, is refused: a
// hostile file must not set up a replay or a server that never ends.
func TestFileRefusesWhatItCannotCarry(t *testing.T) {
	t.Parallel()
	constant, _ := sim.Lookup("tiny")
	derived, err := sim.Resolve("llama-3-8b@h100-sxm")
	must(t, err)
	for _, c := range []struct {
		name string
		edit func(p *sim.Profile)
		base sim.Profile
		want string
	}{
		{"speculation in a constant file", func(p *sim.Profile) {
			p.Speculative = &sim.Speculative{Method: "eagle", K: 2_000_000_000, Acceptance: 1}
		}, constant, "cannot carry speculative"},
		{"speculation in a derived file", func(p *sim.Profile) { p.Speculative = &sim.Speculative{Method: "eagle", K: 3, Acceptance: 0.7} }, derived, "cannot carry speculative"},
		{"disaggregation", func(p *sim.Profile) { p.Disagg = &sim.Disaggregation{LinkGBs: 50} }, constant, "cannot carry speculative or disaggregated"},
		{"a negative request overhead", func(p *sim.Profile) { p.RequestOverhead = -5 * time.Second }, constant, "request_overhead"},
		{"a request overhead of years", func(p *sim.Profile) { p.RequestOverhead = 1 << 62 }, constant, "request_overhead"},
		{"a negative attention price", func(p *sim.Profile) { p.AttendNsPerPair = -80 }, constant, "attend_ns_per_pair -80"},
		{"an attention price of seconds", func(p *sim.Profile) { p.AttendNsPerPair = 1e9 }, constant, "attend_ns_per_pair 1e+09"},
		{"an attention price on cards", func(p *sim.Profile) { p.AttendNsPerPair = 80 }, derived, "a profile from cards prices it from the model"},
		{"a unified cache on cards", func(p *sim.Profile) { p.UnifiedKV = true }, derived, "a profile from cards prices it from the model"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := c.base
			c.edit(&p)
			if _, err := Parse(fileBytes(t, p)); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err %v, want one with %q", err, c.want)
			}
		})
	}
}

// A fit's file carries the interval of its own held-out predictions,
// throughputs apart from latencies.
func TestHeldOutIntervalFromTheFitsFolds(t *testing.T) {
	t.Parallel()
	v := &Validation{Conditions: 4}
	for i, r := range []float64{0.9, 1.1, 1.0, 1.2} {
		pt := fmt.Sprintf("p%d", i)
		v.Rows = append(v.Rows,
			HeldOut{Point: pt, Figure: FigTTFT, Measured: 100 * r, Predicted: 100},
			HeldOut{Point: pt, Figure: FigThroughput, Measured: 1000 / r, Predicted: 1000})
	}
	iv := heldOutInterval(v)
	if iv == nil || iv.Latency != [2]float64{0.9, 1.2} || math.Abs(iv.Throughput[0]-1/1.2) > 1e-9 || math.Abs(iv.Throughput[1]-1/0.9) > 1e-9 || iv.Level != 0.6 {
		t.Fatalf("interval %+v, want the four points' range at 60%%", iv)
	}
	if err := iv.Verify(); err != nil {
		t.Errorf("the interval a fit writes does not verify: %v", err)
	}
	if iv := heldOutInterval(&Validation{Rows: v.Rows[:2], Conditions: 1}); iv != nil {
		t.Errorf("one point gave an interval: %+v", iv)
	}
	// The four points trials of two conditions: the same range, at the
	// level two points give, not four.
	if iv := heldOutInterval(&Validation{Rows: v.Rows, Conditions: 2}); iv == nil || iv.Latency != [2]float64{0.9, 1.2} || math.Abs(iv.Level-1.0/3) > 1e-9 {
		t.Errorf("trials of two conditions: %+v, want the range at 33%%", iv)
	}
	// A figure the twin could not predict: no interval.
	unpredicted := append(slices.Clone(v.Rows), HeldOut{Point: "p4", Figure: FigTPOT, Measured: 20, Predicted: math.Inf(1)})
	if iv := heldOutInterval(&Validation{Rows: unpredicted, Conditions: 5}); iv != nil {
		t.Errorf("a figure the twin could not predict was left out of the interval: %+v", iv)
	}
	// A queued point 150 times off: no interval, and the file still reads.
	v.Rows[0].Measured = 15000
	if iv := heldOutInterval(v); iv != nil {
		t.Errorf("a ratio of 150 gave an interval a reader refuses: %+v", iv)
	}
}

// A TensorRT-LLM profile fitted under roofline version 2 (testdata: written
// by benchci at 6c58785, before the engine model had a request path)
// replays as it did when it was fitted: without the 5 ms request overhead
// the engine now defaults to, which moved its closed loops' median TTFT at
// 16 clients both ways (this replay's 431 ms to 377 ms; a virtual run of
// 2,000-token prompts, 215 ms to 430 ms): where a request lands against
// the steps decides its wait. A file of version 2 that names one keeps it,
// and a file written now names the default.
func TestFileFittedBeforeRequestPathKeepsNone(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("testdata", "fitted-before", "roofline2-llama-3-8b-at-h100-sxm-trtllm.json"))
	must(t, err)
	f, err := Parse(data)
	must(t, err)
	old := f.Profile
	if old.Spec.Roofline != 2 || old.RequestOverhead != 0 || old.NoChunkedPrefill {
		t.Fatalf("roofline %d, request overhead %v, whole prefills %v: want 2, none, chunked as when it was fitted",
			old.Spec.Roofline, old.RequestOverhead, old.NoChunkedPrefill)
	}
	s := *old.Spec
	s.Roofline, s.RequestOverhead = 0, 0
	now, err := sim.Derive(s, old.Knobs())
	must(t, err)
	if now.RequestOverhead != 5*time.Millisecond {
		t.Fatalf("the same spec now: request overhead %v, want the engine's 5ms", now.RequestOverhead)
	}
	run := sim.Run{Concurrency: 16, Warmup: 32, Requests: 128, Seed: 1, Turnaround: 50 * time.Microsecond,
		Lengths: func(*rand.Rand) (int, int) { return 2005, 100 }}
	ttft := func(p sim.Profile) time.Duration {
		var d []time.Duration
		for _, x := range sim.Simulate(p, run).Samples {
			d = append(d, x.TTFT)
		}
		return sim.Quantile(d, 0.5)
	}
	without := now
	without.RequestOverhead = 0
	got, want, def := ttft(old), ttft(without), ttft(now)
	if got != want || math.Abs(float64(def)/float64(want)-1) < 0.05 {
		t.Errorf("the old file's median TTFT %v, want %v as fitted, at least 5%% from the default's %v", got, want, def)
	}

	var raw map[string]any
	must(t, json.Unmarshal(data, &raw))
	raw["profile"].(map[string]any)["spec"].(map[string]any)["request_overhead"] = float64(2 * time.Millisecond)
	named, err := json.Marshal(raw)
	must(t, err)
	g, err := Parse(named)
	must(t, err)
	if g.Profile.RequestOverhead != 2*time.Millisecond {
		t.Errorf("a version 2 file naming 2ms: request overhead %v", g.Profile.RequestOverhead)
	}

	out := filepath.Join(t.TempDir(), "now.json")
	must(t, Write(out, &File{Schema: FileSchema, Profile: now}))
	back, err := ReadProfile(out)
	must(t, err)
	if back.Spec.Roofline != 4 || back.RequestOverhead != 5*time.Millisecond {
		t.Errorf("written now and read back: roofline %d, request overhead %v; want 4 and 5ms", back.Spec.Roofline, back.RequestOverhead)
	}
}

// A version-2 file fitted on PCIe cards at TP 2 or more before the PCIe
// all-reduce became NCCL's (testdata: written at 4caa57d, a landed build
// before 7c1a22c, whose ring formula its parent 56d6fd4 kept) is marked to replay under the ring it was fitted with;
// one fitted after (f36dd45) is not. Unmarked, the 70B TP 4 file's TTFT
// at one client read 448 ms where it was fitted at 337 ms, and its TPOT
// 36 ms where 49. A mark is written back with the file, and refused where
// it does not belong.
func TestFilePCIeRingMarked(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ file, want string }{
		{"roofline2-pcie-ring-llama-3-8b-at-l40s-tp2.json", sim.PCIeRing},
		{"roofline2-pcie-ring-llama-3-70b-at-l40s-tp4-fp8.json", sim.PCIeRing},
		{"roofline2-pcie-nccl-llama-3-8b-at-l40s-tp2.json", ""},
		{"roofline2-pcie-nccl-llama-3-70b-at-l40s-tp4-fp8.json", ""},
		{"roofline2-qwen2.5-7b-at-l40s.json", ""}, // TP 1: no all-reduce
	} {
		f, err := ReadFile(filepath.Join("testdata", "fitted-before", c.file))
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if got := f.Profile.Spec.PCIeAllReduce; got != c.want {
			t.Errorf("%s: pcie_all_reduce %q, want %q", c.file, got, c.want)
		}
		if c.want == "" {
			continue
		}
		out := filepath.Join(t.TempDir(), c.file)
		must(t, Write(out, f))
		data, err := os.ReadFile(out)
		must(t, err)
		if !strings.Contains(string(data), `"pcie_all_reduce": "ring"`) {
			t.Errorf("%s written back without its mark", c.file)
		}
		back, err := Parse(data)
		must(t, err)
		if back.Profile.StepBase != f.Profile.StepBase {
			t.Errorf("%s written back: idle step %v, was %v", c.file, back.Profile.StepBase, f.Profile.StepBase)
		}
		var raw map[string]any
		must(t, json.Unmarshal(data, &raw))
		raw["profile"].(map[string]any)["spec"].(map[string]any)["roofline"] = 3.0
		bad, err := json.Marshal(raw)
		must(t, err)
		if _, err := Parse(bad); err == nil || !strings.Contains(err.Error(), "pcie_all_reduce") {
			t.Errorf("%s as version 3 with the mark: %v", c.file, err)
		}
	}
}

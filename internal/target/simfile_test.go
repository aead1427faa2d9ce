package target

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/internal/sim"
	"github.com/benchci/benchci/internal/simfit"
)

// writeFitted writes a profile file as benchci sim fit does: a derived
// profile with measured efficiencies, or a constant one with its costs.
func writeFitted(t *testing.T, p sim.Profile) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fitted.json")
	if err := simfit.Write(path, &simfit.File{Schema: simfit.FileSchema, Profile: p}); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSimProfileFile names fitted profile files the ways a suite can:
// as the profile itself, with knob overrides, and as the efficiencies of a
// what-if on other cards.
func TestSimProfileFile(t *testing.T) {
	t.Parallel()
	derived, err := sim.Resolve("llama-3-8b@h100-sxm")
	if err != nil {
		t.Fatal(err)
	}
	fit := *derived.Spec
	fit.MemoryEfficiency, fit.ComputeEfficiency, fit.StepOverhead, fit.SeqOverhead = 0.61, 0.42, 2500*time.Microsecond, 7*time.Microsecond
	derived.Spec, derived.Name = &fit, "llama-3-8b@h100-sxm+fit"
	derivedFile := writeFitted(t, derived)
	constant, _ := sim.Lookup("tiny")
	constant.StepBase, constant.Name = 3*time.Millisecond, "tiny+fit"
	constantFile := writeFitted(t, constant)

	t.Run("the file's profile", func(t *testing.T) {
		p, _, err := SimProfile(&suite.Target{Kind: suite.TargetSim, Profile: "file:" + derivedFile})
		if err != nil {
			t.Fatal(err)
		}
		if p.Name != "llama-3-8b@h100-sxm+fit" || p.Spec.MemoryEfficiency != 0.61 || p.Spec.SeqOverhead != 7*time.Microsecond || p.KVBlocks == 0 {
			t.Errorf("got %s, spec %+v, %d KV blocks", p.Name, p.Spec.Efficiency, p.KVBlocks)
		}
		c, _, err := SimProfile(&suite.Target{Kind: suite.TargetSim, Profile: "file:" + constantFile, Sim: &suite.SimOverrides{MaxNumSeqs: 8}})
		if err != nil {
			t.Fatal(err)
		}
		if c.StepBase != 3*time.Millisecond || c.MaxNumSeqs != 8 {
			t.Errorf("constant: step_base %v, max_num_seqs %d", c.StepBase, c.MaxNumSeqs)
		}
	})
	t.Run("knobs re-derive the KV cache", func(t *testing.T) {
		p, _, err := SimProfile(&suite.Target{Kind: suite.TargetSim, Profile: "file:" + derivedFile, Sim: &suite.SimOverrides{MaxNumSeqs: 512}})
		if err != nil {
			t.Fatal(err)
		}
		plain, _ := simfit.ReadProfile(derivedFile)
		if p.MaxNumSeqs != 512 || p.Spec.MemoryEfficiency != 0.61 || p.KVBlocks >= plain.KVBlocks {
			t.Errorf("max_num_seqs %d, efficiency %v, %d KV blocks (the file's %d: 512 sequences' logits take memory)", p.MaxNumSeqs, p.Spec.MemoryEfficiency, p.KVBlocks, plain.KVBlocks)
		}
	})
	t.Run("a what-if on other cards keeps the fitted engine", func(t *testing.T) {
		p, _, err := SimProfile(&suite.Target{Kind: suite.TargetSim, Spec: &suite.SimSpec{Model: "llama-3-8b", GPU: "h200", TP: 2, Weights: "fp8", Fitted: derivedFile, ComputeEfficiency: 0.5},
			Sim: &suite.SimOverrides{MaxNumSeqs: 512}})
		if err != nil {
			t.Fatal(err)
		}
		s := p.Spec
		// The engine's fitted share of the H100's bandwidth (its ceiling
		// is the default 0.88) is carried to the H200's measured copy
		// (4,258 of 4,800 GB/s); the compute efficiency is the suite's.
		mem := 0.61 * (4258.0 / 4800) / 0.88
		if s.GPU.Name != "h200" || s.TP != 2 || s.Weights != "fp8" || p.MaxNumSeqs != 512 || math.Abs(s.MemoryEfficiency-mem) > 1e-9 ||
			s.StepOverhead != 2500*time.Microsecond || s.SeqOverhead != 7*time.Microsecond || s.ComputeEfficiency != 0.5 {
			t.Errorf("got %s: %+v, max_num_seqs %d", p.Name, s.Efficiency, p.MaxNumSeqs)
		}
		// The efficiencies were fitted under the file's step-cost model.
		fitted, _ := simfit.ReadProfile(derivedFile)
		if s.Roofline != fitted.Spec.Roofline {
			t.Errorf("roofline %d, want the fitted file's %d", s.Roofline, fitted.Spec.Roofline)
		}
	})
	t.Run("an engine model brings its defaults", func(t *testing.T) {
		p, _, err := SimProfile(&suite.Target{Kind: suite.TargetSim, Spec: &suite.SimSpec{Model: "llama-3-8b", GPU: "h200", Engine: "trtllm"}})
		if err != nil {
			t.Fatal(err)
		}
		if p.Spec.Engine != "trtllm" || p.MaxNumSeqs != 2048 || !strings.HasSuffix(p.Name, "-trtllm") {
			t.Errorf("got %s: engine %q, max_num_seqs %d", p.Name, p.Spec.Engine, p.MaxNumSeqs)
		}
	})
	for _, c := range []struct {
		name, field, want string
		target            suite.Target
	}{
		{"missing file", "profile", "no such file", suite.Target{Profile: "file:" + filepath.Join(t.TempDir(), "none.json")}},
		{"step costs on a derived fit", "sim", "prices its steps", suite.Target{Profile: "file:" + derivedFile, Sim: &suite.SimOverrides{StepBase: suite.Duration(time.Millisecond)}}},
		{"a constant fit has no efficiencies", "spec.fitted", "constant profile", suite.Target{Spec: &suite.SimSpec{Model: "llama-3-8b", GPU: "h200", Fitted: constantFile}}},
		{"an unknown engine", "spec.engine", `unknown engine "trt-llm"`, suite.Target{Spec: &suite.SimSpec{Model: "llama-3-8b", GPU: "h200", Engine: "trt-llm"}}},
		{"not a profile file", "profile", "schema", suite.Target{Profile: "file:" + writeFile(t, `{"schema":"benchci.result/v2","profile":{}}`)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.target.Kind = suite.TargetSim
			_, field, err := SimProfile(&c.target)
			if err == nil || field != c.field || !strings.Contains(err.Error(), c.want) {
				t.Errorf("field %q, error %v; want field %q and %q", field, err, c.field, c.want)
			}
		})
	}
}

func writeFile(t *testing.T, s string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "f.json")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A fitted file carried to other cards keeps the request path and prefill
// mode it was fitted with when the suite keeps its engine (files written
// before TensorRT-LLM's request path had none and chunked), and takes the
// named engine's when the suite names another: the request path is not a
// fitted figure. The files are simfit's committed ones from earlier builds.
func TestFittedFileCarriedKeepsItsEngine(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "simfit", "testdata", "fitted-before")
	for _, c := range []struct {
		name, file, engine string
		overhead           time.Duration
		whole              bool
	}{
		{"trtllm fitted before its request path, kept", "roofline2-llama-3-8b-at-h100-sxm-trtllm.json", "", 0, false},
		{"trtllm fitted with its request path named, kept", "roofline2-named-llama-3-8b-at-h100-sxm-trtllm.json", "", 5 * time.Millisecond, true},
		{"trtllm fitted before its request path, as vllm", "roofline2-llama-3-8b-at-h100-sxm-trtllm.json", "vllm", 0, false},
		{"trtllm fitted with its request path named, as vllm", "roofline2-named-llama-3-8b-at-h100-sxm-trtllm.json", "vllm", 0, false},
		{"vllm fitted under version 2, as trtllm", "roofline2-llama-3-8b-at-h100-sxm.json", "trtllm", 5 * time.Millisecond, true},
		{"vllm fitted under version 1, kept", "roofline1-llama-3-8b-at-h100-sxm.json", "", 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, _, err := SimProfile(&suite.Target{Kind: suite.TargetSim, Spec: &suite.SimSpec{Model: "llama-3-8b", GPU: "h200", TP: 1,
				Engine: c.engine, Fitted: filepath.Join(dir, c.file)}})
			if err != nil {
				t.Fatal(err)
			}
			if p.RequestOverhead != c.overhead || p.NoChunkedPrefill != c.whole {
				t.Errorf("request overhead %v, whole prefills %v; want %v, %v", p.RequestOverhead, p.NoChunkedPrefill, c.overhead, c.whole)
			}
		})
	}
}

// A fit priced under the PCIe ring (a version-2 file from before NCCL's
// PCIe all-reduce) carries the ring to other PCIe cards with its version:
// its efficiencies were fitted with it.
func TestFittedFileCarriesItsPCIeRing(t *testing.T) {
	t.Parallel()
	file := filepath.Join("..", "simfit", "testdata", "fitted-before", "roofline2-pcie-ring-llama-3-8b-at-l40s-tp2.json")
	p, _, err := SimProfile(&suite.Target{Kind: suite.TargetSim, Spec: &suite.SimSpec{Model: "llama-3-8b", GPU: "l40s", TP: 4, Fitted: file}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Spec.Roofline != 2 || p.Spec.PCIeAllReduce != sim.PCIeRing {
		t.Errorf("roofline %d, pcie_all_reduce %q; want 2 and the ring", p.Spec.Roofline, p.Spec.PCIeAllReduce)
	}
}

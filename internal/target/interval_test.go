package target

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/internal/sim"
	"github.com/benchci/benchci/internal/simfit"
)

// A profile derived from cards carries sim check's interval into its
// results; a profile the published rows did not calibrate carries none.
func TestSimIntervalOnlyWhereCalibrated(t *testing.T) {
	d := sim.DerivedInterval
	derivedInterval := &result.SimInterval{Level: d.Level, Latency: d.Latency, Throughput: d.Throughput}
	t.Parallel()
	derived, err := sim.Resolve("llama-3-8b@h100-sxm")
	if err != nil {
		t.Fatal(err)
	}
	fitted := writeFitted(t, derived)
	g, _ := sim.LookupGPU("h200")
	h200 := map[string]any{}
	raw, _ := json.Marshal(g)
	if err := json.Unmarshal(raw, &h200); err != nil {
		t.Fatal(err)
	}
	own := &result.SimInterval{Level: 0.6, Latency: [2]float64{0.9, 1.2}, Throughput: [2]float64{0.95, 1.05}, Basis: "benchci sim fit"}
	withInterval := filepath.Join(t.TempDir(), "fitted.json")
	if err := simfit.Write(withInterval, &simfit.File{Schema: simfit.FileSchema, Profile: derived, Fit: &simfit.FitInfo{Base: "x", Interval: own}}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		t    suite.Target
		want *result.SimInterval
	}{
		{"derived by name", suite.Target{Kind: suite.TargetSim, Profile: "llama-3-8b@l40s-fp8"}, derivedInterval},
		{"derived from a spec", suite.Target{Kind: suite.TargetSim, Spec: &suite.SimSpec{Model: "llama-3-8b", GPU: "h200", TP: 1}}, derivedInterval},
		{"a constant profile", suite.Target{Kind: suite.TargetSim, Profile: "llama3-8b-h100"}, nil},
		{"a spec on TensorRT-LLM, which rows ran", suite.Target{Kind: suite.TargetSim, Spec: &suite.SimSpec{Model: "llama-3-8b", GPU: "h200", TP: 1, Engine: "trtllm"}}, derivedInterval},
		{"a spec on SGLang, which no row ran", suite.Target{Kind: suite.TargetSim, Spec: &suite.SimSpec{Model: "llama-3-8b", GPU: "h200", TP: 1, Engine: "sglang"}}, nil},
		{"a spec with efficiencies of its own", suite.Target{Kind: suite.TargetSim, Spec: &suite.SimSpec{Model: "llama-3-8b", GPU: "h200", TP: 1, MemoryEfficiency: 0.5}}, nil},
		{"a spec with a step overhead of its own", suite.Target{Kind: suite.TargetSim, Spec: &suite.SimSpec{Model: "llama-3-8b", GPU: "h200", TP: 1, StepOverhead: suite.Duration(time.Millisecond)}}, nil},
		{"a GPU card written out", suite.Target{Kind: suite.TargetSim, Spec: &suite.SimSpec{Model: "llama-3-8b", GPU: h200, TP: 1}}, nil},
		{"a fitted file without an interval", suite.Target{Kind: suite.TargetSim, Profile: "file:" + fitted}, nil},
		{"a fitted file with its own", suite.Target{Kind: suite.TargetSim, Profile: "file:" + withInterval}, own},
		{"a fitted file with another engine's knobs", suite.Target{Kind: suite.TargetSim, Profile: "file:" + withInterval, Sim: &suite.SimOverrides{MaxNumSeqs: 8}}, nil},
		{"a spec with a fit's efficiencies", suite.Target{Kind: suite.TargetSim, Spec: &suite.SimSpec{Model: "llama-3-8b", GPU: "h200", TP: 1, Fitted: fitted}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, iv, field, err := simProfile(&tt.t)
			if err != nil {
				t.Fatalf("%s: %v", field, err)
			}
			if (iv == nil) != (tt.want == nil) || iv != nil && (iv.Level != tt.want.Level || iv.Latency != tt.want.Latency || iv.Throughput != tt.want.Throughput) {
				t.Fatalf("interval %+v, want %+v", iv, tt.want)
			}
		})
	}
}

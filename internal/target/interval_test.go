package target

import (
	"testing"

	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/internal/sim"
)

// A profile derived from cards carries sim check's interval into its
// results; a profile the published rows did not calibrate carries none.
func TestSimIntervalOnlyWhereCalibrated(t *testing.T) {
	t.Parallel()
	derived, err := sim.Resolve("llama-3-8b@h100-sxm")
	if err != nil {
		t.Fatal(err)
	}
	fitted := writeFitted(t, derived)
	tests := []struct {
		name string
		t    suite.Target
		want bool
	}{
		{"derived by name", suite.Target{Kind: suite.TargetSim, Profile: "llama-3-8b@l40s-fp8"}, true},
		{"derived from a spec", suite.Target{Kind: suite.TargetSim, Spec: &suite.SimSpec{Model: "llama-3-8b", GPU: "h200", TP: 1}}, true},
		{"a constant profile", suite.Target{Kind: suite.TargetSim, Profile: "llama3-8b-h100"}, false},
		{"a fitted file", suite.Target{Kind: suite.TargetSim, Profile: "file:" + fitted}, false},
		{"a spec with a fit's efficiencies", suite.Target{Kind: suite.TargetSim, Spec: &suite.SimSpec{Model: "llama-3-8b", GPU: "h200", TP: 1, Fitted: fitted}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, field, err := SimProfile(&tt.t)
			if err != nil {
				t.Fatalf("%s: %v", field, err)
			}
			iv := simInterval(&tt.t, p)
			if (iv != nil) != tt.want {
				t.Fatalf("interval %+v, want one: %v", iv, tt.want)
			}
			if iv != nil && (iv.Level != sim.DerivedInterval.Level || iv.Latency != sim.DerivedInterval.Latency || iv.Throughput != sim.DerivedInterval.Throughput) {
				t.Errorf("interval %+v, want sim.DerivedInterval's bounds", iv)
			}
		})
	}
}

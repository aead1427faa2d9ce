package suite

import (
	"encoding/json"
	"testing"
	"time"
)

func TestExpand(t *testing.T) {
	s := Default()
	s.Name = "shoot"
	s.Target = Target{Kind: "sim", Profile: "tiny", Sim: &SimOverrides{MaxNumSeqs: 8, StepBase: Duration(time.Millisecond)}}
	s.Request.Extra = map[string]any{"temperature": 0.0}
	s.Cost = &Cost{USDPerHour: 2, GPUs: 1}
	s.Workload.InputTokens = Dist{Kind: DistFixed, Value: 10}
	s.Workload.OutputTokens = Dist{Kind: DistFixed, Value: 5}
	s.Sweep.Kind, s.Sweep.Rates = SweepRate, []float64{4}
	s.Variants = map[string]Variant{
		"plain": {},
		"fp8":   {Sim: &SimOverrides{StepBase: Duration(2 * time.Millisecond)}, Cost: &Cost{USDPerHour: 3, GPUs: 2}},
		"other": {Target: &Target{Kind: "url", URL: "http://127.0.0.1:9"}, Request: &VariantRequest{Model: "m2", Extra: map[string]any{"top_k": 5.0}}},
	}
	s.Order = OrderInterleaved
	got := s.Expand()
	if len(got) != 3 || got[0].Variant != "fp8" || got[1].Variant != "other" || got[2].Variant != "plain" {
		t.Fatalf("expanded %+v", got)
	}
	fp8, other, plain := got[0].Suite, got[1].Suite, got[2].Suite
	if o := fp8.Target.Sim; o.MaxNumSeqs != 8 || o.StepBase != Duration(2*time.Millisecond) || fp8.Cost.USDPerHour != 3 {
		t.Errorf("fp8: sim %+v, cost %+v", o, fp8.Cost)
	}
	if other.Target.Kind != "url" || other.Target.Model != "m2" || other.Request.Extra["top_k"] != 5.0 || other.Request.Extra["temperature"] != 0.0 {
		t.Errorf("other: target %+v, extra %v", other.Target, other.Request.Extra)
	}
	if plain.RunName() != "shoot/plain" || plain.Variants != nil || plain.Order != "" || plain.Cost.USDPerHour != 2 {
		t.Errorf("plain: %q %+v", plain.RunName(), plain)
	}
	// The suite itself is untouched: its sim overrides and extras are
	// not the variants'.
	if s.Target.Sim.StepBase != Duration(time.Millisecond) || len(s.Request.Extra) != 1 {
		t.Errorf("the suite changed: %+v, %v", s.Target.Sim, s.Request.Extra)
	}
	// Every variant sends what the suite sends: one workload hash.
	if WorkloadHash(fp8) != WorkloadHash(plain) {
		t.Error("variants that change only the target differ in workload hash")
	}
	// A variant's recorded definition decodes again (the gate reads its
	// tolerances from it).
	def, _ := json.Marshal(fp8)
	back, err := Decode(def)
	if err != nil || back.RunName() != "shoot/fp8" {
		t.Errorf("decode the variant's definition: %v", err)
	}
	if one := (&Suite{Name: "solo"}).Expand(); len(one) != 1 || one[0].Variant != "" || one[0].Suite.RunName() != "solo" {
		t.Errorf("a suite without variants expands to %+v", one)
	}
}

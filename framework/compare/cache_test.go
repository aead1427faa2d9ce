package compare

import (
	"encoding/json"
	"strings"
	"testing"
)

// A server warmed by an earlier run served this run's unique prompts from
// its prefix cache: TTFT fell, and the point is not comparable, never an
// improvement. Shared-prefix workloads, and sides with no hit rate, are
// judged as before.
func TestWarmCacheIsNotAnImprovement(t *testing.T) {
	t.Parallel()
	setup := func(prompts string, baseHit, candHit float64) *Report {
		base := build(t, spec{labels: []string{"rate=1"}, trials: 1, n: 400, ttft: 100, scale: 1, seed: 1})
		cand := build(t, spec{labels: []string{"rate=1"}, trials: 1, n: 400, ttft: 100, scale: 0.4, seed: 2})
		def, _ := json.Marshal(map[string]any{"workload": map[string]any{"prompts": map[string]string{"kind": prompts}}})
		base.Suite.Definition, cand.Suite.Definition = def, def
		if baseHit >= 0 {
			base.Points[0].Server = map[string]float64{"prefix_cache_hit_rate": baseHit}
			cand.Points[0].Server = map[string]float64{"prefix_cache_hit_rate": candHit}
		}
		r, err := Compare(base, cand, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := setup("synthetic", 0.02, 0.97)
	if v := verdicts(r, "*")["rate=1"]; v != Inconclusive || r.Count(Improvement) != 0 {
		t.Fatalf("warm candidate: %v, %d improvements; want inconclusive", v, r.Count(Improvement))
	}
	for _, row := range r.Rows {
		if row.Metric == "*" && (!strings.Contains(row.Test, "cache state differs") || !strings.Contains(row.Test, "97%")) {
			t.Errorf("the reason: %q", row.Test)
		}
	}
	for _, tc := range []struct {
		name             string
		prompts          string
		baseHit, candHit float64
	}{
		{"shared prefixes imply hits", "shared_prefix", 0.02, 0.97},
		{"both cold", "synthetic", 0.02, 0.05},
		{"no hit rate recorded", "synthetic", -1, 0},
	} {
		r := setup(tc.prompts, tc.baseHit, tc.candHit)
		if r.Count(Improvement) == 0 || r.Count(Inconclusive) != 0 {
			t.Errorf("%s: %d improvements, %d inconclusive; want the faster TTFT judged", tc.name, r.Count(Improvement), r.Count(Inconclusive))
		}
	}
}

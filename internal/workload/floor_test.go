package workload

import (
	"testing"

	"github.com/benchci/benchci/framework/suite"
)

// ShareBelow counts the requests the generator draws below the floor:
// exactly those of the sequence every point sends.
func TestShareBelow(t *testing.T) {
	t.Parallel()
	uniform := suite.Dist{Kind: suite.DistUniform, Min: 16, Max: 112}
	synthetic := suite.Prompts{Kind: suite.PromptSynthetic}
	for _, tc := range []struct {
		name  string
		w     suite.Workload
		floor int
		ok    bool
		// lo and hi bound the share: uniform 16-112 has 31 of its 97
		// values under 47, 11 under 27.
		lo, hi float64
	}{
		{"reaches below a 46-token template", suite.Workload{InputTokens: uniform, Prompts: synthetic, Seed: 3}, 47, true, 0.28, 0.36},
		{"all below", suite.Workload{InputTokens: suite.Dist{Kind: suite.DistFixed, Value: 32}, Prompts: synthetic}, 47, true, 1, 1},
		{"none below", suite.Workload{InputTokens: suite.Dist{Kind: suite.DistFixed, Value: 128}, Prompts: synthetic}, 47, true, 0, 0},
		{"a shared prefix counts", suite.Workload{InputTokens: uniform, Prompts: suite.Prompts{Kind: suite.PromptSharedPrefix, Prefixes: 2, PrefixTokens: 20}, Seed: 3}, 47, true, 0.08, 0.15},
		{"a dataset sets its own lengths", suite.Workload{InputTokens: uniform, Prompts: suite.Prompts{Kind: suite.PromptJSONL, Path: "x.jsonl"}}, 47, false, 0, 0},
		{"a trace's lengths", suite.Workload{InputTokens: uniform, Prompts: synthetic, Arrival: suite.Arrival{Kind: suite.ArrivalTrace}}, 47, false, 0, 0},
		{"no template", suite.Workload{InputTokens: uniform, Prompts: synthetic}, 1, false, 0, 0},
	} {
		const n = 2000
		tc.w.OutputTokens = suite.Dist{Kind: suite.DistFixed, Value: 8}
		share, ok, err := ShareBelow(tc.w, tc.floor, n)
		if err != nil || ok != tc.ok {
			t.Errorf("%s: share %v, ok %v, %v; want ok %v", tc.name, share, ok, err, tc.ok)
			continue
		}
		if !ok {
			continue
		}
		g, err := NewGenerator(tc.w, Sources{})
		if err != nil {
			t.Fatal(err)
		}
		below := 0
		for range n {
			if g.Next().InputTokens < tc.floor {
				below++
			}
		}
		if want := float64(below) / n; share != want || share < tc.lo || share > tc.hi {
			t.Errorf("%s: share %v, want %v (in [%v, %v]): %d of the generator's first %d requests ask for under %d tokens", tc.name, share, want, tc.lo, tc.hi, below, n, tc.floor)
		}
	}
}

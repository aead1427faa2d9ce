package sim

import (
	"fmt"
	"math"
	"testing"
)

// ROCm's latency table (srcROCm) holds 32 batches: batch 1 to 128 at 128
// and 2,048 prompt tokens, 2,048 out, for 70B and 405B. References hold
// four of them, and MI300X's seq_layer_us is fitted on those; the other
// 28, never fitted on, check the form: a latency benchmark's repeated
// prompts (Reference.RepeatedPrompts) and a cost per sequence and layer.
// They share the four's source and harness, so they are not held out.
func TestROCmLatencySweep(t *testing.T) {
	t.Parallel()
	published := map[string][8]float64{ // seconds, batch 1, 2, 4, ..., 128
		"llama-3-70b 128":     {17.236, 18.057, 18.450, 19.677, 22.072, 24.932, 33.287, 46.484},
		"llama-3-70b 2048":    {17.500, 18.055, 18.858, 20.161, 22.347, 25.966, 35.324, 52.394},
		"llama-3.1-405b 128":  {48.453, 49.268, 51.136, 54.226, 57.274, 68.901, 88.631, 117.027},
		"llama-3.1-405b 2048": {48.362, 49.121, 52.347, 54.471, 57.841, 70.538, 91.452, 125.471},
	}
	var rows []Reference
	for key, row := range published {
		var model string
		var in int
		if _, err := fmt.Sscanf(key, "%s %d", &model, &in); err != nil {
			t.Fatal(err)
		}
		for i, s := range row {
			bs := 1 << i
			rows = append(rows, Reference{Test: fmt.Sprintf("%s, batch %d", key, bs), Engine: "vLLM 0.10 (ROCm)", Model: model, GPU: "mi300x", TP: 8, Weights: "fp8",
				Concurrency: bs, Input: in, Output: 2048, Requests: bs, E2EMs: 1000 * s, Source: srcROCm, RepeatedPrompts: true})
		}
	}
	cs, err := Check(rows)
	if err != nil {
		t.Fatal(err)
	}
	var errs []float64
	for _, c := range cs {
		e := c.Errors["e2e"]
		errs = append(errs, math.Abs(e))
		if math.Abs(e) > 0.2 {
			t.Errorf("%s: e2e %+.0f%% (published %.1f s), want within 20%%", c.Test, 100*e, c.E2EMs/1000)
		}
	}
	if m := medianOf(errs); m > 0.08 {
		t.Errorf("median |e2e error| %.1f%% over ROCm's 32 batches, want at most 8%%", 100*m)
	} else {
		t.Logf("median |e2e error| %.1f%% over ROCm's 32 batches", 100*m)
	}
}

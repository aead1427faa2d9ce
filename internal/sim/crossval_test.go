package sim

import (
	"math"
	"os"
	"strings"
	"testing"
)

// A fold predicts its source's rows with an overhead fitted without them:
// changing what the source published moves the in-sample fit and that
// source's held-out error, never the overhead its fold was given.
func TestCrossValidationHoldsOutItsSource(t *testing.T) {
	t.Parallel()
	var refs []Reference
	for _, r := range References {
		if r.Source == srcVLLMH100 || r.Source == srcVLLMH200 || r.Source == srcVLLMA100 {
			refs = append(refs, r)
		}
	}
	cv, err := CrossValidate(refs)
	if err != nil {
		t.Fatal(err)
	}
	slower := make([]Reference, len(refs))
	for i, r := range refs {
		if r.Source == srcVLLMH200 {
			r.E2EMs *= 1.5 // a run half again as slow
		}
		slower[i] = r
	}
	cv2, err := CrossValidate(slower)
	if err != nil {
		t.Fatal(err)
	}
	if len(cv.Folds) != 3 || len(cv2.Folds) != 3 || len(cv2.Checked) != len(refs) {
		t.Fatalf("3 sources, %d rows: got %d and %d folds, %d rows predicted", len(refs), len(cv.Folds), len(cv2.Folds), len(cv2.Checked))
	}
	for i, f := range cv2.Folds {
		if f.Source == srcVLLMH200 {
			if f.Overhead != cv.Folds[i].Overhead {
				t.Errorf("H200 held out: its fold's overhead moved from %v to %v with its own figures", cv.Folds[i].Overhead, f.Overhead)
			}
			if f.HeldOut.MedianAbsErr < cv.Folds[i].HeldOut.MedianAbsErr+0.2 {
				t.Errorf("H200 held out: median error %.0f%% with its figures 1.5x slower, %.0f%% before: the fold saw them",
					100*f.HeldOut.MedianAbsErr, 100*cv.Folds[i].HeldOut.MedianAbsErr)
			}
			if f.BeyondHeldOut == 0 {
				t.Errorf("H200 rows 1.5x slower: none of its figures beyond ±25%% held out")
			}
		}
	}
	if cv2.InSample["vllm"] <= cv.InSample["vllm"] {
		t.Errorf("in-sample overhead %v with a slower source, %v without: the fit on all rows does not see them", cv2.InSample["vllm"], cv.InSample["vllm"])
	}
	// Without the 8xH100 rows the slower H200 rows pull the overhead up,
	// and the H100 rows, held out, miss: what they alone kept right.
	if !strings.Contains(cv2.Markdown(), "8xH100 run alone taught the model the vllm step overhead") {
		t.Errorf("a source whose figures miss only held out is not named:\n%s", cv2.Markdown())
	}
}

// The engines' step overheads and the cards' seq_layer_us are what
// CrossValidate fits on every row,
// the rows held out by source meet issue 41's goals where this build
// does (a median |error| of at most 8%, and promised/published 0.97-1.03:
// it is 1.00, the bound 1.035; not every figure within 25%: the
// known misses count), and docs/simulator.md shows the table.
func TestEngineOverheadsAreTheFit(t *testing.T) {
	t.Parallel()
	cv, err := CrossValidate(References)
	if err != nil {
		t.Fatal(err)
	}
	for name, d := range cv.InSample {
		e, ok := LookupEngine(name)
		if !ok {
			t.Fatalf("engine %q fitted but not known", name)
		}
		if math.Abs(float64(e.StepOverhead-d)) > 0.01*float64(d) {
			t.Errorf("engine %s: step overhead %v, but its rows fit %v: set it (Engines)", name, e.StepOverhead, d)
		}
	}
	if len(cv.SeqLayer) == 0 {
		t.Error("no card's SeqLayerUs was fitted (MI300X's is)")
	}
	for name, us := range cv.SeqLayer {
		g, ok := LookupGPU(name)
		if !ok || math.Abs(g.SeqLayerUs-us) > 0.01*us {
			t.Errorf("card %s: seq_layer_us %v, but its rows fit %v: set it (gpuCards)", name, g.SeqLayerUs, us)
		}
	}
	a := Summarize(cv.Checked, nil)
	t.Logf("held out by source: %s (median promised/published %.4f)", cv.Summary(), a.MedianRatio)
	if a.Figures != 99 || a.MedianAbsErr > 0.08 || a.MedianRatio < 0.97 || a.MedianRatio > 1.035 {
		t.Errorf("held out by source: %s; want 99 figures, median |error| at most 8%%, promised/published 0.97-1.035", cv.Summary())
	}
	doc, err := os.ReadFile("../../docs/simulator.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), cv.Markdown()) {
		t.Errorf("docs/simulator.md's cross-validation is stale: regenerate it with `go run ./cmd/benchci sim check --markdown`")
	}
	checkOpenLoopFigures(t, cv)
	if !strings.Contains(string(doc), ScalingMarkdown(TPScaling(cv.Checked))) {
		t.Errorf("docs/simulator.md's tensor-parallel scaling is stale: regenerate it with `go run ./cmd/benchci sim check --markdown`")
	}
}

// checkOpenLoopFigures holds the open loops at moderate rates, held out
// by source (their request overhead was read off two of their 48 rows:
// Engines), to issue 41's goal for TTFT and to where TPOT and throughput
// are, each promising 0.95 to 1.10 times the published (median).
func checkOpenLoopFigures(t *testing.T, cv CrossValidation) {
	t.Helper()
	open, err := CheckOpenLoop(cv, OpenLoopReferences)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("open loops: %s", OpenLoopSummary(open))
	// TTFT's bound is issue 41's goal; the request path (TensorRT-LLM's
	// RequestOverhead) and its unchunked prefill brought it from 21%.
	for _, want := range []struct {
		fig string
		hi  float64 // the median |error|'s bound
	}{{"ttft", 0.12}, {"tpot", 0.12}, {"throughput", 0.05}} {
		a := Summarize(OnlyFigure(open, want.fig), nil)
		if a.Figures < 40 || a.MedianAbsErr > want.hi || a.MedianRatio < 0.95 || a.MedianRatio > 1.1 {
			t.Errorf("open loops' %s: %s; want a median |error| of at most %.0f%%, promised/published 0.95-1.10", want.fig, a, 100*want.hi)
		}
	}
}

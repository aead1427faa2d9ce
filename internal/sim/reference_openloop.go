package sim

import (
	"fmt"
	"maps"
	"strings"
	"time"
)

// noteOpenLoop says what TensorRT-LLM's serving table leaves unsaid.
const noteOpenLoop = "500 requests at the stated QPS, at Poisson arrivals as benchmark_serving.py draws them; TTFT and ITL are means, output tokens/s over the run, its drain included; KV cache BF16 inferred; " + noteServingClient + "; " +
	"past the knee where the achieved rate fell below 3/4 of the offered"

// OpenLoopReferences are published rows of an open loop at moderate
// rates: TensorRT-LLM 0.14's serving table at 2 to 16 requests/s, the
// rows whose QPS INF column References holds. sim check scores them
// apart, held out by source, because the issue that asked for them set
// their own goal (TTFT's median |error| at most 12%), and so as not to
// let 48 rows of one source outweigh the others in the headline.
var OpenLoopReferences = []Reference{
	{Test: "LLaMA 3.1 70B, QPS 2", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-70b", GPU: "h100-sxm", TP: 4, Input: 467, Output: 256, Requests: 500, Rate: 2,
		TTFTMs: 62, TPOTMs: 21, OutputPerSec: 498, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 70B, QPS 4", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-70b", GPU: "h100-sxm", TP: 4, Input: 467, Output: 256, Requests: 500, Rate: 4,
		TTFTMs: 68, TPOTMs: 24, OutputPerSec: 973, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 70B, QPS 8", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-70b", GPU: "h100-sxm", TP: 4, Input: 467, Output: 256, Requests: 500, Rate: 8,
		TTFTMs: 92, TPOTMs: 32, OutputPerSec: 1860, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 70B, QPS 16", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-70b", GPU: "h100-sxm", TP: 4, Input: 467, Output: 256, Requests: 500, Rate: 16,
		TTFTMs: 175, TPOTMs: 66, OutputPerSec: 3164, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 70B, QPS 2", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-70b", GPU: "h100-sxm", TP: 4, Input: 467, Output: 16, Requests: 500, Rate: 2,
		TTFTMs: 53, TPOTMs: 18, OutputPerSec: 28, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 70B, QPS 4", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-70b", GPU: "h100-sxm", TP: 4, Input: 467, Output: 16, Requests: 500, Rate: 4,
		TTFTMs: 58, TPOTMs: 20, OutputPerSec: 63, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 70B, QPS 8", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-70b", GPU: "h100-sxm", TP: 4, Input: 467, Output: 16, Requests: 500, Rate: 8,
		TTFTMs: 71, TPOTMs: 24, OutputPerSec: 126, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 70B, QPS 16", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-70b", GPU: "h100-sxm", TP: 4, Input: 467, Output: 16, Requests: 500, Rate: 16,
		TTFTMs: 109, TPOTMs: 38, OutputPerSec: 248, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 70B, QPS 2", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-70b", GPU: "h100-sxm", TP: 4, Input: 202, Output: 214, Dataset: datasetShareGPT, Requests: 500, Rate: 2,
		TTFTMs: 48, TPOTMs: 20, OutputPerSec: 401, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 70B, QPS 4", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-70b", GPU: "h100-sxm", TP: 4, Input: 202, Output: 214, Dataset: datasetShareGPT, Requests: 500, Rate: 4,
		TTFTMs: 51, TPOTMs: 22, OutputPerSec: 771, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 70B, QPS 8", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-70b", GPU: "h100-sxm", TP: 4, Input: 202, Output: 214, Dataset: datasetShareGPT, Requests: 500, Rate: 8,
		TTFTMs: 57, TPOTMs: 25, OutputPerSec: 1390, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 70B, QPS 16", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-70b", GPU: "h100-sxm", TP: 4, Input: 202, Output: 214, Dataset: datasetShareGPT, Requests: 500, Rate: 16,
		TTFTMs: 74, TPOTMs: 32, OutputPerSec: 2245, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop, PastKnee: true},
	{Test: "LLaMA 3.1 8B, QPS 2", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-8b", GPU: "h100-sxm", TP: 1, Input: 467, Output: 256, Requests: 500, Rate: 2,
		TTFTMs: 23, TPOTMs: 8, OutputPerSec: 504, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 8B, QPS 4", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-8b", GPU: "h100-sxm", TP: 1, Input: 467, Output: 256, Requests: 500, Rate: 4,
		TTFTMs: 24, TPOTMs: 9, OutputPerSec: 929, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 8B, QPS 8", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-8b", GPU: "h100-sxm", TP: 1, Input: 467, Output: 256, Requests: 500, Rate: 8,
		TTFTMs: 26, TPOTMs: 9, OutputPerSec: 1959, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 8B, QPS 16", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-8b", GPU: "h100-sxm", TP: 1, Input: 467, Output: 256, Requests: 500, Rate: 16,
		TTFTMs: 30, TPOTMs: 11, OutputPerSec: 3765, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 8B, QPS 2", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-8b", GPU: "h100-sxm", TP: 1, Input: 467, Output: 16, Requests: 500, Rate: 2,
		TTFTMs: 19, TPOTMs: 7, OutputPerSec: 32, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 8B, QPS 4", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-8b", GPU: "h100-sxm", TP: 1, Input: 467, Output: 16, Requests: 500, Rate: 4,
		TTFTMs: 20, TPOTMs: 7, OutputPerSec: 63, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 8B, QPS 8", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-8b", GPU: "h100-sxm", TP: 1, Input: 467, Output: 16, Requests: 500, Rate: 8,
		TTFTMs: 22, TPOTMs: 7, OutputPerSec: 126, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 8B, QPS 16", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-8b", GPU: "h100-sxm", TP: 1, Input: 467, Output: 16, Requests: 500, Rate: 16,
		TTFTMs: 24, TPOTMs: 8, OutputPerSec: 251, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 8B, QPS 2", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-8b", GPU: "h100-sxm", TP: 1, Input: 202, Output: 214, Dataset: datasetShareGPT, Requests: 500, Rate: 2,
		TTFTMs: 19, TPOTMs: 7, OutputPerSec: 416, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 8B, QPS 4", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-8b", GPU: "h100-sxm", TP: 1, Input: 202, Output: 214, Dataset: datasetShareGPT, Requests: 500, Rate: 4,
		TTFTMs: 20, TPOTMs: 8, OutputPerSec: 816, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 8B, QPS 8", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-8b", GPU: "h100-sxm", TP: 1, Input: 202, Output: 214, Dataset: datasetShareGPT, Requests: 500, Rate: 8,
		TTFTMs: 21, TPOTMs: 9, OutputPerSec: 1568, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 8B, QPS 16", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-8b", GPU: "h100-sxm", TP: 1, Input: 202, Output: 214, Dataset: datasetShareGPT, Requests: 500, Rate: 16,
		TTFTMs: 23, TPOTMs: 10, OutputPerSec: 2879, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 70B, QPS 2", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-70b", GPU: "h200", TP: 4, Input: 467, Output: 256, Requests: 500, Rate: 2,
		TTFTMs: 58, TPOTMs: 18, OutputPerSec: 499, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 70B, QPS 4", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-70b", GPU: "h200", TP: 4, Input: 467, Output: 256, Requests: 500, Rate: 4,
		TTFTMs: 63, TPOTMs: 20, OutputPerSec: 980, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 70B, QPS 8", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-70b", GPU: "h200", TP: 4, Input: 467, Output: 256, Requests: 500, Rate: 8,
		TTFTMs: 84, TPOTMs: 27, OutputPerSec: 1886, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 70B, QPS 16", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-70b", GPU: "h200", TP: 4, Input: 467, Output: 256, Requests: 500, Rate: 16,
		TTFTMs: 165, TPOTMs: 60, OutputPerSec: 3264, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 70B, QPS 2", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-70b", GPU: "h200", TP: 4, Input: 467, Output: 16, Requests: 500, Rate: 2,
		TTFTMs: 50, TPOTMs: 15, OutputPerSec: 32, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 70B, QPS 4", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-70b", GPU: "h200", TP: 4, Input: 467, Output: 16, Requests: 500, Rate: 4,
		TTFTMs: 55, TPOTMs: 16, OutputPerSec: 63, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 70B, QPS 8", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-70b", GPU: "h200", TP: 4, Input: 467, Output: 16, Requests: 500, Rate: 8,
		TTFTMs: 67, TPOTMs: 20, OutputPerSec: 126, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 70B, QPS 16", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-70b", GPU: "h200", TP: 4, Input: 467, Output: 16, Requests: 500, Rate: 16,
		TTFTMs: 103, TPOTMs: 33, OutputPerSec: 248, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 70B, QPS 2", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-70b", GPU: "h200", TP: 4, Input: 202, Output: 214, Dataset: datasetShareGPT, Requests: 500, Rate: 2,
		TTFTMs: 43, TPOTMs: 17, OutputPerSec: 408, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 70B, QPS 4", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-70b", GPU: "h200", TP: 4, Input: 202, Output: 214, Dataset: datasetShareGPT, Requests: 500, Rate: 4,
		TTFTMs: 46, TPOTMs: 18, OutputPerSec: 784, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 70B, QPS 8", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-70b", GPU: "h200", TP: 4, Input: 202, Output: 214, Dataset: datasetShareGPT, Requests: 500, Rate: 8,
		TTFTMs: 51, TPOTMs: 21, OutputPerSec: 1438, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 70B, QPS 16", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-70b", GPU: "h200", TP: 4, Input: 202, Output: 214, Dataset: datasetShareGPT, Requests: 500, Rate: 16,
		TTFTMs: 67, TPOTMs: 28, OutputPerSec: 2386, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop, PastKnee: true},
	{Test: "LLaMA 3.1 8B, QPS 2", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-8b", GPU: "h200", TP: 1, Input: 467, Output: 256, Requests: 500, Rate: 2,
		TTFTMs: 21, TPOTMs: 6, OutputPerSec: 504, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 8B, QPS 4", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-8b", GPU: "h200", TP: 1, Input: 467, Output: 256, Requests: 500, Rate: 4,
		TTFTMs: 23, TPOTMs: 7, OutputPerSec: 1001, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 8B, QPS 8", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-8b", GPU: "h200", TP: 1, Input: 467, Output: 256, Requests: 500, Rate: 8,
		TTFTMs: 24, TPOTMs: 7, OutputPerSec: 1971, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 8B, QPS 16", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-8b", GPU: "h200", TP: 1, Input: 467, Output: 256, Requests: 500, Rate: 16,
		TTFTMs: 27, TPOTMs: 9, OutputPerSec: 3809, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 8B, QPS 2", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-8b", GPU: "h200", TP: 1, Input: 467, Output: 16, Requests: 500, Rate: 2,
		TTFTMs: 18, TPOTMs: 5, OutputPerSec: 32, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 8B, QPS 4", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-8b", GPU: "h200", TP: 1, Input: 467, Output: 16, Requests: 500, Rate: 4,
		TTFTMs: 19, TPOTMs: 6, OutputPerSec: 63, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 8B, QPS 8", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-8b", GPU: "h200", TP: 1, Input: 467, Output: 16, Requests: 500, Rate: 8,
		TTFTMs: 20, TPOTMs: 6, OutputPerSec: 126, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 8B, QPS 16", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-8b", GPU: "h200", TP: 1, Input: 467, Output: 16, Requests: 500, Rate: 16,
		TTFTMs: 22, TPOTMs: 7, OutputPerSec: 250, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 8B, QPS 2", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-8b", GPU: "h200", TP: 1, Input: 202, Output: 214, Dataset: datasetShareGPT, Requests: 500, Rate: 2,
		TTFTMs: 17, TPOTMs: 6, OutputPerSec: 418, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 8B, QPS 4", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-8b", GPU: "h200", TP: 1, Input: 202, Output: 214, Dataset: datasetShareGPT, Requests: 500, Rate: 4,
		TTFTMs: 18, TPOTMs: 6, OutputPerSec: 822, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 8B, QPS 8", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-8b", GPU: "h200", TP: 1, Input: 202, Output: 214, Dataset: datasetShareGPT, Requests: 500, Rate: 8,
		TTFTMs: 19, TPOTMs: 7, OutputPerSec: 1589, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
	{Test: "LLaMA 3.1 8B, QPS 16", Engine: "TensorRT-LLM 0.14", EngineModel: "trtllm", Model: "llama-3-8b", GPU: "h200", TP: 1, Input: 202, Output: 214, Dataset: datasetShareGPT, Requests: 500, Rate: 16,
		TTFTMs: 20, TPOTMs: 8, OutputPerSec: 2969, Source: srcTRTOnline, BenchmarkServing: true, Note: noteOpenLoop},
}

// CheckOpenLoop replays the open-loop rows, each with the step overhead
// its source's fold fitted without it (cv's held-out constants): a
// prediction, as the headline's rows are.
func CheckOpenLoop(cv CrossValidation, refs []Reference) ([]Checked, error) {
	out := make([]Checked, 0, len(refs))
	bySource := map[string][]Reference{}
	var order []string
	for _, r := range refs {
		if _, ok := bySource[r.Source]; !ok {
			order = append(order, r.Source)
		}
		bySource[r.Source] = append(bySource[r.Source], r)
	}
	for _, src := range order {
		c := constants{overhead: map[string]time.Duration{}, seqLayer: map[string]float64{}}
		maps.Copy(c.overhead, cv.InSample)
		maps.Copy(c.seqLayer, cv.SeqLayer)
		for _, f := range cv.Folds {
			if f.Source == src {
				c.overhead[f.Engine] = f.Overhead
				maps.Copy(c.seqLayer, f.SeqLayer)
			}
		}
		cs, err := checkWith(bySource[src], rooflineVersion, c)
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
	}
	return out, nil
}

// OnlyFigure is the rows with every published figure but name cleared
// ("ttft", "tpot" or "throughput"): Figures lists what a row publishes, so
// Summarize then sums up that figure alone.
func OnlyFigure(cs []Checked, name string) []Checked {
	out := make([]Checked, 0, len(cs))
	for _, c := range cs {
		d := c
		d.E2EMs = 0
		if name != "ttft" {
			d.TTFTMs = 0
		}
		if name != "tpot" {
			d.TPOTMs = 0
		}
		if name != "throughput" {
			d.OutputPerSec = 0
		}
		out = append(out, d)
	}
	return out
}

// OpenLoopSummary sums up the open-loop rows by figure, TTFT first.
func OpenLoopSummary(cs []Checked) string {
	var b strings.Builder
	for _, name := range []string{"ttft", "tpot", "throughput"} {
		a := Summarize(OnlyFigure(cs, name), nil)
		if a.Figures == 0 {
			continue
		}
		fmt.Fprintf(&b, "%s: %d figures, median |error| %.0f%%, median promised/published %.2f, worst %+.0f%% (%s); ", name, a.Figures, 100*a.MedianAbsErr, a.MedianRatio, 100*a.Worst.Error, a.WorstRow)
	}
	return strings.TrimSuffix(b.String(), "; ")
}

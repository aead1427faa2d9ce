package result

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/benchci/benchci/internal/inputfile"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// committedResult is the result inside the committed quickstart baseline:
// a complete run this version wrote.
func committedResult(t *testing.T) map[string]any {
	t.Helper()
	data, err := os.ReadFile("testdata/quickstart-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	var b struct {
		Result map[string]any `json:"result"`
	}
	if err := json.Unmarshal(data, &b); err != nil {
		t.Fatal(err)
	}
	return b.Result
}

func point0(doc map[string]any) map[string]any {
	return doc["points"].([]any)[0].(map[string]any)
}

func sub(m map[string]any, k string) map[string]any { return m[k].(map[string]any) }

// Each edit an attack made to a results file (a shard, a baseline's
// result) is refused by Parse, naming what does not add up.
func TestVerifyRefusesForgedFigures(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(doc map[string]any)
		want string
	}{
		{"completed inflated with throughputs x1000 (F2)", func(doc map[string]any) {
			p := point0(doc)
			sub(p, "requests")["completed"] = 100000
			sub(p, "requests")["sent"] = 100000
			for k, v := range sub(p, "throughput") {
				sub(p, "throughput")[k] = v.(float64) * 1000
			}
		}, "e2e histogram holds 11 answers"},
		{"throughput x1000 alone", func(doc map[string]any) {
			tp := sub(point0(doc), "throughput")
			tp["requests"] = tp["requests"].(float64) * 1000
		}, "request throughput"},
		{"output throughput x1000", func(doc map[string]any) {
			tp := sub(point0(doc), "throughput")
			tp["output_tokens"] = tp["output_tokens"].(float64) * 1000
			tp["total_tokens"] = tp["total_tokens"].(float64) * 1000
		}, "output throughput"},
		{"negative failures (F3)", func(doc map[string]any) {
			r := sub(point0(doc), "requests")
			r["failed"] = -50
			r["sent"] = r["completed"].(float64) - 50
			r["completed"] = r["completed"].(float64) + 100
			r["sent"] = r["completed"].(float64) - 50
			r["error_rate"] = -50 / r["sent"].(float64)
		}, "failed is -50"},
		{"error rate edited", func(doc map[string]any) {
			sub(point0(doc), "requests")["error_rate"] = 0.5
		}, "error rate 0.5"},
		{"p99 edited", func(doc map[string]any) {
			sub(sub(point0(doc), "latency_ms"), "ttft")["p99"] = 1.0
		}, "latency ttft does not match"},
		{"output tokens edited", func(doc map[string]any) {
			sub(sub(point0(doc), "tokens"), "output")["mean"] = 1.0
		}, "output tokens do not match"},
		{"prompt lengths asked without their histogram", func(doc map[string]any) {
			sub(point0(doc), "tokens")["prompt_asked"] = map[string]any{"count": 11, "mean": 10}
		}, "prompt tokens asked summarized without their histogram"},
		{"prompt lengths asked unlike their histogram", func(doc map[string]any) {
			p := point0(doc)
			sub(p, "histograms")["prompt_tokens_asked"] = sub(p, "histograms")["prompt_tokens"]
			sub(p, "tokens")["prompt_asked"] = map[string]any{"count": 11, "mean": 10}
		}, "prompt tokens asked do not match"},
		{"more gaps spread than there are", func(doc map[string]any) {
			tk := sub(point0(doc), "tokens")
			tk["chunk_gaps"], tk["spread_gaps"] = 10, 11
		}, "11 spread of 10 chunk gaps"},
		{"empty kinds of no such kind", func(doc map[string]any) {
			tk := sub(point0(doc), "tokens")
			tk["empty_answers"] = 1
			tk["empty_kinds"] = map[string]any{"\u202eend_token": 1}
		}, `empty_kinds["\u202eend_token"]`},
		{"empty kinds that do not sum to the empty answers", func(doc map[string]any) {
			tk := sub(point0(doc), "tokens")
			tk["empty_answers"] = 3
			tk["empty_kinds"] = map[string]any{"end_token": 1, "length": 1}
		}, "empty_kinds sum to 2 against 3"},
		{"more finishes than answers", func(doc map[string]any) {
			sub(point0(doc), "tokens")["finish"] = map[string]any{"length": 1000000}
		}, `finish["length"] is 1000000`},
		{"finish counts that wrap around to pass", func(doc map[string]any) {
			sub(point0(doc), "tokens")["finish"] = map[string]any{"length": int64(math.MaxInt64), "stop": int64(math.MaxInt64), "end_token": 3}
		}, "tokens.finish["},
		{"negative mismatch kind", func(doc map[string]any) {
			sub(point0(doc), "tokens")["output_mismatch_kinds"] = map[string]any{"stop_sequence": -4}
		}, `output_mismatch_kinds["stop_sequence"] is -4`},
		{"label of another rate (M8)", func(doc map[string]any) {
			point0(doc)["rate"] = 64
		}, "label rate=2 with rate 64"},
		{"shard count 2e9 (F5)", func(doc map[string]any) {
			doc["shard"] = map[string]any{"index": 0, "count": 2000000000, "started": "2026-12-02T16:00:00Z", "finished": "2026-12-02T16:00:00Z"}
		}, "index 0 of 2000000000"},
		{"negative telemetry (M5)", func(doc map[string]any) {
			point0(doc)["telemetry"] = map[string]any{"dcgm.power_mean_w": -700}
		}, "telemetry dcgm.power_mean_w = -700"},
		{"negative capacity", func(doc map[string]any) {
			doc["capacity"] = map[string]any{"rate": -14.5, "bound": "bracketed", "probes": 5}
		}, "capacity: figure -14.5"},
		{"capacity cost forged", func(doc map[string]any) {
			doc["capacity"] = map[string]any{"rate": 14.5, "bound": "bracketed", "probes": 5, "offered": 12, "cost": map[string]any{"usd_per_m_output_tokens": -1}}
		}, "capacity: cost -1"},
		{"a server's wait for a CPU below zero", func(doc map[string]any) {
			point0(doc)["validity"] = map[string]any{"stall_ms": 0, "max_stall_ms": 0, "server": map[string]any{"pid": 1, "processes": 1, "stopped_ms": 0, "cpu_ms": 100, "wait_ms": -1e9}}
		}, "validity: figure -1e+09"},
		{"a stall of no size", func(doc map[string]any) {
			point0(doc)["validity"] = map[string]any{"stall_ms": -5, "max_stall_ms": 0}
		}, "validity: figure -5"},
		{"a simulated profile's attention at a negative price", func(doc map[string]any) {
			sub(doc, "target")["sim_profile"] = map[string]any{"name": "x", "attend_ns_per_pair": -1e9}
		}, "target.sim_profile.attend_ns_per_pair -1e+09"},
		{"a simulated profile's request path of days", func(doc map[string]any) {
			sub(doc, "target")["sim_profile"] = map[string]any{"name": "x", "request_overhead_ms": 1e9}
		}, "target.sim_profile.request_overhead_ms 1e+09"},
		{"a simulated profile's step wrapped negative", func(doc map[string]any) {
			sub(doc, "target")["sim_profile"] = map[string]any{"name": "x", "step_base_ms": -9223372036852.625}
		}, "target.sim_profile.step_base_ms -9.223372036852625e+12"},
		{"a simulated profile's prompt token of years", func(doc map[string]any) {
			sub(doc, "target")["sim_profile"] = map[string]any{"name": "x", "step_base_ms": 1, "prefill_per_token_ms": 5e12}
		}, "target.sim_profile.prefill_per_token_ms 5e+12"},
		{"a simulated profile's interval x1000", func(doc map[string]any) {
			sub(doc, "target")["sim_profile"] = map[string]any{"name": "x", "interval": map[string]any{"level": 0.8, "latency": []any{0.7, 1500}, "throughput": []any{0.6, 1.1}}}
		}, "target.sim_profile.interval: bounds 0.7–1500"},
		{"requests counted past 2^40, and their tokens lost to match", func(doc map[string]any) {
			p := point0(doc)
			r := sub(p, "requests")
			r["sent"], r["completed"] = int64(1)<<62, int64(1)<<62
			sub(p, "tokens")["out_of_range"] = int64(1) << 62
		}, "is 4611686018427387904: want 0 to 1099511627776"},
		{"error kinds that wrap around to the failures", func(doc map[string]any) {
			sub(point0(doc), "requests")["errors"] = map[string]any{"a": int64(math.MaxInt64), "b": int64(math.MaxInt64), "c": 2}
		}, "is 9223372036854775807"},
		{"a schedule's rate of -1e308, which no other check reads", func(doc map[string]any) {
			sub(point0(doc), "schedule")["send_rate"] = -1e308
		}, "points[0].schedule.send_rate is -1e+308"},
		{"structured answers checked -1 times", func(doc map[string]any) {
			point0(doc)["structured"] = map[string]any{"checked": -1, "correct": 5, "rate": 1}
		}, "points[0].structured.checked is -1"},
		{"a run that finished before it started", func(doc map[string]any) {
			doc["finished"] = "1970-01-01T00:00:00Z"
		}, "the run finished at 1970-01-01T00:00:00Z, before it started"},
		{"latencies below zero where no histogram checks them", func(doc map[string]any) {
			ttft := withoutHistograms(doc)["ttft"].(map[string]any)
			for _, k := range []string{"min", "mean", "p50", "p90", "p95", "p99", "p99.9", "max"} {
				ttft[k] = -5.0
			}
		}, "latency ttft: a figure of -5"},
		{"a latency of 1e308 ms where no histogram checks it", func(doc map[string]any) {
			withoutHistograms(doc)["e2e"].(map[string]any)["max"] = 1e308
		}, "latency e2e: a figure of 1e+308"},
		{"a P99 below the P90 where no histogram checks it", func(doc map[string]any) {
			withoutHistograms(doc)["tpot"].(map[string]any)["p99"] = 0.001
		}, "latency tpot: quantiles out of order"},
		{"a mean outside the figures where no histogram checks it", func(doc map[string]any) {
			withoutHistograms(doc)["itl"].(map[string]any)["mean"] = 1e9
		}, "latency itl: mean 1e+09 outside"},
		{"a simulated profile's interval of no level", func(doc map[string]any) {
			sub(doc, "target")["sim_profile"] = map[string]any{"name": "x", "interval": map[string]any{"latency": []any{0.7, 1.5}, "throughput": []any{0.6, 1.1}}}
		}, "target.sim_profile.interval: level 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := committedResult(t)
			if _, err := Parse(mustJSON(t, doc)); err != nil {
				t.Fatalf("the committed result: %v", err)
			}
			tc.edit(doc)
			_, err := Parse(mustJSON(t, doc))
			if !errors.Is(err, ErrInconsistent) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse = %v, want ErrInconsistent saying %q", err, tc.want)
			}
		})
	}
}

// Merging needs every summary's histogram: a shard stripped of them would
// give a point whose counts and percentiles come from different requests.
func TestVerifyHistogramsRefusesStrippedHistograms(t *testing.T) {
	doc := committedResult(t)
	delete(point0(doc), "histograms")
	f, err := Parse(mustJSON(t, doc))
	if err != nil {
		t.Fatalf("Parse = %v; files are not held to every histogram (v1 kept some)", err)
	}
	if err := f.VerifyHistograms(); !errors.Is(err, ErrInconsistent) {
		t.Fatalf("VerifyHistograms = %v, want ErrInconsistent", err)
	}
}

func TestReadRefusesHostileFiles(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: the size is refused before a byte is read.
	if err := f.Truncate(MaxFileBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, path := range []string{big, "/dev/zero", dir} {
		if _, err := Read(path); err == nil {
			t.Errorf("Read(%s) accepted it", path)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A file of many tiny histograms would take minutes to verify: their
// number is bounded, and only the names benchci records are read.
func TestVerifyBoundsHistograms(t *testing.T) {
	doc := committedResult(t)
	hs := sub(point0(doc), "histograms")
	hs["mine"] = hs["ttft"]
	if _, err := Parse(mustJSON(t, doc)); !errors.Is(err, ErrInconsistent) || !strings.Contains(err.Error(), `"mine"`) {
		t.Errorf("an unknown histogram: %v", err)
	}
	doc = committedResult(t)
	pts := doc["points"].([]any)
	for len(pts) <= MaxPoints {
		pts = append(pts, pts[0])
	}
	doc["points"] = pts
	// Refused by the file's shape, before a point is decoded.
	if _, err := Parse(mustJSON(t, doc)); !errors.Is(err, inputfile.ErrTooLarge) || !strings.Contains(err.Error(), "5000 points") {
		t.Errorf("%d points: %v", len(pts), err)
	}
}

// N3: a histogram of a layout benchci never records (here 1..2^40 at 4
// digits) is refused from its header, before its buckets are allocated.
func TestDecodeHistogramRefusesForeignLayouts(t *testing.T) {
	h := hdrhistogram.New(1, 1<<40, 4)
	h.RecordValue(1000)
	enc, err := EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeHistogram(enc); err == nil || !strings.Contains(err.Error(), "never records") {
		t.Fatalf("DecodeHistogram = %v, want a refusal of the layout", err)
	}
	ok := hdrhistogram.New(1, 3_600_000_000, 3)
	ok.RecordValue(1000)
	enc, _ = EncodeHistogram(ok)
	if _, err := DecodeHistogram(enc); err != nil {
		t.Fatalf("benchci's own layout: %v", err)
	}
}

// A point's validity record cannot be deleted from a file written since
// the record: the file would read as valid and could become a baseline.
// Files from before it (the committed v1 file) keep reading.
func TestVerifyRequiresValidityRecord(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "baselines", "quickstart.json"))
	if err != nil {
		t.Fatal(err)
	}
	var b struct {
		Result map[string]any `json:"result"`
	}
	if err := json.Unmarshal(data, &b); err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(mustJSON(t, b.Result)); err != nil {
		t.Fatalf("the committed baseline's result: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(doc map[string]any)
		ok   bool
	}{
		{"validity deleted", func(doc map[string]any) { delete(point0(doc), "validity") }, false},
		{"validity and figures deleted", func(doc map[string]any) {
			delete(point0(doc), "validity")
			delete(doc, "figures")
		}, false},
		{"validity and figures deleted, backdated", func(doc map[string]any) {
			delete(point0(doc), "validity")
			delete(doc, "figures")
			doc["started"] = "2026-12-01T00:00:00Z"
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var doc map[string]any
			if err := json.Unmarshal(mustJSON(t, b.Result), &doc); err != nil {
				t.Fatal(err)
			}
			tc.edit(doc)
			_, err := Parse(mustJSON(t, doc))
			if tc.ok != (err == nil) {
				t.Fatalf("Parse: %v, want ok %v", err, tc.ok)
			}
			if err != nil && (!errors.Is(err, ErrInconsistent) || !strings.Contains(err.Error(), "no validity record")) {
				t.Errorf("error %q", err)
			}
		})
	}
	v1 := committedResult(t)
	if _, err := Parse(mustJSON(t, v1)); err != nil {
		t.Errorf("a v1 file without validity records: %v", err)
	}
}

// A partial verification decodes only the histograms it names, checks
// their summaries as Verify does, and leaves the file unverified, so that
// VerifyHistograms still verifies it whole; a canceled context stops it.
func TestVerifyWithChecksTheNamedHistograms(t *testing.T) {
	doc := committedResult(t)
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	ttft := map[string]bool{}
	for _, p := range doc["points"].([]any) {
		ttft[p.(map[string]any)["histograms"].(map[string]any)["ttft"].(string)] = true
	}
	decoded, others := 0, 0
	o := VerifyOptions{
		Histograms: func(name string) bool { return name == "ttft" },
		Summarize: func(enc string, scale float64) (Summary, error) {
			h, err := DecodeHistogram(enc)
			if err != nil {
				return Summary{}, err
			}
			if ttft[enc] {
				decoded++
			} else {
				others++
			}
			return Summarize(h, scale), nil
		},
	}
	f, err := ParseWith(data, o)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(doc["points"].([]any)); decoded != n || others != 0 || f.verified {
		t.Errorf("decoded %d TTFT histograms and %d others, verified %v: want the %d points' TTFT alone, and the file not verified", decoded, others, f.verified, n)
	}
	if err := f.VerifyHistograms(); err != nil || !f.verified {
		t.Errorf("whole verification after a partial one: %v", err)
	}

	// A forged TTFT summary is refused; a forged summary the options do
	// not name is not checked against its histogram (the reader must not
	// show it). This one is in order, so it passes as a summary.
	sub(sub(point0(doc), "latency_ms"), "ttft")["p99"] = 110.0
	forged, _ := json.Marshal(doc)
	if _, err := ParseWith(forged, o); !errors.Is(err, ErrInconsistent) {
		t.Errorf("forged ttft: %v", err)
	}
	o.Histograms = func(name string) bool { return name == "e2e" }
	if _, err := ParseWith(forged, o); err != nil {
		t.Errorf("forged ttft, e2e checked: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	o.Context = ctx
	if _, err := ParseWith(data, o); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
}

// The process's memo of verified histograms keys on the scale too: one
// histogram read as milliseconds and as counts gives two summaries.
func TestVerifyMemoKeysOnScale(t *testing.T) {
	h := hdrhistogram.New(1, 3_600_000_000, 3)
	for v := int64(1000); v < 100_000; v += 997 {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	var o *VerifyOptions
	for range 2 { // the second read comes from the memo
		ms, err := o.summarize(enc, 1000)
		if err != nil {
			t.Fatal(err)
		}
		n, err := o.summarize(enc, 1)
		if err != nil {
			t.Fatal(err)
		}
		if want := Summarize(h, 1000); ms != want || n.P99 != 1000*ms.P99 || n != Summarize(h, 1) {
			t.Fatalf("ms %+v, counts %+v, want %+v", ms, n, want)
		}
	}
}

// withoutHistograms strips the first point of its histograms (and the
// asked prompt lengths, which need theirs), as a file measured without
// them has, and returns its latency summaries.
func withoutHistograms(doc map[string]any) map[string]any {
	p := point0(doc)
	p["histograms"] = map[string]any{}
	delete(sub(p, "tokens"), "prompt_asked")
	return sub(p, "latency_ms")
}

// Gauges a suite names are in their own units: 2 TB of memory in bytes
// reads (the bound on every other number does not apply to them).
func TestVerifyKeepsLargeGauges(t *testing.T) {
	doc := committedResult(t)
	point0(doc)["telemetry"] = map[string]any{"node.node_memory_MemTotal_bytes_mean": 2.2e12}
	if _, err := Parse(mustJSON(t, doc)); err != nil {
		t.Fatal(err)
	}
}

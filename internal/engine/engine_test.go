package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchci/benchci/internal/sim"
)

func TestParseAndFigures(t *testing.T) {
	t.Parallel()
	page := func(queueSum, queueCount, running, tokens float64) Snapshot {
		text := strings.NewReplacer("QS", f(queueSum), "QC", f(queueCount), "RUN", f(running), "TOK", f(tokens)).Replace(`# HELP vllm:num_requests_running Number of requests running.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="m"} RUN
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{model_name="m"} TOK
# TYPE vllm:request_queue_time_seconds histogram
vllm:request_queue_time_seconds_bucket{model_name="m",le="0.1"} QC
vllm:request_queue_time_seconds_bucket{model_name="m",le="+Inf"} QC
vllm:request_queue_time_seconds_sum{model_name="m"} QS
vllm:request_queue_time_seconds_count{model_name="m"} QC
`)
		s, err := Parse(strings.NewReader(text))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	got := Figures([]Snapshot{page(10, 100, 2, 1000), page(12, 110, 9, 1500), page(14, 120, 0, 2000)})
	want := map[string]float64{"queue_time_mean_s": 0.2, "running_peak": 9, "generation_tokens": 1000}
	for k, v := range want {
		if d := got[k] - v; d > 1e-9 || d < -1e-9 {
			t.Errorf("%s = %v, want %v (all %v)", k, got[k], v, got)
		}
	}
	if _, err := Parse(strings.NewReader("not { prometheus")); err == nil {
		t.Error("garbage parsed")
	}
}

func f(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func TestDetect(t *testing.T) {
	t.Parallel()
	ollama := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/version" {
			io.WriteString(w, `{"version":"0.6.5"}`)
			return
		}
		http.NotFound(w, r)
	}))
	defer ollama.Close()
	if got := Detect(context.Background(), ollama.URL); got.Name != "ollama" || got.Version != "0.6.5" || got.Metrics {
		t.Errorf("ollama detected as %+v", got)
	}
	p, _ := sim.Lookup("tiny")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	u, err := sim.New(p).Listen(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if got := Detect(ctx, u); got.Name != "benchci-sim" || !got.Metrics {
		t.Errorf("the simulator detected as %+v", got)
	}
	snap, err := Scrape(ctx, u)
	if err != nil || snap["vllm:num_requests_running"] != 0 {
		t.Errorf("scrape %v %v", snap, err)
	}
}

// FuzzParse feeds arbitrary /metrics text: no panic, and no value that
// cannot be written into a results file (NaN, ±Inf) gets through, into a
// snapshot or into a point's figures.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"vllm:num_preemptions_total NaN\n",
		"# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model=\"m\"} +Inf\n",
		"# TYPE vllm:request_queue_time_seconds histogram\nvllm:request_queue_time_seconds_sum 1.5\nvllm:request_queue_time_seconds_count 3\nvllm:request_queue_time_seconds_bucket{le=\"+Inf\"} 3\n",
		"vllm:generation_tokens_total 1.7976931348623157e308\nvllm:generation_tokens_total{a=\"b\"} 1.7976931348623157e308\n",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s, err := Parse(strings.NewReader(text))
		if err != nil {
			return
		}
		for k, v := range s {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("snapshot %s = %v", k, v)
			}
		}
		for k, v := range Figures([]Snapshot{{}, s, s}) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("figure %s = %v", k, v)
			}
		}
		if _, err := json.Marshal(Figures([]Snapshot{s, {}})); err != nil {
			t.Fatalf("figures cannot be written: %v", err)
		}
	})
}

// llamaPage is llama-server's /metrics (with --metrics) as it reads.
func llamaPage(prompt, promptSec, predicted, predictedSec, processing, deferred, kv float64) Snapshot {
	text := fmt.Sprintf(`# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed.
# TYPE llamacpp:prompt_tokens_total counter
llamacpp:prompt_tokens_total %v
# HELP llamacpp:prompt_seconds_total Prompt process time
# TYPE llamacpp:prompt_seconds_total counter
llamacpp:prompt_seconds_total %v
# HELP llamacpp:tokens_predicted_total Number of generation tokens processed.
# TYPE llamacpp:tokens_predicted_total counter
llamacpp:tokens_predicted_total %v
# HELP llamacpp:tokens_predicted_seconds_total Predict process time
# TYPE llamacpp:tokens_predicted_seconds_total counter
llamacpp:tokens_predicted_seconds_total %v
# HELP llamacpp:prompt_tokens_seconds Average prompt throughput in tokens/s.
# TYPE llamacpp:prompt_tokens_seconds gauge
llamacpp:prompt_tokens_seconds 1234.5
# HELP llamacpp:requests_processing Number of requests processing.
# TYPE llamacpp:requests_processing gauge
llamacpp:requests_processing %v
# HELP llamacpp:requests_deferred Number of requests deferred.
# TYPE llamacpp:requests_deferred gauge
llamacpp:requests_deferred %v
# HELP llamacpp:kv_cache_usage_ratio KV-cache usage. 1 means 100 percent usage.
# TYPE llamacpp:kv_cache_usage_ratio gauge
llamacpp:kv_cache_usage_ratio %v
# HELP llamacpp:kv_cache_tokens KV-cache tokens.
# TYPE llamacpp:kv_cache_tokens gauge
llamacpp:kv_cache_tokens 512
`, prompt, promptSec, predicted, predictedSec, processing, deferred, kv)
	s, err := Parse(strings.NewReader(text))
	if err != nil {
		panic(err)
	}
	return s
}

func TestLlamaCppFigures(t *testing.T) {
	t.Parallel()
	before := llamaPage(1000, 2, 500, 10, 0, 0, 0)
	during := llamaPage(1500, 2.5, 900, 15, 4, 3, 0.75)
	after := llamaPage(3000, 4, 2500, 30, 1, 0, 0.5)
	got := Figures([]Snapshot{before, during, after})
	want := map[string]float64{
		"running_peak": 4, "waiting_peak": 3, "kv_cache_usage_peak": 0.75, "kv_cache_tokens_peak": 512,
		"prompt_tokens": 2000, "generation_tokens": 2000,
		"server_prompt_tok_per_s": 1000, "server_decode_tok_per_s": 100,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("figures %v\nwant %v", got, want)
	}
	if !Known(after) || Known(Snapshot{"process_cpu_seconds_total": 1, "myserver:queue": 2}) {
		t.Error("Known misjudged which snapshots hold known names")
	}
}

// Placeholder versions (a build without version information) are recorded
// as unknown, not as a version to compare.
func TestDetectPlaceholderVersion(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/props" {
			io.WriteString(w, `{"build_info":"b0-unknown"}`)
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	info := Detect(context.Background(), srv.URL)
	if info.Name != "llama.cpp" || info.Version != "" || info.Placeholder != "b0-unknown" {
		t.Errorf("detected %+v", info)
	}
}

// The prefix cache's hit rate over a point is the hits counted in it over
// the tokens looked up in it, under vLLM V1's names or V0's.
func TestPrefixCacheHitRate(t *testing.T) {
	t.Parallel()
	for _, prefix := range []string{"vllm:prefix_cache", "vllm:gpu_prefix_cache"} {
		snap := func(queries, hits float64) Snapshot {
			s, err := Parse(strings.NewReader(prefix + "_queries_total " + f(queries) + "\n" + prefix + "_hits_total " + f(hits) + "\n"))
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		got := Figures([]Snapshot{snap(1000, 100), snap(2000, 500), snap(3000, 1100)})
		if got["prefix_cache_hit_rate"] != 0.5 {
			t.Errorf("%s: hit rate %v, want 0.5 (1000 of 2000 tokens)", prefix, got["prefix_cache_hit_rate"])
		}
	}
	// SGLang's is a gauge of its radix cache's recent hit rate: the value
	// at the point's end.
	gauge := func(v string) Snapshot {
		s, err := Parse(strings.NewReader("# TYPE sglang:cache_hit_rate gauge\nsglang:cache_hit_rate{model_name=\"m\"} " + v + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if got := Figures([]Snapshot{gauge("0.1"), gauge("0.3"), gauge("0.42")}); got["prefix_cache_hit_rate"] != 0.42 {
		t.Errorf("SGLang: hit rate %v, want 0.42", got["prefix_cache_hit_rate"])
	}
}

// Held is the client's requests in flight minus the engine's running
// gauge at the same scrape: a queue that a waiting gauge blind to it
// (llama.cpp's HTTP threads) does not show.
func TestHeld(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		snaps    []Snapshot
		inFlight []int64
		peak     float64
		n        int
	}{
		{"llama.cpp's HTTP queue", []Snapshot{
			{"llamacpp:requests_processing": 0, "llamacpp:requests_deferred": 0},
			{"llamacpp:requests_processing": 4, "llamacpp:requests_deferred": 0},
			{"llamacpp:requests_processing": 4, "llamacpp:requests_deferred": 1},
		}, []int64{0, 2980, 1500}, 2976, 3},
		{"vLLM", []Snapshot{{"vllm:num_requests_running": 8, "vllm:num_requests_waiting": 2}}, []int64{10}, 2, 1},
		{"TGI", []Snapshot{{"tgi_batch_current_size": 3}}, []int64{3}, 0, 1},
		// Another client's requests run too: the figure is smaller, never
		// below zero.
		{"others running", []Snapshot{{"sglang:num_running_reqs": 12}}, []int64{4}, 0, 1},
		{"no running gauge", []Snapshot{{"llamacpp:kv_cache_tokens": 100}}, []int64{50}, 0, 0},
		{"no count in flight", []Snapshot{{"vllm:num_requests_running": 1}}, nil, 0, 0},
	} {
		peak, n := Held(tc.snaps, tc.inFlight)
		if peak != tc.peak || n != tc.n {
			t.Errorf("%s: held %v over %d scrapes, want %v over %d", tc.name, peak, n, tc.peak, tc.n)
		}
	}
}

// The sampler reads the requests in flight before and after each scrape
// and keeps the fewer: a request that ended during the scrape is not held.
func TestSamplerReadsInFlight(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "# TYPE llamacpp:requests_processing gauge\nllamacpp:requests_processing 2\n")
	}))
	t.Cleanup(srv.Close)
	// Reads alternate before and after a scrape: 9 then 7 for the first,
	// 3 then 5 for the second (stop's).
	reads := []int64{9, 7, 3, 5}
	var i atomic.Int64
	first := make(chan struct{})
	s := Sample(context.Background(), srv.URL, time.Hour, func() int64 {
		n := i.Add(1)
		if n == 2 {
			close(first) // the first scrape's reads are done
		}
		return reads[min(n-1, int64(len(reads)-1))]
	})
	<-first
	s.Stop() // the second scrape
	if peak, n := s.Held(); peak != 5 || n != 2 {
		t.Errorf("held %v over %d scrapes, want 7-2 = 5 over 2 (in flight %v)", peak, n, s.inFlight)
	}
}

// The server's counters count the measured window only: read again when
// the window starts, after the warm-up, the point's figures leave the
// warm-up's tokens out (once, 14,248 generation tokens stood beside the
// ~11,260 of the measured requests). Without that reading they run from
// the point's start, and FromWindow says so.
func TestSamplerLeavesWarmupOut(t *testing.T) {
	t.Parallel()
	for _, told := range []bool{true, false} {
		var tokens atomic.Int64
		scraped := make(chan struct{}, 8)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total %d\n", tokens.Load())
			scraped <- struct{}{}
		}))
		tokens.Store(100)
		s := Sample(context.Background(), srv.URL, time.Hour, nil) // no tick: only the readings asked for
		<-scraped                                                  // the point's start
		tokens.Add(200)                                            // the warm-up's requests
		if told {
			s.From(time.Now())
			<-scraped // the window's start
		}
		tokens.Add(700) // the measured requests'
		figs := s.Stop()
		want := 700.0
		if !told {
			want = 900
		}
		if figs["generation_tokens"] != want || s.FromWindow() != told {
			t.Errorf("told the window %v: generation tokens %v, from the window %v; want %v", told, figs["generation_tokens"], s.FromWindow(), want)
		}
		srv.Close()
	}
}

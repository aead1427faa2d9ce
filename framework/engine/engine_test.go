package engine

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/benchci/benchci/framework/sim"
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

package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchci/benchci/internal/gitfixture"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/framework/suitefile"
	"github.com/benchci/benchci/internal/client"
	"github.com/benchci/benchci/internal/loadgen"
	"github.com/benchci/benchci/internal/tokenizer"
	"github.com/benchci/benchci/internal/words"
	"github.com/benchci/benchci/internal/workload"
)

// tokenizerServer reports prompt_tokens = overhead + perWord x words, as a
// server with another tokenizer and chat template would.
func tokenizerServer(t *testing.T, overhead, perWord float64, usage bool) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		n := 0
		for _, m := range req.Messages {
			n += words.Count(m.Content)
		}
		io.WriteString(w, `data: {"choices":[{"delta":{"content":"x"}}]}`+"\n\n")
		if usage {
			fmt.Fprintf(w, `data: {"choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":1}}`+"\n\n", int(overhead+perWord*float64(n)+0.5))
		}
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestCalibrate(t *testing.T) {
	t.Parallel()
	srv := tokenizerServer(t, 11, 1.25, true)
	cl, err := client.New(client.Options{BaseURL: srv.URL, API: "chat", Model: "m", Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	c, err := calibrate(context.Background(), cl, loadgen.RetryPolicy{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Overhead < 10.5 || c.Overhead > 11.5 || c.TokensPerWord < 1.249 || c.TokensPerWord > 1.251 {
		t.Errorf("calibration %+v, want overhead 11 and 1.25 tokens per word", c)
	}

	// Sized by the calibration, prompts land within 2% of their targets on
	// this server (within one token: rounding to whole words).
	cal := workload.Calibration{Overhead: c.Overhead, TokensPerWord: c.TokensPerWord}
	for _, target := range []int{32, 128, 512, 4000} {
		got := 11 + 1.25*float64(cal.Words(target, true))
		if err := got/float64(target) - 1; err > 0.02 || err < -0.02 {
			t.Errorf("target %d tokens: server counts %.1f (%.1f%%)", target, got, 100*err)
		}
	}

	quiet := tokenizerServer(t, 0, 1, false)
	cl2, _ := client.New(client.Options{BaseURL: quiet.URL, API: "chat", Model: "m", Timeout: 5 * time.Second})
	if _, err := calibrate(context.Background(), cl2, loadgen.RetryPolicy{}); err == nil || !strings.Contains(err.Error(), "no usage") {
		t.Errorf("server without usage: %v", err)
	}
}

// TestExampleSuitesRun runs every suite in suites/ on the simulator, with
// its sweep cut to two short points (or a short capacity search), so the
// examples stay runnable as the code changes. A suite whose point is what
// travels on the wire (images, adapters' names), or that a
// virtual run cannot honour, runs in real time; the rest are replayed in
// virtual time, as run --virtual does: the same plan, workload and
// figures, without real seconds of load (the real path is every other
// test's), which took two minutes of this package's time.
func TestExampleSuitesRun(t *testing.T) {
	onTheWire := map[string]bool{"multimodal.jsonnet": true, "lora-mix.jsonnet": true}
	all, err := filepath.Glob("../../suites/*.jsonnet")
	// The project's own: not a suite a reader of a guide wrote beside them
	// (it may launch an engine this machine lacks).
	tracked := gitfixture.Tracked(t, "../../suites")
	var paths []string
	for _, p := range all {
		if tracked(filepath.Base(p)) {
			paths = append(paths, p)
		}
	}
	if err != nil || len(paths) < 7 {
		t.Fatalf("suites: %v %v", paths, err)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel() // no timing is asserted: a smoke test
			l, err := suitefile.Load(path, suitefile.Options{Known: Known()})
			if err != nil {
				t.Fatal(err)
			}
			sw := &l.Suite.Sweep
			sw.Duration, sw.Warmup = suite.Duration(time.Second), suite.Duration(200*time.Millisecond)
			if len(sw.Rates) > 2 {
				sw.Rates = sw.Rates[:2]
			}
			if len(sw.Concurrencies) > 2 {
				sw.Concurrencies = sw.Concurrencies[:2]
			}
			if sw.Kind == "capacity" {
				sw.Min, sw.Max, sw.Precision = 1, 4, 0.5
				sw.Duration = max(sw.Duration, suite.Duration(3*time.Second)) // a few requests at 1 req/s
			}
			// Long enough for a few requests at the lowest rate.
			for _, r := range sw.Rates {
				sw.Duration = max(sw.Duration, suite.Duration(float64(6*time.Second)/r))
			}
			l.Suite.Workload.Prompts.ThinkTime = suite.Duration(100 * time.Millisecond)
			// SLOs tied to a point that was cut are dropped.
			var slos []suite.SLO
			for _, s := range l.Suite.SLOs {
				if (s.AtRate == 0 || slices.Contains(sw.Rates, s.AtRate)) && (s.AtConcurrency == 0 || slices.Contains(sw.Concurrencies, s.AtConcurrency)) {
					slos = append(slos, s)
				}
			}
			l.Suite.SLOs = slos
			// A suite with variants runs each (its first two, to stay short).
			vs := l.Variants()
			opts := Options{Version: "test"}
			opts.Virtual = !onTheWire[filepath.Base(path)] && VirtualRefusal(l.Suite, opts) == nil
			files, errs := RunVariants(context.Background(), inputsOf(vs[:min(2, len(vs))]), l.Suite.Order, "test", func(int) Options { return opts })
			for i, f := range files {
				if errs[i] != nil {
					t.Fatal(errs[i])
				}
				if len(f.Points) == 0 || f.Incomplete || f.Virtual != opts.Virtual {
					t.Fatalf("%s: %d points, incomplete %v, virtual %v (want %v)", f.Suite.Name, len(f.Points), f.Incomplete, f.Virtual, opts.Virtual)
				}
				for _, p := range f.Points {
					if p.Requests.Sent == 0 || p.Requests.Failed > 0 {
						t.Errorf("%s %s: requests %+v", f.Suite.Name, p.Label, p.Requests)
					}
				}
			}
		})
	}
}

func TestAutoSweep(t *testing.T) {
	src := `local b = import 'benchci.libsonnet';
b.suite {
  name: 'auto',
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(20), arrival: b.arrival.constant() },
  sweep: b.sweep.auto(points=3, duration='1s', warmup='200ms', max_concurrency=16),
}`
	f := runSource(t, "auto.jsonnet", src)
	if len(f.Points) != 5 || f.Points[0].Concurrency != 1 || f.Points[1].Concurrency != 16 {
		t.Fatalf("points %d: %+v", len(f.Points), f.Points)
	}
	lo, hi := f.Points[0].Throughput.Requests, f.Points[1].Throughput.Requests
	rates := []float64{f.Points[2].Rate, f.Points[3].Rate, f.Points[4].Rate}
	// The rates span the synchronous to the maximum throughput, evenly.
	if !(lo < hi) || math.Abs(rates[0]-lo) > 0.01*lo || math.Abs(rates[2]-hi) > 0.01*hi || math.Abs(rates[1]-(lo+hi)/2) > 0.01*hi {
		t.Errorf("sync %.1f, max %.1f req/s, rates %v", lo, hi, rates)
	}
}

// TestOfflineTokenizer runs against a server that reports no usage: the
// suite's tokenizer sizes the prompts and counts the output.
func TestOfflineTokenizer(t *testing.T) {
	var mu sync.Mutex
	var prompts []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r) // engine probes, /metrics
			return
		}
		var req struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		if len(req.Messages) == 0 {
			http.Error(w, "no messages", http.StatusBadRequest)
			return
		}
		mu.Lock()
		prompts = append(prompts, req.Messages[len(req.Messages)-1].Content)
		mu.Unlock()
		io.WriteString(w, `data: {"choices":[{"delta":{"content":"hello world"}}]}`+"\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	src := fmt.Sprintf(`local b = import 'benchci.libsonnet';
b.suite {
  name: 'offline',
  target: b.target.url('%s', model='m'),
  tokenizer: 'cl100k_base',
  workload: { input_tokens: b.dist.fixed(300), output_tokens: b.dist.fixed(2) },
  sweep: b.sweep.concurrency([2], requests=10, warmup='0s', duration='0s'),
}`, srv.URL)
	f := runSource(t, "offline.jsonnet", src)
	if f.Calibration == nil || !strings.Contains(f.Calibration.Note, "cl100k_base") {
		t.Fatalf("calibration %+v", f.Calibration)
	}
	tok, _ := tokenizer.Get("cl100k_base")
	mu.Lock()
	defer mu.Unlock()
	checked := 0
	for _, p := range prompts {
		if n := tok.Count(p); len(strings.Fields(p)) > 100 { // the benchmark's prompts, not preflight/probes
			checked++
			if n < 294 || n > 306 {
				t.Errorf("prompt of %d cl100k tokens, want 300 ±2%%", n)
			}
		}
	}
	if checked < 10 {
		t.Errorf("checked %d prompts", checked)
	}
	// "hello world" is 2 tokens in cl100k_base: the output counts match the request.
	p := f.Points[0]
	if p.Tokens.Source["counted"] != p.Requests.Completed || p.Tokens.OutputMismatch != 0 {
		t.Errorf("tokens %+v", p.Tokens)
	}
}

func TestTimingProvenance(t *testing.T) {
	tests := []struct {
		in       client.Timing
		want     string
		wantNote bool
	}{
		{client.Timing{}, "", false},
		{client.Timing{Kernel: 500}, "kernel receive stamps", false},
		{client.Timing{Kernel: 999, Read: 1}, "kernel receive stamps for 99.9% of chunks, read times for the rest", false},
		{client.Timing{Kernel: 50, Read: 50}, "kernel receive stamps for 50.0% of chunks, read times for the rest", true},
		{client.Timing{Read: 10}, "read times", true},
	}
	for _, tt := range tests {
		var f result.File
		timing(&f, tt.in)
		if f.Tool.Timing != tt.want || (len(f.Notes) > 0) != tt.wantNote {
			t.Errorf("%+v: timing %q notes %q; want %q, note %v", tt.in, f.Tool.Timing, f.Notes, tt.want, tt.wantNote)
		}
	}
}

// The fit records its probes and residuals, and refuses what it cannot
// trust: a bent line (truncation), or a negative overhead that a line
// through zero does not fit either.
func TestFitQuality(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		tokens func(words int) int
		err    string
		note   string
	}{
		{name: "linear", tokens: func(w int) int { return 11 + w*5/4 }},
		{name: "truncating", tokens: func(w int) int { return min(11+w*5/4, 100) }, err: "does the server truncate prompts?"},
		{name: "negative overhead, bent", tokens: func(w int) int { return int(1.3*float64(w)) - 5 }, err: "fitted overhead was -5.7 tokens"},
		{name: "negative overhead, near zero", tokens: func(w int) int { return int(1.3*float64(w)+0.5) - 1 }, note: "fitted through zero"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := fit(func(prompt string) (int, error) { return tc.tokens(words.Count(prompt)), nil })
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || c.TokensPerWord != 1 || len(c.Residuals) != 3 {
					t.Fatalf("fit %+v, %v; want refused with %q, residuals kept", c, err, tc.err)
				}
				return
			}
			if err != nil || !strings.Contains(c.Note, tc.note) || c.Overhead < 0 {
				t.Fatalf("fit %+v, %v", c, err)
			}
			for i, w := range c.ProbeWords {
				if got := c.Overhead + c.TokensPerWord*float64(w) + c.Residuals[i]; math.Abs(got-float64(c.ProbeTokens[i])) > 0.01 {
					t.Errorf("probe %d: fit + residual = %.2f, counted %d", w, got, c.ProbeTokens[i])
				}
			}
		})
	}
}

// Against a server that reports its own TTFT (the simulator, as vLLM
// does), each point says how much of the client's TTFT the server did
// not see. The client's clock starts before the request reaches the
// server and stops after the token leaves it, so the difference cannot
// be negative beyond the spread of identical requests' server times.
func TestOverheadAgainstServerTTFT(t *testing.T) {
	src := `local b = import 'benchci.libsonnet';
b.suite {
  name: 'overhead',
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(50), output_tokens: b.dist.fixed(4) },
  sweep: b.sweep.concurrency([1], duration='1s', warmup='0s'),
}`
	f := runSource(t, "overhead.jsonnet", src)
	p := f.Points[0]
	st, ok := p.Server["server_ttft_mean_s"]
	if !ok {
		t.Fatalf("no server TTFT; server figures %v", p.Server)
	}
	if o := p.Latency[metric.TTFT].Mean - st*1000; o < -0.5 || o > 50 {
		t.Errorf("client minus server TTFT mean %.3f ms; want at least 0 (±0.5) and a loopback's worth", o)
	} else if (o < 0) != (p.Overhead == nil) || p.Overhead != nil && p.Overhead.TTFTMeanMs != o {
		// A difference below zero is no overhead: it is named in a note
		// (TestServerOverhead), never recorded negative.
		t.Errorf("difference %.3f ms recorded as overhead %+v", o, p.Overhead)
	}
}

// runSource loads a suite from source and runs it, failing the test on
// any error.
func runSource(t *testing.T, name, src string) *result.File {
	t.Helper()
	l, err := suitefile.LoadSource(name, src, suitefile.Options{Known: Known()})
	if err != nil {
		t.Fatal(err)
	}
	f, err := Run(context.Background(), inputOf(l), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return f
}
